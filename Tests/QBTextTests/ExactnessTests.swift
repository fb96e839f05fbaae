import Foundation
import XCTest

@testable import QBText

/// Every third-party test vector in ../shared/fixtures against every tokenizer that reads
/// the vocabulary it was made with, with a table of cases passed (printed, and asserted to
/// be all of them).
///
/// Fixture → tokenizer map (see the fixtures' SOURCES.md):
/// - llama.cpp llama-spm (Llama 2, no BOS): the vocabulary GGUF, tokenizer.json, tokenizer.model
/// - llama.cpp llama-bpe (Llama 3, no BOS): the tiktoken tokenizer.model
/// - llama.cpp smollm: SmolLM2's tokenizer.json, and that vocabulary written to GGUF
/// - llama.cpp qwen2: llama.cpp's ggml-vocab-qwen2.gguf when found (not in the fixtures; see
///   QwenGGUFTokenizerTests), else skipped
/// - swift-transformers tokenizer_tests.json: "pcuenq/Llama-3.2-1B-Instruct-tokenizer" →
///   Llama 3; "coreml-projects/Llama-2-7b-chat-coreml" → the Llama 2 trio (others: no vocabulary)
/// - llama_3.2_encoded.json → Llama 3; llama_encoded.json → Llama 2 (gemma_encoded: no vocabulary)
/// - multilingual_baseline_tinyllama.json (TinyLlama uses the Llama 2 tokenizer) → Llama 2
/// - multilingual_baseline_qwen2_5.json → llama.cpp's Qwen2 vocabulary GGUF, when found
/// - llama3-tokenizer/test_vectors_llama_models.json → Llama 3
final class ExactnessTests: XCTestCase {
    struct Row {
        var set: String
        var tokenizer: String
        var passed: Int
        var total: Int
    }

