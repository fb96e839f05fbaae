import Foundation
import XCTest

/// Runs reference implementations we did not write (Python packages) and reads back
/// what they computed. A missing interpreter or package skips the test with the reason,
/// unless QB_REQUIRE_ORACLES=1 (CI), where it fails instead.
public enum Oracle {
    /// The oracle scripts of the model tests (Tests/QBOracleTests/oracles).
    public static let scripts = Fixtures.repository.appendingPathComponent("Tests/QBOracleTests/oracles")

    public static var required: Bool { ProcessInfo.processInfo.environment["QB_REQUIRE_ORACLES"] == "1" }

    /// Skips (or fails in CI) unless python3 can import every module named.
    public static func require(modules: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        let probe = try? run(["-c", "import " + modules.joined(separator: ", ")])
        if probe?.status == 0 { return }
        let why = "python3 with \(modules.joined(separator: ", ")) is not available: \(probe?.stderr.suffix(300) ?? "no python3")"
        if required { XCTFail(why, file: file, line: line); throw XCTSkip(why) }
        throw XCTSkip(why)
    }

    public struct Result: Sendable { public let status: Int32; public let stdout: String; public let stderr: String }

    @discardableResult
    public static func run(_ arguments: [String]) throws -> Result {
        let r = try TestProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + arguments)
        return Result(status: r.status, stdout: r.stdout, stderr: r.stderr)
    }

    /// Runs oracles/NAME with arguments; fails with its stderr if it exits non-zero.
    public static func script(_ name: String, _ arguments: [String]) throws -> String {
        let r = try run([scripts.appendingPathComponent(name).path] + arguments)
        guard r.status == 0 else {
            throw NSError(domain: "Oracle", code: Int(r.status), userInfo: [NSLocalizedDescriptionKey: "\(name) failed: \(r.stderr.suffix(2000))"])
        }
        return r.stdout
    }

    public static func readFloats(_ path: String) throws -> [Float] {
        let d = try Data(contentsOf: URL(fileURLWithPath: path))
        return d.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    public static func temporaryDirectory(_ name: String) throws -> URL { try Fixtures.temporaryDirectory(name) }
}

/// ‖a − b‖₂ / ‖b‖₂
public func relativeL2(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
    var num = 0.0, den = 0.0
    for (x, y) in zip(a, b) { num += Double(x - y) * Double(x - y); den += Double(y) * Double(y) }
    return (num / max(den, 1e-30)).squareRoot()
}
