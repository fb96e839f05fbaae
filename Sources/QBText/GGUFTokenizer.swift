import Foundation
import QBFormats
import QBSupport

/// The tokenizer a GGUF file carries in its `tokenizer.ggml.*` metadata, so a GGUF file
/// alone is enough to chat.
///
/// - `llama`: a SentencePiece vocabulary (tokens, scores, token types) encoded by scores as
///   llama.cpp's SPM tokenizer does (`SentencePieceTokenizer`).
/// - `gpt2`: byte-level BPE (tokens in GPT-2's byte alphabet, merges by rank, the split
///   pattern named by `tokenizer.ggml.pre`), the same engine as tokenizer.json
///   (`BPETokenizer`); control tokens are special (parsed only when asked), user-defined
///   tokens are always matched, as in llama.cpp.
///
/// BOS/EOS come from `bos_token_id`, `eos_token_id`, `eot_token_id` and `eom_token_id`,
/// the BOS/EOS policy from `add_bos_token` / `add_eos_token` (llama.cpp's defaults when
/// absent: BOS for `llama`, none for `gpt2`), and the chat template from
/// `tokenizer.chat_template`.
public enum GGUFTokenizer {
    /// Reads the tokenizer of the GGUF file at `path`; `eosTokenIDs` replaces the ids the
    /// file says end generation.
    public static func tokenizer(path: String, eosTokenIDs: Set<TokenID>? = nil) throws -> any Tokenizer {
        let file: GGUFFile
        do {
            file = try GGUFFile(path: path)
        } catch let error as ModelError {
            throw TokenizerError.malformed(path: path, field: "(GGUF)", reason: error.description)
        } catch {
            throw TokenizerError.unreadable(path: path, reason: "\(error)")
        }
        return try tokenizer(file, eosTokenIDs: eosTokenIDs)
    }

    /// The tokenizer in an opened GGUF file (a model loader that has the file open already
    /// can pass it here).
    public static func tokenizer(_ file: GGUFFile, eosTokenIDs: Set<TokenID>? = nil) throws -> any Tokenizer {
        let m = Metadata(meta: file.metadata, path: file.file.path)
        let model = try m.string("tokenizer.ggml.model")
        switch model {
        case "llama":
            return try sentencePiece(m, eosTokenIDs)
        case "gpt2":
            var parts = try bytePairs(m)
            if let eosTokenIDs { parts.eos = eosTokenIDs }
            return BPETokenizer(parts: parts)
        default:
            throw TokenizerError.unsupported(path: m.path, feature: "GGUF tokenizer model '\(model)' (llama and gpt2 are read)")
        }
    }

    /// Typed access to the metadata, each problem a `TokenizerError` naming file and key.
    struct Metadata {
        let meta: [String: GGUFValue]
        let path: String

        func bad(_ key: String, _ reason: String) -> TokenizerError {
            .malformed(path: path, field: key, reason: reason)
        }

        func string(_ key: String) throws -> String {
            guard let v = meta[key] else { throw bad(key, "missing") }
            guard let s = v.string else { throw bad(key, "expected a string") }
            return s
        }

        func optionalString(_ key: String) throws -> String? {
            guard let v = meta[key] else { return nil }
            guard let s = v.string else { throw bad(key, "expected a string") }
            return s
        }

        func strings(_ key: String) throws -> [String] {
            guard let v = meta[key] else { throw bad(key, "missing") }
            guard let a = v.array else { throw bad(key, "expected an array of strings") }
            return try a.enumerated().map {
                guard let s = $0.element.string else { throw bad("\(key)[\($0.offset)]", "expected a string") }
                return s
            }
        }

        func optionalNumbers(_ key: String, count: Int) throws -> [Double]? {
            guard let v = meta[key] else { return nil }
            guard let a = v.array else { throw bad(key, "expected an array of numbers") }
            guard a.count == count else { throw bad(key, "\(a.count) entries for \(count) tokens") }
            return try a.enumerated().map {
                guard let d = $0.element.double else { throw bad("\(key)[\($0.offset)]", "expected a number") }
                return d
            }
        }