    /// transformers' `clean_up_tokenization` (on by default for the Llama 3 tokenizer in
    /// the swift-transformers vectors): spaces removed before punctuation and contractions.
    static func cleanUp(_ s: String) -> String {
        var t = s
        for (a, b) in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"), (" 'm", "'m"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")] {
            t = t.replacingOccurrences(of: a, with: b)
        }
        return t
    }

    /// Checks one case; returns the failures (empty when it passed).
    static func check(_ tok: any Tokenizer, _ c: TokenizerCase, cleanUpDecodes: Bool = false) -> [String] {
        var failures: [String] = []
        let ids = tok.encode(c.text, addSpecialTokens: c.addSpecialTokens, parseSpecialTokens: false)
        if ids != c.ids { failures.append("ids \(ids) != \(c.ids)") }
        if let pieces = c.pieces {
            let body = c.addSpecialTokens ? Array(c.ids.dropFirst()) : c.ids
            let ours = body.map { tok.tokenText(for: $0) ?? "?" }
            if ours != pieces { failures.append("pieces \(ours) != \(pieces)") }
        }
        func same(_ ours: String, _ theirs: String) -> Bool {
            ours == theirs || (cleanUpDecodes && cleanUp(ours) == theirs)
        }
        if let expected = c.decodedWithSpecial {
            let ours = tok.decode(c.ids, skipSpecialTokens: false)
            if !same(ours, expected) { failures.append("decode \(ours.debugDescription) != \(expected.debugDescription)") }
        }
        if let expected = c.decodedWithoutSpecial {
            let ours = tok.decode(c.ids, skipSpecialTokens: true)
            if !same(ours, expected) { failures.append("decode(skip) \(ours.debugDescription) != \(expected.debugDescription)") }
        }
        // The text comes back (no normalization in any of these vocabularies).
        let back = tok.decode(c.ids, skipSpecialTokens: true)
        if back != c.text { failures.append("round trip \(back.debugDescription) != \(c.text.debugDescription)") }
        return failures
    }

    private func run(
        _ set: String, _ cases: [TokenizerCase], _ tokenizers: [(String, @Sendable () throws -> any Tokenizer)], cleanUpDecodes: Bool = false,
        rows: inout [Row]
    ) throws {
        for (name, make) in tokenizers {
            let tok = try make()
            var passed = 0
            for c in cases {
                let failures = Self.check(tok, c, cleanUpDecodes: cleanUpDecodes)
                if failures.isEmpty { passed += 1 } else { XCTFail("\(set) / \(name) / \(c.name) \(c.text.debugDescription): \(failures.joined(separator: "; "))") }
            }
            rows.append(Row(set: set, tokenizer: name, passed: passed, total: cases.count))
        }
    }

    static let llama2Trio: [(String, @Sendable () throws -> any Tokenizer)] = [
        ("Llama 2 GGUF (llama.cpp SPM)", { try FixtureTokenizers.llama2GGUF() }),
        ("Llama 2 tokenizer.json", { try FixtureTokenizers.llama2JSON() }),
        ("Llama 2 tokenizer.model (SentencePiece)", { try FixtureTokenizers.llama2Model() }),
    ]
    static let llama3: [(String, @Sendable () throws -> any Tokenizer)] = [("Llama 3 tokenizer.model (tiktoken)", { try FixtureTokenizers.llama3() })]
    static let smolLM2: [(String, @Sendable () throws -> any Tokenizer)] = [
        ("SmolLM2 tokenizer.json", { try FixtureTokenizers.smolLM2() }),
        ("SmolLM2 vocabulary in GGUF", { try FixtureTokenizers.smolLM2GGUF() }),
    ]

    func testAllFixtureVectors() throws {
        var rows: [Row] = []
        try run("llama.cpp llama-spm", try FixtureVectors.llamaCpp("llama-spm"), Self.llama2Trio, rows: &rows)
        try run("llama.cpp llama-bpe", try FixtureVectors.llamaCpp("llama-bpe"), Self.llama3, rows: &rows)
        try run("llama.cpp smollm", try FixtureVectors.llamaCpp("smollm"), Self.smolLM2, rows: &rows)
        try run(
            "swift-transformers Llama-3.2", try FixtureVectors.swiftTransformers(model: "pcuenq/Llama-3.2-1B-Instruct-tokenizer"),
            Self.llama3, cleanUpDecodes: true, rows: &rows)
        try run(
            "swift-transformers Llama-2", try FixtureVectors.swiftTransformers(model: "coreml-projects/Llama-2-7b-chat-coreml"),
            Self.llama2Trio, rows: &rows)
        try run("llama_3.2_encoded.json", [try FixtureVectors.encodedParagraph("llama_3.2_encoded.json")], Self.llama3, rows: &rows)
        try run("llama_encoded.json (Llama 2)", [try FixtureVectors.encodedParagraph("llama_encoded.json")], Self.llama2Trio, rows: &rows)
        try run("multilingual TinyLlama", try FixtureVectors.multilingualTinyLlama(), Self.llama2Trio, rows: &rows)
        rows.append(try llamaModelsVectors())
        // llama.cpp's Qwen2 vocabulary is not among the fixtures; QwenGGUFTokenizerTests says
        // where it is looked for (and fails without it under QB_REQUIRE_ORACLES=1).
        let qwen2 = try? QwenGGUFTokenizerTests.vocabulary()
        if let qwen2 {
            let tokenizers: [(String, @Sendable () throws -> any Tokenizer)] = [
                ("llama.cpp's Qwen2 vocabulary GGUF", { try GGUFTokenizer.tokenizer(path: qwen2.path) }),
            ]
            try run("llama.cpp qwen2", try FixtureVectors.llamaCpp("qwen2"), tokenizers, rows: &rows)
            try run("multilingual Qwen2.5", try FixtureVectors.multilingual(baseline: "multilingual_baseline_qwen2_5.json"), tokenizers, rows: &rows)
        }

        print("| fixture set | tokenizer | cases passed |")
        print("| --- | --- | --- |")
        for r in rows { print("| \(r.set) | \(r.tokenizer) | \(r.passed)/\(r.total) |") }
        if qwen2 == nil { print("| llama.cpp qwen2, multilingual Qwen2.5 | (no Qwen2 vocabulary GGUF found) | skipped |") }
        for r in rows { XCTAssertEqual(r.passed, r.total, "\(r.set) / \(r.tokenizer)") }
        XCTAssertGreaterThanOrEqual(rows.count, 15)
    }

    /// meta-llama/llama-models test_tokenizer.py: encode with BOS and EOS, decode, and the
    /// chat format's message and dialog encodings.
    private func llamaModelsVectors() throws -> Row {
        let v = try FixtureVectors.llama3Models()
        let tok = try FixtureTokenizers.llama3()
        let names = v["special_tokens_llama_models_naming"] as? [String: Int] ?? [:]
        XCTAssertEqual(names.count, 256)
        for (name, id) in names {
            XCTAssertEqual(tok.encode(name, addSpecialTokens: false, parseSpecialTokens: true), [TokenID(id)], name)
            XCTAssertEqual(tok.tokenText(for: TokenID(id)), name)
        }
        XCTAssertEqual(v["pat_str"] as? String, Tiktoken.llama3Pattern)
        func id(_ name: String) -> TokenID { TokenID(names[name] ?? -1) }
        func header(_ role: String) -> [TokenID] {
            [id("<|start_header_id|>")] + tok.encode(role, addSpecialTokens: false, parseSpecialTokens: false)
                + [id("<|end_header_id|>")] + tok.encode("\n\n", addSpecialTokens: false, parseSpecialTokens: false)
        }
        func message(_ role: String, _ content: String) -> [TokenID] {
            header(role) + tok.encode(content.trimmingCharacters(in: .whitespacesAndNewlines), addSpecialTokens: false, parseSpecialTokens: false)
                + [id("<|eot_id|>")]
        }
        let cases = v["cases"] as? [[String: Any]] ?? []
        var passed = 0
        for c in cases {
            let name = c["name"] as? String ?? "?"
            let expected = (c["ids"] as? [Int] ?? []).map { TokenID($0) }
            var ok = false
            if name == "test_encode", let text = c["text"] as? String {
                let ids = tok.encode(text, addSpecialTokens: c["bos"] as? Bool ?? false, parseSpecialTokens: false)
                    + ((c["eos"] as? Bool ?? false) ? [id("<|end_of_text|>")] : [])
                ok = ids == expected
            } else if name == "test_decode", let text = c["text"] as? String {
                ok = tok.decode(expected) == text
            } else if name.hasPrefix("test_encode_message"), let content = c["content"] as? String {
                ok = message("user", content) == expected
            } else if name.hasPrefix("test_encode_dialog"), let messages = c["messages"] as? [[String: String]] {
                var ids = [id("<|begin_of_text|>")]
                for m in messages { ids += message(m["role"] ?? "", m["content"] ?? "") }
                ok = ids + header("assistant") == expected
                // The same dialog through a rendered prompt: one BOS, special tokens parsed.
                let rendered = "<|begin_of_text|>" + messages.map {
                    "<|start_header_id|>\($0["role"] ?? "")<|end_header_id|>\n\n\($0["content"] ?? "")<|eot_id|>"
                }.joined() + "<|start_header_id|>assistant<|end_header_id|>\n\n"
                ok = ok && tok.encode(rendered: rendered) == expected
            }
            if ok { passed += 1 } else { XCTFail("llama-models \(name)") }
        }
        XCTAssertEqual(cases.count, 4)
        return Row(set: "llama-models test_tokenizer.py", tokenizer: "Llama 3 tokenizer.model (tiktoken)", passed: passed, total: cases.count)
    }

    /// decode(encode(text)) is the text for every fixture text and tokenizer. SentencePiece
    /// vocabularies cannot give back U+2581 (`▁` is their space) — no fixture text has one.
    func testRoundTripsOfEveryFixtureText() throws {
        let texts = try FixtureVectors.allTexts()
        XCTAssertGreaterThan(texts.count, 140)
        let all = Self.llama3 + Self.llama2Trio + Self.smolLM2 + [("Llama 2 tokenizer.bin (llama2.c)", { @Sendable () throws -> any Tokenizer in
            try Llama2cTokenizer(contentsOf: try TestSupport.fixture("llama2-tokenizer/tokenizer.bin"), vocabularySize: 32000)
        })]
        for (name, make) in all {
            let tok = try make()
            var passed = 0
            // llama2.c's encoder always puts its dummy-prefix space first, and run.c's decode
            // drops it only after BOS: its round trip needs BOS.
            let adds = tok is Llama2cTokenizer ? [true] : [false, true]
            for text in texts {
                for add in adds {
                    let back = tok.decode(tok.encode(text, addSpecialTokens: add, parseSpecialTokens: false), skipSpecialTokens: true)
                    if back == text { passed += 1 } else { XCTFail("\(name): \(text.debugDescription) came back as \(back.debugDescription)") }
                }
            }
            print("round trip \(name): \(passed)/\(texts.count * adds.count)")
        }
    }
}
