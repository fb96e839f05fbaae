import Foundation
import XCTest

@testable import QBText

final class Llama2cTokenizerTests: XCTestCase {
    func testStories260kRoundTripOfThereWasABig() throws {
        let url = try TestSupport.fixture("stories260k/tok512.bin")
        let tok = try Llama2cTokenizer(contentsOf: url, vocabularySize: 512)
        XCTAssertEqual(tok.vocabularySize, 512)
        XCTAssertEqual(tok.bosTokenID, 1)
        XCTAssertEqual(tok.eosTokenIDs, [2])
        XCTAssertTrue(tok.addsBOS)
        let ids = tok.encode("There was a big")
        XCTAssertEqual(ids.first, 1)
        XCTAssertEqual(tok.decode(ids), "There was a big")
        // Streaming form, as run.c prints it: decode(prev, token) after the BOS.
        var streamed: [UInt8] = []
        for i in 1..<ids.count { streamed += tok.bytes(for: ids[i], after: ids[i - 1]) }
        XCTAssertEqual(String(decoding: streamed, as: UTF8.self), "There was a big")
        XCTAssertEqual(tok.encode("There was a big", bos: true, eos: true).last, 2)
        XCTAssertEqual(tok.encode("", bos: true, eos: false), [1])
        XCTAssertEqual(tok.encode("", bos: false, eos: false), [])
    }

    /// Our heap-based merge against a literal transliteration of run.c's quadratic loop.
    func testMatchesRunCTransliteration() throws {
        for (file, size) in [("stories260k/tok512.bin", 512), ("aidreams260k/tok512.bin", 512), ("llama2-tokenizer/tokenizer.bin", 32000)] {
            let url = try TestSupport.fixture(file)
            let tok = try Llama2cTokenizer(contentsOf: url, vocabularySize: size)
            let texts = TestSupport.variedTexts + TestSupport.randomTexts(count: 200, seed: 3)
            let response = try TestSupport.oracle(
                ["tokenizer": url.path, "vocab_size": size, "texts": texts, "bos": true, "eos": true],
                script: "llama2c_oracle.py")
            let expected = TestSupport.ids(response["ids"])
            let pieces = response["pieces"] as? [[[Int]]] ?? []
            XCTAssertEqual(expected.count, texts.count)
            for (i, text) in texts.enumerated() where i < expected.count {
                let ids = tok.encode(text, bos: true, eos: true)
                XCTAssertEqual(ids, expected[i], "\(file): \(text.debugDescription)")
                guard ids == expected[i], i < pieces.count else { continue }
                for k in 1..<ids.count {
                    XCTAssertEqual(tok.bytes(for: ids[k], after: ids[k - 1]).map(Int.init), pieces[i][k - 1], "\(file): piece \(k) of \(text.debugDescription)")
                }
            }
        }
    }

    /// llama2.c's Llama 2 tokenizer.bin against the Hugging Face tokenizer.json of the same
    /// vocabulary. The merge-by-score loop is SentencePiece BPE on ordinary text; harder
    /// texts are in `testLlama2MatchesHuggingFaceOnVariedAndRandomTexts`.
    func testLlama2MatchesHuggingFaceOnOrdinaryText() throws {
        let bin = try TestSupport.fixture("llama2-tokenizer/tokenizer.bin")
        let json = try TestSupport.fixture("llama2-tokenizer/tokenizer.json")
        let tok = try Llama2cTokenizer(contentsOf: bin, vocabularySize: 32000)
        let texts = [
            "Hello world",
            "Hello, world! How are you today?",
            "The quick brown fox jumps over the lazy dog.",
            "There was a big",
            "Once upon a time, there was a little girl named Lily.",
            "I'm you're he's we've they'll it'd",
            "numbers 1 12 123 1234 12345",
            "café naïve résumé Zürich",
            "Русский текст: Привет, мир!",
            "中文文本测试，包含标点。",
            "emoji 😀 and 👍🏽",
            "func encode(_ text: String) -> [Int32] { return [] }",
            "line one\nline two",
        ]
        let response = try TestSupport.oracle(["mode": "encode", "tokenizer": json.path, "texts": texts, "add_special_tokens": true, "parse_special_tokens": false])
        let expected = TestSupport.ids(response["ids"])
        XCTAssertEqual(expected.count, texts.count)
        for (i, text) in texts.enumerated() where i < expected.count {
            let ids = tok.encode(text)
            XCTAssertEqual(ids, expected[i], text.debugDescription)
            XCTAssertEqual(tok.decode(ids), text)
        }
    }

    /// The same on the varied texts (whitespace runs, scripts, emoji, control characters)
    /// and seeded random ones: llama2.c's encoder and HF's tokenizer.json agree on all of
    /// them, and a text that starts to differ is named.
    func testLlama2MatchesHuggingFaceOnVariedAndRandomTexts() throws {
        let bin = try TestSupport.fixture("llama2-tokenizer/tokenizer.bin")
        let json = try TestSupport.fixture("llama2-tokenizer/tokenizer.json")
        let tok = try Llama2cTokenizer(contentsOf: bin, vocabularySize: 32000)
        let texts = TestSupport.variedTexts + TestSupport.randomTexts(count: 300, seed: 4)
        let response = try TestSupport.oracle(["mode": "encode", "tokenizer": json.path, "texts": texts, "add_special_tokens": true, "parse_special_tokens": false])
        let expected = TestSupport.ids(response["ids"])
        XCTAssertEqual(expected.count, texts.count, "the oracle encodes every text")
        var differing: [String] = []
        for (i, text) in texts.enumerated() where i < expected.count && tok.encode(text) != expected[i] {
            differing.append(text.debugDescription)
        }
        XCTAssertEqual(differing, [], "llama2.c and HF encode \(differing.count) of \(texts.count) texts differently")
    }

    func testDecodeHandlesByteTokensUnknownIdsAndBOSStrip() throws {
        let url = try TestSupport.fixture("stories260k/tok512.bin")
        let tok = try Llama2cTokenizer(contentsOf: url, vocabularySize: 512)
        // <0x41> is id 0x41 + 3.
        XCTAssertEqual(tok.bytes(for: 0x41 + 3, after: nil), [0x41])
        XCTAssertEqual(tok.bytes(for: 0xFF + 3, after: nil), [0xFF])
        XCTAssertEqual(tok.bytes(for: -1, after: nil), [])
        XCTAssertEqual(tok.bytes(for: 512, after: nil), [])
        XCTAssertEqual(tok.bytes(for: .max, after: 1), [])
        XCTAssertEqual(tok.decode([-5, 100_000, 0xE2 + 3, 0x82 + 3]), "\u{FFFD}")
        // A space-led piece loses its space only right after BOS.
        let space = try XCTUnwrap((0..<512).first { (tok.piece(for: TokenID($0)) ?? []).starts(with: [0x20, 0x61]) })
        let piece = try XCTUnwrap(tok.piece(for: TokenID(space)))
        XCTAssertEqual(tok.bytes(for: TokenID(space), after: 1), Array(piece.dropFirst()))
        XCTAssertEqual(tok.bytes(for: TokenID(space), after: 5), piece)
        XCTAssertTrue(tok.isSpecial(1))
        XCTAssertFalse(tok.isSpecial(300))
        // Characters outside the 512 vocabulary fall back to their bytes and round-trip.
        let text = "Zürich 東京 👍🏽"
        XCTAssertEqual(tok.decode(tok.encode(text)), text)
    }
}
