import Foundation
import XCTest

@testable import QBText

/// Vocabularies written into GGUF by `GGUFVocabulary` and read back by `GGUFTokenizer`
/// give the ids of the files they came from.
final class GGUFExportTests: XCTestCase {
    private func roundTrip(_ tok: BPETokenizer, size: Int) throws -> any Tokenizer {
        let url = try TestSupport.temporaryDirectory(self).appendingPathComponent("vocab.gguf")
        try FixtureTokenizers.writeVocabularyGGUF(tok, modelVocabularySize: size, to: url)
        return try TokenizerFactory.open(url.path)
    }

    private func texts() throws -> [String] {
        try FixtureVectors.allTexts() + UnicodeTextGenerator.texts(count: 200, seed: 77) + TestSupport.variedTexts
    }

    func testSmolLM2() throws {
        let tok = try FixtureTokenizers.smolLM2()
        let gguf = try roundTrip(tok, size: 49152)
        XCTAssertTrue(gguf is BPETokenizer)
        XCTAssertEqual(gguf.eosTokenIDs, tok.eosTokenIDs)
        XCTAssertEqual(gguf.addsBOS, tok.addsBOS)
        for text in try texts() {
            for parse in [false, true] {
                XCTAssertEqual(gguf.encode(text, addSpecialTokens: true, parseSpecialTokens: parse), tok.encode(text, addSpecialTokens: true, parseSpecialTokens: parse), text.debugDescription)
            }
        }
    }

    /// tiktoken ranks become a merge list (Hugging Face's conversion) read with
    /// `ignore_merges`, as llama.cpp's llama-bpe: still tiktoken's ids.
    func testLlama3FromTiktoken() throws {
        let tok = try FixtureTokenizers.llama3()
        let merges = GGUFVocabulary.tiktokenMerges(tok)
        // Tokens that cannot be built from two lower-ranked ones have no merge (tiktoken
        // reaches them only whole), as in Hugging Face's conversion.
        XCTAssertGreaterThan(merges.count, 126_000)
        let gguf = try roundTrip(tok, size: 128256)
        XCTAssertTrue(gguf is BPETokenizer)
        XCTAssertEqual(gguf.bosTokenID, 128000)
        XCTAssertTrue(gguf.addsBOS)
        XCTAssertEqual(gguf.eosTokenIDs, [128001, 128008, 128009])
        for text in try texts() {
            for parse in [false, true] {
                XCTAssertEqual(gguf.encode(text, addSpecialTokens: true, parseSpecialTokens: parse), tok.encode(text, addSpecialTokens: true, parseSpecialTokens: parse), text.debugDescription)
            }
        }
    }

    /// A SentencePiece-style tokenizer.json becomes a `llama` vocabulary merged by scores.
    func testLlama2FromTokenizerJSON() throws {
        let tok = try FixtureTokenizers.llama2JSON()
        let gguf = try roundTrip(tok, size: 32000)
        XCTAssertTrue(gguf is SentencePieceTokenizer)
        for text in try texts() {
            XCTAssertEqual(gguf.encode(text, addSpecialTokens: true, parseSpecialTokens: false), tok.encode(text, addSpecialTokens: true, parseSpecialTokens: false), text.debugDescription)
        }
    }

    func testVocabularyLargerThanTheModelIsAnError() throws {
        let tok = try FixtureTokenizers.smolLM2()
        XCTAssertThrowsError(try GGUFVocabulary.metadata(bpe: tok, modelVocabularySize: 100)) { error in
            XCTAssertTrue("\(error)".hasPrefix(tok.path), "\(error)")
        }
    }
}
