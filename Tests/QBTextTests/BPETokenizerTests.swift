import Foundation
import XCTest

@testable import QBText

final class BPETokenizerTests: XCTestCase {
    /// Texts with special-token markup, for the parse / do-not-parse cases.
    static let specialTexts = [
        "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n",
        "plain <|endoftext|> inside<|endoftext|>and<|im_end|>",
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
        "almost special <|im_sta and <|eot_id and <|reserved_special_token_7|>",
        "<|<|im_end|>|>",
    ]

    private func compareWithOracle(
        _ tok: BPETokenizer, _ url: URL, _ texts: [String], addSpecialTokens: Bool, parseSpecialTokens: Bool,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let response = try TestSupport.oracle([
            "mode": "encode", "tokenizer": url.path, "texts": texts,
            "add_special_tokens": addSpecialTokens, "parse_special_tokens": parseSpecialTokens,
        ])
        let expected = TestSupport.ids(response["ids"])
        let decoded = response["decoded"] as? [String] ?? []
        XCTAssertEqual(expected.count, texts.count, file: file, line: line)
        var same = 0
        for (i, text) in texts.enumerated() where i < expected.count {
            let ids = tok.encode(text, addSpecialTokens: addSpecialTokens, parseSpecialTokens: parseSpecialTokens)
            XCTAssertEqual(ids, expected[i], "ids for \(text.debugDescription)", file: file, line: line)
            if ids == expected[i] { same += 1 }
            if i < decoded.count {
                XCTAssertEqual(tok.decode(expected[i]), decoded[i], "decode of \(text.debugDescription)", file: file, line: line)
            }
        }
        print("\(url.lastPathComponent) add=\(addSpecialTokens) parse=\(parseSpecialTokens): \(same)/\(texts.count) identical to tokenizers")
    }

    func testSmolLM2MatchesHuggingFace() throws {
        let url = try TestSupport.fixture("smollm2-tokenizer/tokenizer.json")
        let tok = try BPETokenizer(contentsOf: url)
        XCTAssertEqual(tok.vocabularySize, 49152)
        XCTAssertEqual(tok.prefixIDs, [])
        XCTAssertFalse(tok.addsBOS)
        XCTAssertTrue(tok.isSpecial(0))
        XCTAssertTrue(tok.eosTokenIDs.contains(2))
        let texts = TestSupport.variedTexts + Self.specialTexts
        try compareWithOracle(tok, url, texts, addSpecialTokens: true, parseSpecialTokens: true)
        try compareWithOracle(tok, url, Self.specialTexts, addSpecialTokens: false, parseSpecialTokens: false)
        for text in TestSupport.variedTexts {
            XCTAssertEqual(tok.decode(tok.encode(text)), text)
        }
    }

    func testSmolLM2MatchesHuggingFaceOnRandomTexts() throws {
        let url = try TestSupport.fixture("smollm2-tokenizer/tokenizer.json")
        let tok = try BPETokenizer(contentsOf: url)
        let texts = TestSupport.randomTexts(count: 400, seed: 1)
        try compareWithOracle(tok, url, texts, addSpecialTokens: true, parseSpecialTokens: true)
        try compareWithOracle(tok, url, texts, addSpecialTokens: false, parseSpecialTokens: false)
    }

