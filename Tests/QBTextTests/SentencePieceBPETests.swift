import Foundation
import XCTest

@testable import QBText

/// Llama 2's tokenizer.json: SentencePiece-style BPE (Prepend/Replace normalizer, no
/// pre-tokenizer, byte fallback, Replace/ByteFallback/Fuse/Strip decoder) against the
/// `tokenizers` package.
final class SentencePieceBPETests: XCTestCase {
    static let specialTexts = [
        "<s>hello", "hello<s>world", "hello <s> world", "<s> hello", "a</s>", "<unk>", "x <unk> y </s>",
        "<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST]", " <s>", "<s><s>",
    ]

    static func llama2() throws -> (BPETokenizer, URL) {
        let url = try TestSupport.fixture("llama2-tokenizer/tokenizer.json")
        return (try BPETokenizer(contentsOf: url), url)
    }

    func testLoadsAsSentencePiece() throws {
        let (tok, _) = try Self.llama2()
        XCTAssertEqual(tok.kind, .sentencePiece)
        XCTAssertEqual(tok.vocabularySize, 32000)
        XCTAssertEqual(tok.bosTokenID, 1)
        XCTAssertTrue(tok.addsBOS)
        XCTAssertFalse(tok.addsEOS)
        XCTAssertEqual(tok.eosTokenIDs, [2])
        XCTAssertEqual(tok.prefixIDs, [1])
        XCTAssertTrue(tok.isSpecial(1))
        XCTAssertEqual(tok.tokenText(for: 22172), "▁hello")
        XCTAssertEqual(tok.encode("hello world"), [1, 22172, 3186])
        XCTAssertEqual(tok.decode([1, 22172, 3186]), "<s> hello world")
        XCTAssertEqual(tok.decode([1, 22172, 3186], skipSpecialTokens: true), "hello world")
    }

    func testMatchesHuggingFace() throws {
        let (tok, url) = try Self.llama2()
        let texts = TestSupport.variedTexts + Self.specialTexts
        try OracleComparison.hf(tok, url, texts, addSpecialTokens: true, parseSpecialTokens: true)
        try OracleComparison.hf(tok, url, texts, addSpecialTokens: false, parseSpecialTokens: false)
    }

    func testMatchesHuggingFaceOnRandomTexts() throws {
        let (tok, url) = try Self.llama2()
        let texts = TestSupport.randomTexts(count: 300, seed: 11)
        try OracleComparison.hf(tok, url, texts, addSpecialTokens: true, parseSpecialTokens: true)
        try OracleComparison.hf(tok, url, texts, addSpecialTokens: false, parseSpecialTokens: false)
    }

    /// Decoding of id sequences no encoder produces: byte runs that are not UTF-8, spaces
    /// from byte tokens first, special tokens anywhere.
    func testDecodeMatchesHuggingFaceOnOddSequences() throws {
        let (tok, url) = try Self.llama2()
        let sequences: [[TokenID]] = [
            [231, 187], [231, 187, 176], [231, 187, 176, 231], [231, 187, 29874], [231, 187, 176, 176],
            [176, 231, 187, 176], [1, 22172], [29871, 22172], [35, 22172], [1, 29871, 22172], [22172, 1, 22172],
            [0, 22172], [2], [29871], [29871, 29871], [35], [35, 35, 22172], [1, 35, 22172], [231, 187, 1, 29874],
            [], [40000, 22172], [13, 22172], [259, 22172],
        ]
        let response = try TestSupport.oracle(["mode": "decode", "tokenizer": url.path, "ids": sequences, "skip_special_tokens": false])
        let expected = response["texts"] as? [String] ?? []
        XCTAssertEqual(expected.count, sequences.count)
        for (i, ids) in sequences.enumerated() where i < expected.count {
            XCTAssertEqual(tok.decode(ids), expected[i], "\(ids)")
        }
        XCTAssertEqual(tok.decode([-1, 22172, .max]), "hello")
    }

    /// Newer SentencePiece-style exports put the `▁` handling in a `Metaspace`
    /// pre-tokenizer instead of the normalizer; every prepend scheme and split setting,
    /// with and without special tokens, against `tokenizers`.
    func testMetaspacePreTokenizerMatchesHuggingFace() throws {
        let url = try TestSupport.fixture("llama2-tokenizer/tokenizer.json")
        let dir = try TestSupport.temporaryDirectory(self)
        let original = try String(contentsOf: url, encoding: .utf8)
        let before = #""pre_tokenizer": null"#
        guard original.contains(before), let range = original.range(of: #""normalizer": {"#) else {
            throw XCTSkip("tokenizer.json layout differs from the one this test edits")
        }
        // Cut the normalizer object out by brace matching, keeping the file otherwise as is.
        var depth = 0
        var end = range.upperBound
        var i = original.index(before: range.upperBound)
        while i < original.endIndex {
            if original[i] == "{" { depth += 1 }
            if original[i] == "}" { depth -= 1; if depth == 0 { end = original.index(after: i); break } }
            i = original.index(after: i)
        }
        let texts = TestSupport.variedTexts + Self.specialTexts + TestSupport.randomTexts(count: 100, seed: 5)
        for scheme in ["first", "always", "never"] {
            for split in [false, true] {
                var text = original
                text.replaceSubrange(range.lowerBound..<end, with: #""normalizer": null"#)
                text = text.replacingOccurrences(
                    of: before, with: #""pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "\#(scheme)", "split": \#(split)}"#)
                let file = dir.appendingPathComponent("metaspace-\(scheme)-\(split).json")
                try text.write(to: file, atomically: true, encoding: .utf8)
                let tok = try BPETokenizer(contentsOf: file)
                try OracleComparison.hf(tok, file, texts, addSpecialTokens: true, parseSpecialTokens: true)
                try OracleComparison.hf(tok, file, texts, addSpecialTokens: false, parseSpecialTokens: false)
            }
        }
    }
}
