import Foundation
import XCTest

@testable import QBText

/// SentencePiece's own tokenizer.model, and the GGUF vocabulary decoded by the same rules,
/// against the `sentencepiece` package on id sequences no encoder produces.
final class SentencePieceModelTests: XCTestCase {
    func testReadsTheLlama2Model() throws {
        let tok = try FixtureTokenizers.llama2Model()
        XCTAssertEqual(tok.vocabularySize, 32000)
        XCTAssertEqual(tok.type(of: 0), .unknown)
        XCTAssertEqual(tok.type(of: 1), .control)
        XCTAssertEqual(tok.type(of: 3), .byte)
        XCTAssertEqual(tok.type(of: 22172), .normal)
        XCTAssertEqual(tok.score(for: 260), -1)
        XCTAssertTrue(tok.addSpacePrefix)
        XCTAssertEqual(tok.tokenText(for: 22172), "▁hello")
    }

    /// Byte runs that are not UTF-8, a byte-token space first, control tokens anywhere:
    /// decoded as SentencePiece decodes them. (The unknown piece is left out: SentencePiece
    /// writes it as " ⁇ ", we as a special token, "<unk>" or nothing.)
    func testDecodeMatchesSentencePieceOnOddSequences() throws {
        let model = try TestSupport.fixture("llama2-tokenizer/tokenizer.model")
        let sequences: [[TokenID]] = [
            [231, 187], [231, 187, 176], [231, 187, 176, 231], [231, 187, 29874], [231, 187, 176, 176],
            [176, 231, 187, 176], [1, 22172], [29871, 22172], [35, 22172], [1, 29871, 22172], [22172, 1, 22172],
            [2], [29871], [29871, 29871], [35], [35, 35, 22172], [1, 35, 22172], [231, 187, 1, 29874],
            [], [13, 22172], [259, 22172], [1, 2, 1, 22172], [0xF0 + 3, 0x9F + 3, 0x98 + 3], [0xF0 + 3, 0x9F + 3, 0x98 + 3, 0x80 + 3, 22172],
        ]
        let response = try TestSupport.oracle(["mode": "decode", "model": model.path, "ids": sequences], script: "spm_oracle.py")
        let expected = response["texts"] as? [String] ?? []
        XCTAssertEqual(expected.count, sequences.count)
        for tok in [try FixtureTokenizers.llama2Model() as any Tokenizer, try FixtureTokenizers.llama2GGUF()] {
            for (i, ids) in sequences.enumerated() where i < expected.count {
                XCTAssertEqual(tok.decode(ids, skipSpecialTokens: true), expected[i], "\(type(of: tok)) \(ids)")
                var stream = StreamingDetokenizer(tokenizer: tok)
                XCTAssertEqual(ids.map { stream.push($0) }.joined() + stream.finish(), expected[i], "stream \(ids)")
            }
        }
    }
}
