import Foundation
import XCTest
import QBTestSupport
import QBKernels
import QBModel
@testable import QBRunner

/// Shared fixtures of the runner tests: the tiny synthetic model (made once per process in
/// a temporary folder, so tests never depend on the user's cache), the repository's
/// Prompts/ folder and the shared fixtures.
enum RunnerFixtures {
    static let repository = Fixtures.repository
    static let prompts = Fixtures.prompts
    static let shared = Fixtures.shared

    /// The tiny model's folder.
    static func tinyModelPath() throws -> String { try TestModels.tinyFolder(seed: 0) }

    /// The tiny model opened for benchmarking on two threads.
    static func tiny() throws -> LoadedModel {
        try LoadedModel.open(modelPath: tinyModelPath(), tokenizerPath: nil, quant: nil, threads: 2)
    }

    /// A fresh temporary folder, removed by the caller.
    static func temporaryDirectory(_ name: String) throws -> URL { try Fixtures.temporaryDirectory("runner-\(name)") }
}

extension XCTestCase {
    /// Asserts that `body` throws a `LocatedError` naming `path` and `line` whose message
    /// contains `fragment`.
    func assertLocated(
        _ path: String, line: Int?, _ fragment: String, file: StaticString = #filePath, testLine: UInt = #line,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            XCTFail("expected an error mentioning '\(fragment)'", file: file, line: testLine)
        } catch let e as LocatedError {
            XCTAssertEqual(e.path, path, "\(e)", file: file, line: testLine)
            if let line { XCTAssertEqual(e.line, line, "\(e)", file: file, line: testLine) }
            XCTAssertTrue(e.message.contains(fragment), "'\(e)' should mention '\(fragment)'", file: file, line: testLine)
            XCTAssertTrue(e.description.hasPrefix(line.map { "\(path):\($0)" } ?? path), "\(e)", file: file, line: testLine)
        } catch {
            XCTFail("expected a LocatedError, got \(error)", file: file, line: testLine)
        }
    }
}
