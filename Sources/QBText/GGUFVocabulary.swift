import Foundation
import QBFormats

/// A tokenizer as GGUF's `tokenizer.ggml.*` metadata, so a GGUF file alone carries what
/// it needs (llama.cpp reads the same keys): `gpt2` for byte-level BPE, `llama` for
/// SentencePiece-style vocabularies such as llama2.c's tokenizer.bin.
public enum GGUFVocabulary {
    // llama.cpp's token types.
    static let normal: Int32 = 1, unknown: Int32 = 2, control: Int32 = 3, userDefined: Int32 = 4, byte: Int32 = 6

    /// The metadata of a `BPETokenizer`, from its tables in memory (whatever file it was
    /// read from):
    /// - byte-level vocabularies as `gpt2`: token texts in GPT-2's byte alphabet, the merge
    ///   list by rank (for tiktoken ranks, derived as Hugging Face's converter does: each
    ///   token's merge is the last step of encoding it with the lower ranks), and
    ///   `tokenizer.ggml.pre` naming the split pattern;
    /// - SentencePiece-style vocabularies as `llama`: pieces, with scores that order merges
    ///   as the merge list does (a merged piece scores minus its merge's rank), byte and
    ///   control types, and no merge list (llama.cpp merges `llama` vocabularies by score).
    /// Special added tokens become control tokens, other added tokens user-defined ones.
    /// Ids up to `modelVocabularySize` the tokenizer lacks are written as `[PAD<id>]`.
    public static func metadata(
        bpe tokenizer: BPETokenizer, modelVocabularySize: Int, stopTokens: Set<TokenID> = []
    ) throws -> [(String, GGUFValue)] {
        guard tokenizer.vocabularySize <= modelVocabularySize else {
            throw TokenizerError.malformed(
                path: tokenizer.path, field: "vocabulary",
                reason: "\(tokenizer.vocabularySize) tokens do not fit the model's \(modelVocabularySize) embedding rows")
        }
        var texts = (0..<modelVocabularySize).map { "[PAD\($0)]" }
        var types = [Int32](repeating: normal, count: modelVocabularySize)
        for id in 0..<tokenizer.vocabularySize {
            if let text = tokenizer.token(for: TokenID(id)) { texts[id] = text }
        }
        for token in tokenizer.addedTokens.tokens where Int(token.id) < modelVocabularySize {
            types[Int(token.id)] = token.special ? control : userDefined
        }
        switch tokenizer.kind {
        case .byteLevel:
            var meta: [(String, GGUFValue)] = [
                ("tokenizer.ggml.model", .string("gpt2")),
                ("tokenizer.ggml.pre", .string(try preTokenizerName(tokenizer))),
                ("tokenizer.ggml.tokens", .array(.string, texts.map { .string($0) })),
                ("tokenizer.ggml.token_type", .array(.int32, types.map { .int32($0) })),
                ("tokenizer.ggml.merges", .array(.string, mergeList(tokenizer).map { .string($0) })),
            ]
            meta += common(tokenizer, stops: stopTokens, template: tokenizer.chatTemplate)
            return meta
        case .sentencePiece:
            guard case .merges(let table) = tokenizer.model.pairRanks else {
                throw TokenizerError.unsupported(path: tokenizer.path, feature: "GGUF export of this vocabulary")
            }
            // A merged piece scores minus the rank of the merge that makes it (the lowest,
            // when several do); other pieces score below every merge.
            var scores = [Float](repeating: -Float(table.count + 1), count: modelVocabularySize)
            for (_, value) in table.entries {
                let id = Int(UInt32(truncatingIfNeeded: value)), rank = Float(value >> 32)
                if id < modelVocabularySize { scores[id] = max(scores[id], -rank) }
            }
            for id in 0..<tokenizer.vocabularySize where BPETokenizer.byteFallbackValue(texts[id]) != nil && types[id] == normal {
                types[id] = byte
            }
            if let unk = tokenizer.model.unknownID, Int(unk) < modelVocabularySize { types[Int(unk)] = unknown }
            var meta: [(String, GGUFValue)] = [
                ("tokenizer.ggml.model", .string("llama")),
                ("tokenizer.ggml.pre", .string("default")),
                ("tokenizer.ggml.tokens", .array(.string, texts.map { .string($0) })),
                ("tokenizer.ggml.scores", .array(.float32, scores.map { .float32($0) })),
                ("tokenizer.ggml.token_type", .array(.int32, types.map { .int32($0) })),
            ]
            if let unk = tokenizer.model.unknownID { meta.append(("tokenizer.ggml.unknown_token_id", .uint32(UInt32(unk)))) }
            meta += common(tokenizer, stops: stopTokens, template: tokenizer.chatTemplate)
            return meta
        }
    }