        /// A token id below `count`, or nil when absent. Values that do not fit (llama.cpp
        /// writes -1 as "none" into unsigned keys) are treated as absent.
        func tokenID(_ key: String, count: Int) throws -> TokenID? {
            guard let v = meta[key] else { return nil }
            guard let n = v.int else { throw bad(key, "expected an integer") }
            if n < 0 || n == Int(UInt32.max) { return nil }
            guard n < count else { throw bad(key, "\(n) is outside the \(count) tokens") }
            return TokenID(n)
        }

        func bool(_ key: String, default fallback: Bool) throws -> Bool {
            guard let v = meta[key] else { return fallback }
            if case .bool(let b) = v { return b }
            guard let n = v.int else { throw bad(key, "expected a boolean") }
            return n != 0
        }

        func types(count: Int) throws -> [Int32] {
            guard let numbers = try optionalNumbers("tokenizer.ggml.token_type", count: count) else {
                return [Int32](repeating: 1, count: count)
            }
            return numbers.map { Int32(exactly: $0) ?? 0 }
        }

        /// The ids generation stops at: EOS, end of turn, end of message.
        func stops(count: Int) throws -> Set<TokenID> {
            var s = Set<TokenID>()
            for key in ["eos", "eot", "eom"] {
                if let id = try tokenID("tokenizer.ggml.\(key)_token_id", count: count) { s.insert(id) }
            }
            return s
        }
    }

    private static func sentencePiece(_ m: Metadata, _ eosTokenIDs: Set<TokenID>?) throws -> SentencePieceTokenizer {
        let tokens = try m.strings("tokenizer.ggml.tokens")
        let n = tokens.count
        let scores = try m.optionalNumbers("tokenizer.ggml.scores", count: n)?.map { Float($0) } ?? [Float](repeating: 0, count: n)
        // Types outside llama.cpp's list read as normal.
        let types = try m.types(count: n).map { SentencePieceTokenizer.TokenType(rawValue: $0) ?? .normal }
        // llama.cpp's SPM defaults: BOS 1, EOS 2, unknown 0.
        let stops = try m.stops(count: n)
        let vocabulary = SentencePieceTokenizer.Vocabulary(
            pieces: tokens, scores: scores, types: types,
            bos: try m.tokenID("tokenizer.ggml.bos_token_id", count: n) ?? (n > 1 ? 1 : nil),
            eos: eosTokenIDs ?? (stops.isEmpty ? (n > 2 ? [2] : []) : stops),
            unknown: try m.tokenID("tokenizer.ggml.unknown_token_id", count: n) ?? 0,
            addsBOS: try m.bool("tokenizer.ggml.add_bos_token", default: true),
            addsEOS: try m.bool("tokenizer.ggml.add_eos_token", default: false),
            addSpacePrefix: try m.bool("tokenizer.ggml.add_space_prefix", default: true),
            mergesIntoAnyPiece: true,
            chatTemplate: try m.optionalString("tokenizer.chat_template"))
        return try SentencePieceTokenizer(vocabulary: vocabulary, path: m.path)
    }

    /// llama.cpp's pre-tokenizer names mapped to our split stages.
    static func stages(pre: String, path: String) throws -> (stages: [PreTokenizer.Stage], ignoreMerges: Bool) {
        switch pre {
        case "llama3", "llama-v3", "llama-bpe":
            return ([.split(.llama3)], true)
        case "qwen2", "deepseek-r1-qwen":
            return ([.split(.qwen2)], false)
        case "smollm":
            return ([.digits(individual: true), .byteLevel(addPrefixSpace: false, useRegex: true)], false)
        case "gpt-2", "gpt2", "default":
            return ([.byteLevel(addPrefixSpace: false, useRegex: true)], false)
        default:
            throw TokenizerError.unsupported(path: path, feature: "GGUF pre-tokenizer '\(pre)'")
        }
    }

