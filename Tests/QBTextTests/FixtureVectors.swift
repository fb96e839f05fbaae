import Foundation
import XCTest

@testable import QBText

/// The third-party test vectors in ../shared/fixtures, read into one shape.
struct TokenizerCase {
    var name: String
    var text: String
    /// Expected ids, BOS included when `addSpecialTokens`.
    var ids: [TokenID]
    var addSpecialTokens: Bool
    /// Expected pieces (vocabulary texts), when the fixture lists them.
    var pieces: [String]?
    /// Expected decodes, when the fixture lists them.
    var decodedWithSpecial: String?
    var decodedWithoutSpecial: String?
}

enum FixtureVectors {
    /// llama.cpp's `ggml-vocab-<name>.gguf.inp/.out`: ids without BOS. The files end with a
    /// separator, which leaves an empty artifact pair at the end; it is not a case.
    static func llamaCpp(_ name: String) throws -> [TokenizerCase] {
        let inp = try TestSupport.fixture("llamacpp-vocab-tests/ggml-vocab-\(name).gguf.inp")
        let out = try TestSupport.fixture("llamacpp-vocab-tests/ggml-vocab-\(name).gguf.out")
        return try llamaCpp(inp: inp, out: out, name: name)
    }

    /// The same format from any folder (llama.cpp's own models/, whose pairs may be newer).
    static func llamaCpp(inp: URL, out: URL, name: String) throws -> [TokenizerCase] {
        let inputs = try String(contentsOf: inp, encoding: .utf8).components(separatedBy: "\n__ggml_vocab_test__\n")
        let outputs = try String(contentsOf: out, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let count = min(inputs.count, outputs.count) - 1
        return (0..<max(count, 0)).map { i in
            TokenizerCase(
                name: "\(name)#\(i)", text: inputs[i], ids: outputs[i].split(separator: " ").compactMap { TokenID($0) },
                addSpecialTokens: false)
        }
    }

    private static func json(_ relative: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(contentsOf: try TestSupport.fixture(relative)))
    }

    private static func ints(_ any: Any?) -> [TokenID] {
        (any as? [Any] ?? []).compactMap { ($0 as? NSNumber).map { TokenID(truncating: $0) } ?? ($0 as? Int).map { TokenID($0) } }
    }

    /// swift-transformers tokenizer_tests.json cases for one model id (ids include BOS).
    static func swiftTransformers(model: String) throws -> [TokenizerCase] {
        guard let all = try json("swift-transformers-vectors/tokenizer_tests.json") as? [String: Any],
            let list = all[model] as? [[String: Any]]
        else { throw XCTSkip("no cases for \(model)") }
        return list.enumerated().map { i, c in
            TokenizerCase(
                name: "\(model)#\(i)", text: c["input"] as? String ?? "",
                ids: ints((c["encoded"] as? [String: Any])?["input_ids"]), addSpecialTokens: true,
                decodedWithSpecial: c["decoded_with_special"] as? String,
                decodedWithoutSpecial: c["decoded_without_special"] as? String)
        }
    }

    /// llama_3.2_encoded.json / llama_encoded.json: one long text with ids (BOS included)
    /// and pieces.
    static func encodedParagraph(_ file: String) throws -> TokenizerCase {
        guard let c = try json("swift-transformers-vectors/\(file)") as? [String: Any] else { throw XCTSkip("\(file) unreadable") }
        return TokenizerCase(
            name: file, text: c["text"] as? String ?? "", ids: ints(c["token_ids"]), addSpecialTokens: true,
            pieces: c["bpe_tokens"] as? [String], decodedWithSpecial: c["decoded_text"] as? String)
    }

    /// The entries of a multilingual baseline with their texts, joined from
    /// multilingual_inputs.json by id.
    static func multilingualEntries(_ file: String) throws -> [(id: String, text: String, entry: [String: Any])] {
        guard let inputs = try json("swift-transformers-vectors/multilingual_inputs.json") as? [[String: Any]],
            let baseline = try json("swift-transformers-vectors/\(file)") as? [String: Any],
            let entries = baseline["entries"] as? [[String: Any]]
        else { throw XCTSkip("multilingual fixtures unreadable") }
        var texts: [String: String] = [:]
        for i in inputs {
            if let id = i["id"] as? String, let text = i["text"] as? String { texts[id] = text }
        }
        return entries.compactMap { e in
            guard let id = e["id"] as? String, let text = texts[id] else { return nil }
            return (id, text, e)
        }
    }

    /// The TinyLlama (Llama 2 tokenizer) multilingual baseline.
    static func multilingualTinyLlama() throws -> [TokenizerCase] {
        try multilingualEntries("multilingual_baseline_tinyllama.json").map { id, text, e in
            TokenizerCase(
                name: "multilingual/\(id)", text: text, ids: ints(e["input_ids"]), addSpecialTokens: true,
                pieces: (e["tokens"] as? [String]).map { Array($0.dropFirst()) },
                decodedWithSpecial: e["decoded_with_special"] as? String,
                decodedWithoutSpecial: e["decoded_skip_special"] as? String)
        }
    }

    /// A multilingual baseline whose ids carry no BOS (Qwen2.5's).
    static func multilingual(baseline file: String) throws -> [TokenizerCase] {
        try multilingualEntries(file).map { id, text, e in
            TokenizerCase(name: "multilingual/\(id)", text: text, ids: ints(e["input_ids"]), addSpecialTokens: true)
        }
    }

    /// The multilingual inputs alone (texts of every script and emoji sequence).
    static func multilingualTexts() throws -> [String] {
        guard let inputs = try json("swift-transformers-vectors/multilingual_inputs.json") as? [[String: Any]] else { return [] }
        return inputs.compactMap { $0["text"] as? String }
    }

    /// Meta's llama-models test_tokenizer.py vectors.
    static func llama3Models() throws -> [String: Any] {
        guard let v = try json("llama3-tokenizer/test_vectors_llama_models.json") as? [String: Any] else {
            throw XCTSkip("test_vectors_llama_models.json unreadable")
        }
        return v
    }

    /// Every fixture text (for round trips and streaming).
    static func allTexts() throws -> [String] {
        var texts: [String] = []
        for name in ["llama-spm", "llama-bpe", "smollm", "qwen2"] { texts += try llamaCpp(name).map(\.text) }
        texts += try swiftTransformers(model: "pcuenq/Llama-3.2-1B-Instruct-tokenizer").map(\.text)
        texts += try multilingualTexts()
        texts.append(try encodedParagraph("llama_3.2_encoded.json").text)
        texts.append(try encodedParagraph("llama_encoded.json").text)
        texts.append(try encodedParagraph("gemma_encoded.json").text)
        var seen = Set<[UInt8]>()
        return texts.filter { seen.insert(Array($0.utf8)).inserted }
    }
}
