import Foundation
import XCTest
import QBRunner
import QBTestSupport

/// The suites compiled into the binary are Prompts/ as it is (script/embed-prompts).
final class EmbeddedPromptsTests: XCTestCase {
    func testEmbeddedFilesMatchPromptsFolder() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Fixtures.prompts.path)
            .filter { $0.hasSuffix(".yaml") || $0.hasSuffix(".txt") || $0.hasSuffix(".md") }.sorted()
        XCTAssertEqual(EmbeddedPrompts.files.keys.sorted(), names, "run script/embed-prompts")
        for name in names {
            let disk = try String(contentsOf: Fixtures.prompts.appendingPathComponent(name), encoding: .utf8)
            XCTAssertEqual(EmbeddedPrompts.files[name], disk, "\(name) differs from Prompts/\(name): run script/embed-prompts")
        }
    }

    func testBuiltInSuitesParseWithTheDiskHash() throws {
        for name in SuiteLoader.embeddedSuiteNames() {
            let disk = try SuiteLoader.load(path: Fixtures.prompts.appendingPathComponent("\(name).yaml").path)
            let text = try XCTUnwrap(EmbeddedPrompts.files["\(name).yaml"])
            let suite = try SuiteLoader.parse(text, path: "Prompts/\(name).yaml", defaultName: name, hash: disk.hash)
            XCTAssertEqual(suite.name, disk.name)
            XCTAssertEqual(suite.cases.count, disk.cases.count, name)
            XCTAssertEqual(suite.hash, disk.hash, name)
        }
        XCTAssertThrowsError(try SuiteLoader.resolve("no-such-suite")) { error in
            XCTAssertTrue("\(error)".contains("smoke"), "lists the suites: \(error)")
        }
        let script = try ChatSmokeScript.load(path: "chat-smoke")
        XCTAssertFalse(script.steps.isEmpty)
    }
}

/// The roofline inside bench results is snake_case like every other key; older files
/// (camelCase) still read.
final class RooflineKeysTests: XCTestCase {
    func testSnakeCaseWrittenAndCamelCaseRead() throws {
        let r = Roofline(
            threads: 2, readBandwidthOneThread: 1, readBandwidthAllThreads: 2, fp32GflopsOneThread: 3, fp32GflopsAllThreads: 4,
            int8GopsOneThread: 5, int8GopsAllThreads: 6, cpu: "x", measuredAt: Date(timeIntervalSince1970: 0))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        let text = String(decoding: try encoder.encode(r), as: UTF8.self)
        for key in ["read_bandwidth_all_threads_gbps", "fp32_gflops_one_thread", "int8_gops_all_threads", "measured_at", "schema_version"] {
            XCTAssertTrue(text.contains("\"\(key)\""), text)
        }
        XCTAssertFalse(text.contains("readBandwidth"), text)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        XCTAssertEqual(try decoder.decode(Roofline.self, from: Data(text.utf8)).int8GopsAllThreads, 6)
        let old = #"{"cpu":"AMD","fp32GflopsAllThreads":4,"fp32GflopsOneThread":3,"int8GopsAllThreads":6,"int8GopsOneThread":5,"measuredAt":"2026-11-21T10:15:41Z","readBandwidthAllThreads":2,"readBandwidthOneThread":1,"schemaVersion":1,"threads":2}"#
        let decoded = try decoder.decode(Roofline.self, from: Data(old.utf8))
        XCTAssertEqual(decoded.readBandwidthAllThreads, 2)
        XCTAssertEqual(decoded.threads, 2)
    }
}