    /// llama.cpp's SmolLM vocabulary test vectors (same tokenizer as SmolLM2).
    func testSmolLM2MatchesLlamaCppVectors() throws {
        let url = try TestSupport.fixture("smollm2-tokenizer/tokenizer.json")
        let inp = try TestSupport.fixture("llamacpp-vocab-tests/ggml-vocab-smollm.gguf.inp")
        let outURL = try TestSupport.fixture("llamacpp-vocab-tests/ggml-vocab-smollm.gguf.out")
        let tok = try BPETokenizer(contentsOf: url)
        let inputs = try String(contentsOf: inp, encoding: .utf8).components(separatedBy: "\n__ggml_vocab_test__\n")
        let outputs = try String(contentsOf: outURL, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        var checked = 0
        for (i, text) in inputs.enumerated() where i < outputs.count {
            let expected = outputs[i].split(separator: " ").compactMap { TokenID($0) }
            XCTAssertEqual(tok.encode(text, addSpecialTokens: false, parseSpecialTokens: false), expected, text.debugDescription)
            checked += 1
        }
        XCTAssertGreaterThan(checked, 40)
    }

    /// The three split scanners against the regexes they replace, run by `tokenizers`.
    func testSplitScannersMatchOniguruma() throws {
        var texts = TestSupport.variedTexts
        texts += TestSupport.randomTexts(count: 300, seed: 2)
        texts += ["'", "''s", "x'", "'ll'", "  'S", "\r\n\r\n  \t\n", " \u{00A0}\u{00A0}x", "a\u{2028}\u{2028}b", "1'2", "\n'sx"]
        for pattern in [PreTokenizer.SplitPattern.llama3, .qwen2, .gpt2] {
            let response = try TestSupport.oracle(["mode": "pretokenize", "pattern": pattern.regexText, "texts": texts])
            let expected = response["pieces"] as? [[String]] ?? []
            XCTAssertEqual(expected.count, texts.count)
            for (i, text) in texts.enumerated() where i < expected.count {
                let bytes = Array(text.utf8)
                var ranges: [Range<Int>] = []
                bytes.withUnsafeBufferPointer { Scanner.split(pattern, $0, 0..<bytes.count, into: &ranges) }
                let pieces = ranges.map { String(decoding: bytes[$0], as: UTF8.self) }
                XCTAssertEqual(pieces, expected[i], "\(pattern) on \(text.debugDescription)")
            }
        }
    }

    /// Swift's Unicode tables against Oniguruma's \s, \p{L}, \p{N} for every scalar below
    /// U+20000. Scalars assigned after Unicode 15.1 are allowed to differ (Swift's tables
    /// are newer than the Oniguruma in `tokenizers`).
    func testScalarClassesMatchOniguruma() throws {
        let limit = 0x20000
        let response = try TestSupport.oracle(["mode": "classes", "limit": limit])
        func members(_ name: String) -> Set<UInt32> {
            var set = Set<UInt32>()
            for r in response[name] as? [[Int]] ?? [] where r.count == 2 {
                for v in r[0]...r[1] { set.insert(UInt32(v)) }
            }
            return set
        }
        let space = members("s"), letter = members("L"), number = members("N")
        XCTAssertEqual(space.count, 25)
        var mismatches: [String] = []
        for v in 0..<UInt32(limit) {
            guard let scalar = Unicode.Scalar(v) else { continue }
            let k = ScalarClass.of(v)
            let ok = k.isWhitespace == space.contains(v) && (k == .letter) == letter.contains(v)
                && (k == .number) == number.contains(v)
            if !ok {
                let age = scalar.properties.age
                let isNew = age.map { $0.major > 15 || ($0.major == 15 && $0.minor > 1) } ?? false
                if !isNew { mismatches.append(String(v, radix: 16)) }
            }
        }
        XCTAssertEqual(mismatches, [], "scalars classified differently from Oniguruma")
    }

    func testPreTokenizeShowsPieces() throws {
        let url = try TestSupport.fixture("smollm2-tokenizer/tokenizer.json")
        let tok = try BPETokenizer(contentsOf: url)
        // Digits(individual) then GPT-2's pattern.
        XCTAssertEqual(tok.preTokenize("abc 12345 x"), ["abc", " ", "1", "2", "3", "4", "5", " x"])
    }

    func testDecodeNeverTrapsOnUnknownIdsOrPartialUTF8() throws {
        let url = try TestSupport.fixture("smollm2-tokenizer/tokenizer.json")
        let tok = try BPETokenizer(contentsOf: url)
        XCTAssertEqual(tok.bytes(for: -1, after: nil), [])
        XCTAssertEqual(tok.bytes(for: 49152, after: nil), [])
        XCTAssertEqual(tok.bytes(for: .max, after: .min), [])
        XCTAssertNil(tok.token(for: -3))
        // Half of a multi-byte character decodes to U+FFFD; the ids around it survive.
        let ids = tok.encode("é")
        XCTAssertEqual(tok.decode(ids), "é")
        let emoji = tok.encode("😀")
        XCTAssertGreaterThan(emoji.count, 1)
        XCTAssertEqual(tok.decode([emoji[0], -7, 1_000_000]), "\u{FFFD}")
        XCTAssertEqual(tok.decode([]), "")
    }
}
