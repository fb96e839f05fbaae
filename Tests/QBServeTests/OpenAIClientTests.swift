import Foundation
import XCTest
import QBTestSupport

/// `quantbench serve` as a real process, driven by the `openai` Python package and raw
/// HTTP (oracles/serve_client.py): streamed equals non-streamed text, a seeded request
/// is the same alone and among 7 others, disconnects free their slots, a corpus of
/// malformed requests each gets a 4xx while the server keeps serving, SIGTERM ends a
/// stream cleanly. Skipped with the reason when python3 or openai is missing, unless
/// QB_REQUIRE_ORACLES=1.
final class OpenAIClientTests: XCTestCase {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("oracles")

    var binary: URL { TestProcess.product("quantbench") }

    func python(_ args: [String], environment: [String: String] = [:]) throws -> (status: Int32, out: String, err: String) {
        let r = try TestProcess.run(URL(fileURLWithPath: "/usr/bin/env"), ["python3"] + args, environment: environment)
        return (r.status, r.stdout, r.stderr)
    }

    func testOpenAIClientAgainstServe() throws {
        let probe = try? python(["-c", "import openai"])
        if probe?.status != 0 {
            let why = "python3 with openai is not available: \(probe?.err.suffix(300) ?? "no python3")"
            if ProcessInfo.processInfo.environment["QB_REQUIRE_ORACLES"] == "1" { XCTFail(why) }
            throw XCTSkip(why)
        }
        // The default model is made in a private cache, so concurrent runs do not race.
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("qb-serve-cache-\(getpid())")
        let r = try python(
            [Self.scripts.appendingPathComponent("serve_client.py").path, binary.path],
            environment: ["XDG_CACHE_HOME": cache.path])
        XCTAssertEqual(r.status, 0, r.err.suffix(3000).description)
        let line = r.out.split(separator: "\n").last.map(String.init) ?? ""
        let results = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
        XCTAssertEqual(results?["seeded_alone_equals_batched"] as? Bool, true)
        XCTAssertEqual(results?["stream_equals_whole"] as? Bool, true)
        XCTAssertEqual(results?["sigterm_clean"] as? Bool, true)
        XCTAssertGreaterThanOrEqual(results?["malformed"] as? Int ?? 0, 30)
        XCTAssertNotNil(results?["disconnects_allocated_growth"] as? Int, "the server's /health reports tcmalloc's allocated bytes")
        print("serve_client:", line)
    }
}