    private static func bytePairs(_ m: Metadata) throws -> BPETokenizer.Parts {
        let tokens = try m.strings("tokenizer.ggml.tokens")
        let n = tokens.count
        guard n > 0, n <= BPETokenizer.maximumVocabularySize else { throw m.bad("tokenizer.ggml.tokens", "\(n) tokens") }
        let types = try m.types(count: n)
        let (stages, ignoreMerges) = try stages(pre: try m.optionalString("tokenizer.ggml.pre") ?? "default", path: m.path)

        var vocab = ByteStringMap()
        vocab.reserveCapacity(n)
        var added: [AddedToken] = []
        var whole: [ArraySlice<UInt8>: TokenID] = [:]
        whole.reserveCapacity(n)
        for (i, text) in tokens.enumerated() {
            let id = TokenID(i)
            if vocab[text] == nil { vocab[text] = id }
            switch types[i] {
            case 3, 2:  // control, unknown
                added.append(AddedToken(id: id, content: text, special: true, singleWord: false, lstrip: false, rstrip: false, normalized: false))
            case 4:  // user-defined
                added.append(AddedToken(id: id, content: text, special: false, singleWord: false, lstrip: false, rstrip: false, normalized: false))
            default:
                if let bytes = ByteLevel.decode(text), whole[bytes[...]] == nil { whole[bytes[...]] = id }
            }
        }
        var byteIDs = [TokenID](repeating: -1, count: 256)
        for b in 0..<256 {
            if let scalar = Unicode.Scalar(ByteLevel.scalarForByte[b]) { byteIDs[b] = vocab[String(Character(scalar))] ?? -1 }
        }
        var merges: [UInt64: UInt64] = [:]
        let mergeList = m.meta["tokenizer.ggml.merges"] == nil ? [] : try m.strings("tokenizer.ggml.merges")
        merges.reserveCapacity(mergeList.count)
        for (rank, line) in mergeList.enumerated() {
            let key = "tokenizer.ggml.merges[\(rank)]"
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 2 else { throw m.bad(key, "\(JSONWriter.quoted(line)) is not two tokens separated by one space") }
            let a = String(parts[0]), b = String(parts[1])
            guard let ida = vocab[a], let idb = vocab[b], let merged = vocab[a + b] else {
                throw m.bad(key, "\(JSONWriter.quoted(line)) names a token the vocabulary lacks")
            }
            merges[BPEModel.pairKey(ida, idb)] = UInt64(rank) << 32 | UInt64(UInt32(bitPattern: merged))
        }
        let model = BPEModel(
            symbols: .bytes, byteIDs: byteIDs, merges: merges, wholeTokens: whole,
            ignoreMerges: ignoreMerges, unknownID: try m.tokenID("tokenizer.ggml.unknown_token_id", count: n), fuseUnknown: false)
        let bos = try m.tokenID("tokenizer.ggml.bos_token_id", count: n)
        let addsBOS = try m.bool("tokenizer.ggml.add_bos_token", default: false) && bos != nil
        let stops = try m.stops(count: n)
        let eos = try m.tokenID("tokenizer.ggml.eos_token_id", count: n)
        let addsEOS = try m.bool("tokenizer.ggml.add_eos_token", default: false) && eos != nil
        return BPETokenizer.Parts(
            path: m.path, kind: .byteLevel, config: nil, chatTemplate: try m.optionalString("tokenizer.chat_template"),
            tokenTexts: tokens, added: added, model: model, normalizer: nil, preTokenizer: PreTokenizer(stages: stages),
            decoder: .byteLevel, prefix: addsBOS ? Array([bos].compactMap { $0 }) : [],
            suffix: addsEOS ? Array([eos].compactMap { $0 }) : [], bos: bos,
            eos: stops, addsEOS: addsEOS)
    }
}
