import Foundation
import QBModel

/// A tokenizer as GGUF's `tokenizer.ggml.*` metadata, so a GGUF file alone carries what
/// it needs (llama.cpp reads the same keys): `gpt2` for byte-level BPE, `llama` for
/// SentencePiece-style vocabularies such as llama2.c's tokenizer.bin.
public enum GGUFVocabulary {
    // llama.cpp's token types.
    static let normal: Int32 = 1, unknown: Int32 = 2, control: Int32 = 3, userDefined: Int32 = 4, byte: Int32 = 6

    /// The metadata of a byte-level BPE tokenizer.json (token texts as the file stores
    /// them, byte-level encoded), with its tokenizer_config.json facts.
    public static func metadata(
        bpe tokenizer: BPETokenizer, modelVocabularySize: Int, stopTokens: Set<TokenID> = []
    ) throws -> [(String, GGUFValue)] {
        let url = URL(fileURLWithPath: tokenizer.path)
        let fields = JSONFields(path: tokenizer.path)
        let root = try fields.parse(try Data(contentsOf: url))
        let model = try fields.object(root["model"], "model")
        let vocab = try fields.object(model["vocab"], "model.vocab")
        var texts = [String?](repeating: nil, count: modelVocabularySize)
        var types = [Int32](repeating: normal, count: modelVocabularySize)
        for (text, value) in vocab {
            let id = try fields.integer(value, "model.vocab[\(text)]", limit: modelVocabularySize - 1)
            texts[id] = text
        }
        if let added = root["added_tokens"] as? [Any] {
            for (i, entry) in added.enumerated() {
                let o = try fields.object(entry, "added_tokens[\(i)]")
                let id = try fields.integer(o["id"], "added_tokens[\(i)].id", limit: modelVocabularySize - 1)
                texts[id] = try fields.string(o["content"], "added_tokens[\(i)].content")
                types[id] = try fields.bool(o["special"], "added_tokens[\(i)].special", default: false) ? control : userDefined
            }
        }
        var merges: [GGUFValue] = []
        if let list = model["merges"] as? [Any] {
            for (i, m) in list.enumerated() {
                if let s = m as? String {
                    merges.append(.string(s))
                } else if let pair = m as? [String], pair.count == 2 {
                    merges.append(.string(pair[0] + " " + pair[1]))
                } else {
                    throw TokenizerError.malformed(path: tokenizer.path, field: "model.merges[\(i)]", reason: "not a merge")
                }
            }
        }
        var meta: [(String, GGUFValue)] = [
            ("tokenizer.ggml.model", .string("gpt2")),
            ("tokenizer.ggml.pre", .string(preTokenizerName(root))),
            ("tokenizer.ggml.tokens", .array(.string, texts.enumerated().map { .string($1 ?? "[PAD\($0)]") })),
            ("tokenizer.ggml.token_type", .array(.int32, types.map { .int32($0) })),
            ("tokenizer.ggml.merges", .array(.string, merges)),
        ]
        meta += common(tokenizer, stops: stopTokens, template: tokenizer.chatTemplate)
        return meta
    }

    /// The metadata of a llama2.c tokenizer.bin (SentencePiece pieces and scores).
    public static func metadata(llama2c tokenizer: Llama2cTokenizer, stopTokens: Set<TokenID> = []) -> [(String, GGUFValue)] {
        var tokens: [GGUFValue] = [], scores: [GGUFValue] = [], types: [GGUFValue] = []
        for id in 0..<tokenizer.vocabularySize {
            let piece = String(decoding: tokenizer.piece(for: TokenID(id)) ?? [], as: UTF8.self)
            let type: Int32
            if id == 0 { type = unknown } else if id < 3 { type = control }
            else if piece.count == 6 && piece.hasPrefix("<0x") && piece.hasSuffix(">") { type = byte } else { type = normal }
            // SentencePiece marks spaces with U+2581; llama2.c's export turned them into spaces.
            tokens.append(.string(type == normal ? piece.replacingOccurrences(of: " ", with: "\u{2581}") : piece))
            scores.append(.float32(tokenizer.score(for: TokenID(id)) ?? 0))
            types.append(.int32(type))
        }
        return [
            ("tokenizer.ggml.model", .string("llama")),
            ("tokenizer.ggml.tokens", .array(.string, tokens)),
            ("tokenizer.ggml.scores", .array(.float32, scores)),
            ("tokenizer.ggml.token_type", .array(.int32, types)),
            ("tokenizer.ggml.unknown_token_id", .uint32(0)),
        ] + common(tokenizer, stops: stopTokens, template: nil)
    }

    /// BOS, the ids that end a sequence (the tokenizer's and the model's, `stops`), BOS
    /// policy and chat template.
    static func common(_ t: any Tokenizer, stops: Set<TokenID>, template: String?) -> [(String, GGUFValue)] {
        var meta: [(String, GGUFValue)] = []
        if let bos = t.bosTokenID { meta.append(("tokenizer.ggml.bos_token_id", .uint32(UInt32(bos)))) }
        // Llama-3-style vocabularies end turns and messages with their own tokens; GGUF has
        // a key for each. Whatever else ends a sequence is the eos.
        var eos = t.eosTokenIDs.union(stops)
        let all = eos
        for (text, key) in [("<|eot_id|>", "eot"), ("<|eom_id|>", "eom")] {
            let ids = t.encode(text, addSpecialTokens: false, parseSpecialTokens: true)
            if ids.count == 1, eos.contains(ids[0]) {
                meta.append(("tokenizer.ggml.\(key)_token_id", .uint32(UInt32(ids[0]))))
                eos.remove(ids[0])
            }
        }
        if let first = (eos.isEmpty ? all : eos).min() {
            meta.append(("tokenizer.ggml.eos_token_id", .uint32(UInt32(first))))
        }
        meta.append(("tokenizer.ggml.add_bos_token", .bool(t.addsBOS)))
        if let template { meta.append(("tokenizer.chat_template", .string(template))) }
        return meta
    }

    /// llama.cpp's name for the pre-tokenizer split a tokenizer.json uses.
    static func preTokenizerName(_ root: [String: Any]) -> String {
        let text = String(describing: root["pre_tokenizer"] ?? "")
        if text.contains("(?i:'s|'t|'re|'ve|'m|'ll|'d)") { return "llama-bpe" }
        if text.contains("Digits") { return "smollm" }
        return "gpt-2"
    }
}
