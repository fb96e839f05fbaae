import Foundation
import QBSupport
import XCTest
@testable import QBRunner

/// Result files: written atomically (a failed or interrupted write leaves neither a result
/// nor a temporary file), read back with their schema checked, and a malformed one reported
/// with its path and line.
final class ResultsFileTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws { dir = try RunnerFixtures.temporaryDirectory("results") }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }

    struct Interrupted: Error {}

    func testAtomicWrite() throws {
        let target = dir.appendingPathComponent("r.json")
        try AtomicWriter.write(Data("one".utf8), to: target)
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "one")
        XCTAssertEqual(try contents(), ["r.json"])

        // A write that fails half way leaves the previous file as it was and no debris.
        XCTAssertThrowsError(try AtomicWriter.write(to: target) { append in
            try append(Data("half of a new ".utf8))
            throw Interrupted()
        }) { XCTAssertTrue($0 is Interrupted) }
        XCTAssertEqual(try String(contentsOf: target, encoding: .utf8), "one")
        XCTAssertEqual(try contents(), ["r.json"])

        // And with no previous file, nothing at all.
        let fresh = dir.appendingPathComponent("fresh.json")
        XCTAssertThrowsError(try AtomicWriter.write(to: fresh) { append in
            try append(Data(repeating: 7, count: 1 << 20))
            throw Interrupted()
        })
        XCTAssertEqual(try contents(), ["r.json"])

        // A folder that does not exist is an error naming the file, and leaves nothing.
        let nowhere = dir.appendingPathComponent("missing/x.json")
        XCTAssertThrowsError(try AtomicWriter.write(Data("x".utf8), to: nowhere)) { error in
            XCTAssertTrue("\(error)".contains(nowhere.path), "\(error)")
        }
        XCTAssertEqual(try contents(), ["r.json"])
    }

    func testResultsRoundTripAndPairedMarkdown() throws {
        let r = CompareTests.result(["greedy": [.decodeTokensPerSecond: [100, 110, 105], .timeToFirstToken: [0.01, 0.012, 0.011]]])
        let url = dir.appendingPathComponent("smoke.json")
        try ResultsFile.write(r, markdown: BenchReport.markdown(r), to: url)
        XCTAssertEqual(try contents(), ["smoke.json", "smoke.md"])
        let back = try ResultsFile.load(path: url.path)
        XCTAssertEqual(back.schemaVersion, 1)
        XCTAssertEqual(back.cases, r.cases)
        XCTAssertEqual(back.model, r.model)
        XCTAssertEqual(back.aggregate, r.aggregate)
        let text = try String(contentsOf: url, encoding: .utf8)
        XCTAssertTrue(text.contains("\"schema\" : \"quantbench.bench\"") || text.contains("\"schema\": \"quantbench.bench\""), text.prefix(200).description)
    }

    func write(_ text: String, _ name: String = "bad.json") throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    func testMalformedResultsNameFileAndLine() throws {
        let good = String(decoding: try ResultsFile.encode(CompareTests.result(["greedy": [.decodeTokensPerSecond: [1, 2, 3]]])), as: UTF8.self)
        let lines = good.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        func line(containing s: String) throws -> Int { try XCTUnwrap(lines.firstIndex { $0.contains(s) }) + 1 }

        // Syntax: a truncated file (an interrupted copy).
        var path = try write(String(good.prefix(good.count / 2)))
        assertLocated(path, line: nil, "not valid JSON") { _ = try ResultsFile.load(path: path) }
        // Syntax: a stray character on a known line.
        let strayLine = try line(containing: "\"created_at\"")
        var broken = lines
        broken[strayLine - 1] = broken[strayLine - 1].replacingOccurrences(of: ":", with: ": @")
        path = try write(broken.joined(separator: "\n"))
        assertLocated(path, line: strayLine, "not valid JSON") { _ = try ResultsFile.load(path: path) }
        // Empty.
        path = try write("  \n")
        assertLocated(path, line: 1, "empty") { _ = try ResultsFile.load(path: path) }
        // Another schema, or a version this build does not read.
        path = try write(good.replacingOccurrences(of: "quantbench.bench", with: "something.else"))
        assertLocated(path, line: try line(containing: "\"schema\""), "not a quantbench bench result") { _ = try ResultsFile.load(path: path) }
        path = try write(good.replacingOccurrences(of: "\"schema_version\" : 1", with: "\"schema_version\" : 99")
            .replacingOccurrences(of: "\"schema_version\": 1", with: "\"schema_version\": 99"))
        assertLocated(path, line: try line(containing: "\"schema_version\""), "schema_version 99") { _ = try ResultsFile.load(path: path) }
        // A value of the wrong type, at its own line.
        let medianLine = try line(containing: "\"median\"")
        broken = lines
        broken[medianLine - 1] = broken[medianLine - 1].replacingOccurrences(of: #"("median"\s*:\s*)[0-9.e+-]+"#, with: "$1\"fast\"", options: .regularExpression)
        path = try write(broken.joined(separator: "\n"))
        assertLocated(path, line: medianLine, "median") { _ = try ResultsFile.load(path: path) }
        // A missing field, at the line of the object that lacks it.
        let hostLine = try line(containing: "\"hostname\"")
        broken = lines
        broken.remove(at: hostLine - 1)
        path = try write(broken.joined(separator: "\n"))
        let envLine = try line(containing: "\"environment\"")
        assertLocated(path, line: envLine, "missing field 'hostname'") { _ = try ResultsFile.load(path: path) }
        // Not there at all.
        assertLocated(dir.appendingPathComponent("absent.json").path, line: nil, "cannot read") {
            _ = try ResultsFile.load(path: self.dir.appendingPathComponent("absent.json").path)
        }
    }
}
