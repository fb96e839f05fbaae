import Foundation
import QBSupport
import XCTest

@testable import QBRunner

/// #22.4: files from outside nested 100 times deeper than the limit end in a clear error,
/// not a stack overflow (libyaml, JSONDecoder and JSONSerialization recurse per level).
final class DepthLimitTests: XCTestCase {
    func testDeeplyNestedYAMLSuiteIsRefused() throws {
        for yaml in [
            "suite: deep\ncases: " + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "\n",
            "suite: deep\ncases:\n" + (0..<3_000).map { String(repeating: " ", count: $0 + 1) + "- " }.joined(separator: "\n") + "x\n",
            "suite: deep\ncases:\n" + String(repeating: "- ", count: 30_000) + "x\n",
            "suite: deep\ncases: " + String(repeating: "{a: ", count: 10_000) + "1" + String(repeating: "}", count: 10_000) + "\n",
        ] {
            XCTAssertThrowsError(try SuiteLoader.parse(yaml, path: "deep.yaml", defaultName: "deep")) { error in
                XCTAssertTrue("\(error)".contains("deep.yaml"), "\(error)")
                XCTAssertTrue("\(error)".contains("nesting deeper than"), "\(error)")
            }
        }
    }

    func testDeeplyNestedResultsJSONIsRefused() throws {
        let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertThrowsError(try ResultsFile.decode(Data(text.utf8), path: "deep.json")) { error in
            XCTAssertTrue("\(error)".contains("deep.json"), "\(error)")
            XCTAssertTrue("\(error)".contains("nesting deeper than 256 levels"), "\(error)")
        }
        let object = "{\"schema\": " + String(repeating: "{\"a\": ", count: 100_000) + "1" + String(repeating: "}", count: 100_000) + "}"
        XCTAssertThrowsError(try ResultsFile.decode(Data(object.utf8), path: "deep.json"))
    }

    func testDeeplyNestedChatHistoryIsRefused() throws {
        let line = "{\"role\": \"user\", \"content\": \"hi\", \"x\": " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + "}"
        XCTAssertThrowsError(try ChatTranscript.decode(line + "\n", path: "deep.jsonl")) { error in
            XCTAssertTrue("\(error)".contains("deep.jsonl"), "\(error)")
            XCTAssertTrue("\(error)".contains("nesting deeper than"), "\(error)")
        }
    }

    func testTheProjectsJSONReaderStopsAtItsLimit() throws {
        let text = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        XCTAssertThrowsError(try JSONReader.parse(text)) { error in
            XCTAssertTrue("\(error)".contains("nesting deeper than \(JSONReader.defaultMaximumDepth) levels"), "\(error)")
        }
        // Strings with brackets inside do not count.
        XCTAssertNoThrow(try NestingDepth.checkJSON(Array(("[\"" + String(repeating: "[", count: 1000) + "\"]").utf8)))
        XCTAssertNoThrow(try NestingDepth.checkYAML("a: '[[[[[[[[[[[[[[[[[[[['\nb: \"{{{{{{{{{{{{{\" # [[[[[[[[[[[[[[[[[[[\n"))
    }

    func testCancelPointsAndCountsHaveBounds() throws {
        let yaml = """
            suite: hostile
            cases:
              - id: c
                prompt: hi
                cancel: {during: decode, after_tokens: 9223372036854775807}
            """
        XCTAssertThrowsError(try SuiteLoader.parse(yaml, path: "c.yaml", defaultName: "c")) { error in
            XCTAssertTrue("\(error)".contains("after_tokens"), "\(error)")
            XCTAssertTrue("\(error)".contains("at most"), "\(error)")
        }
    }
}