    /// llama.cpp's name for a byte-level tokenizer's split (`tokenizer.ggml.pre`).
    static func preTokenizerName(_ tokenizer: BPETokenizer) throws -> String {
        switch tokenizer.preTokenizer.stages {
        case [.split(.llama3)]: return "llama-bpe"
        case [.split(.qwen2)]: return "qwen2"
        case [.digits(individual: true), .byteLevel(addPrefixSpace: false, useRegex: true)]: return "smollm"
        case [.byteLevel(addPrefixSpace: false, useRegex: true)]: return "gpt-2"
        default:
            throw TokenizerError.unsupported(path: tokenizer.path, feature: "a GGUF pre-tokenizer name for this tokenizer's split")
        }
    }

    /// The merge list, "left right" in rank order.
    static func mergeList(_ tokenizer: BPETokenizer) -> [String] {
        switch tokenizer.model.pairRanks {
        case .merges(let table):
            return table.entries.sorted { $0.1 >> 32 < $1.1 >> 32 }.map { key, _ in
                let left = TokenID(truncatingIfNeeded: key >> 32), right = TokenID(truncatingIfNeeded: key)
                return (tokenizer.token(for: left) ?? "") + " " + (tokenizer.token(for: right) ?? "")
            }
        case .joinedBytes:
            return tiktokenMerges(tokenizer)
        }
    }

    /// Hugging Face's tiktoken conversion: for each multi-byte token in rank order, encode
    /// its bytes using only lower ranks; the two parts left are its merge.
    static func tiktokenMerges(_ tokenizer: BPETokenizer) -> [String] {
        var merges: [String] = []
        var parts: [Range<Int>] = []
        for id in 0..<tokenizer.vocabularySize {
            guard let text = tokenizer.token(for: TokenID(id)), !tokenizer.isSpecial(TokenID(id)),
                let bytes = ByteLevel.decode(text), bytes.count >= 2
            else { continue }
            bytes.withUnsafeBufferPointer { p in
                parts = (0..<p.count).map { $0..<($0 + 1) }
                while parts.count > 2 {
                    var best: (rank: TokenID, at: Int)?
                    for i in 0..<(parts.count - 1) {
                        let r = tokenizer.model.wholeTokens.lookup(p, parts[i].lowerBound..<parts[i + 1].upperBound)
                        if r >= 0 && r < TokenID(id) && r < (best?.rank ?? .max) { best = (r, i) }
                    }
                    guard let (_, i) = best else { break }
                    parts[i] = parts[i].lowerBound..<parts[i + 1].upperBound
                    parts.remove(at: i + 1)
                }
                if parts.count == 2 {
                    merges.append(ByteLevel.encode(p[parts[0]]) + " " + ByteLevel.encode(p[parts[1]]))
                }
            }
        }
        return merges
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
        var freeKeys = ["eot", "eom"]
        for (text, key) in [("<|eot_id|>", "eot"), ("<|eom_id|>", "eom")] {
            let ids = t.encode(text, addSpecialTokens: false, parseSpecialTokens: true)
            if ids.count == 1, eos.contains(ids[0]) {
                meta.append(("tokenizer.ggml.\(key)_token_id", .uint32(UInt32(ids[0]))))
                eos.remove(ids[0])
                freeKeys.removeAll { $0 == key }
            }
        }
        let rest = (eos.isEmpty ? all : eos).sorted()
        if let first = rest.first {
            meta.append(("tokenizer.ggml.eos_token_id", .uint32(UInt32(first))))
        }
        // Other stops (ChatML's <|im_end|> beside <|endoftext|>) take the unused end-of-turn
        // and end-of-message keys, as llama.cpp's converters do; GGUF has no key for a fourth.
        for (key, id) in zip(freeKeys, rest.dropFirst()) {
            meta.append(("tokenizer.ggml.\(key)_token_id", .uint32(UInt32(id))))
        }
        meta.append(("tokenizer.ggml.add_bos_token", .bool(t.addsBOS)))
        if let b = t as? BPETokenizer { meta.append(("tokenizer.ggml.add_eos_token", .bool(b.addsEOS))) }
        if let template { meta.append(("tokenizer.chat_template", .string(template))) }
        return meta
    }

}
