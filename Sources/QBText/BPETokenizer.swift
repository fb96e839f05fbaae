import Foundation

/// A Hugging Face `tokenizer.json` tokenizer of the byte-level BPE kind (GPT-2, Llama 3,
/// SmolLM2, Qwen2 and the project's synthetic models).
///
/// Encoding reproduces the `tokenizers` package id for id: added tokens are taken out
/// first, the rest is pre-tokenized by hand-written scanners (see `PreTokenizer`) and each
/// pre-token is merged by rank. Supported pieces of the file:
/// - model: `BPE` with `vocab`, `merges` ("a b" strings or [a, b] pairs), `ignore_merges`,
///   `unk_token`/`fuse_unk`; no dropout, subword prefixes or suffixes.
/// - normalizer: none.
/// - pre_tokenizer: `ByteLevel`, or a `Sequence` of `Split` (Llama 3 / Qwen2 / GPT-2 regex,
///   `Isolated`), `Digits` and a final `ByteLevel`.
/// - decoder: `ByteLevel`. post_processor: `TemplateProcessing`, `ByteLevel`, a `Sequence`
///   of those, or none.
/// Anything else is rejected with `TokenizerError.unsupported` rather than guessed at.
public final class BPETokenizer: Tokenizer {
    /// The tokenizer.json this was read from (for messages).
    public let path: String
    public let vocabularySize: Int
    public let bosTokenID: TokenID?
    public let eosTokenIDs: Set<TokenID>
    public let addsBOS: Bool
    /// Whether `encode(_:addSpecialTokens:parseSpecialTokens:)` appends EOS.
    public let addsEOS: Bool
    /// tokenizer_config.json (or an equivalent given by the caller), when there was one.
    public let config: TokenizerConfig?
    /// The model's Jinja chat template, when tokenizer_config.json has one.
    public var chatTemplate: String? { config?.chatTemplate }

    /// Ids the post-processor puts before and after the text when adding special tokens.
    public let prefixIDs: [TokenID]
    public let suffixIDs: [TokenID]

    private let model: BPEModel
    private let preTokenizer: PreTokenizer
    private let addedTokens: AddedTokenMatcher
    /// Byte string of every id, flattened: id i is pieceBytes[pieceStarts[i]..<pieceStarts[i+1]].
    private let pieceBytes: [UInt8]
    private let pieceStarts: [Int]
    private let specialFlags: [Bool]
    private let tokenTexts: [String?]
    private let idsByText: [String: TokenID]

    /// Ids above this are rejected as corrupt rather than allocated for.
    static let maximumVocabularySize = 1 << 22

    /// Reads `url` (a tokenizer.json). The configuration comes from `configURL`, or when that
    /// is nil from `tokenizer_config.json` next to the file if it exists (and from
    /// `chat_template.jinja` next to it when the config has no template).
    /// `eosTokenIDs` replaces the end-of-generation ids derived from the files (a model's
    /// config.json or generation_config.json often lists several).
    public convenience init(contentsOf url: URL, configURL: URL? = nil, eosTokenIDs: Set<TokenID>? = nil) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TokenizerError.unreadable(path: url.path, reason: error.localizedDescription)
        }
        let directory = url.deletingLastPathComponent()
        var config: TokenizerConfig?
        if let configURL {
            config = try TokenizerConfig(contentsOf: configURL)
        } else {
            let sibling = directory.appendingPathComponent("tokenizer_config.json")
            if FileManager.default.fileExists(atPath: sibling.path) {
                config = try TokenizerConfig(contentsOf: sibling)
            }
        }
        let jinja = directory.appendingPathComponent("chat_template.jinja")
        if config?.chatTemplate == nil, FileManager.default.fileExists(atPath: jinja.path),
            let text = try? String(contentsOf: jinja, encoding: .utf8)
        {
            var c = config ?? TokenizerConfig()
            c.chatTemplate = text
            config = c
        }
        try self.init(json: data, config: config, path: url.path, eosTokenIDs: eosTokenIDs)
    }

    /// Reads the tokenizer.json at `path`; see `init(contentsOf:configURL:eosTokenIDs:)`.
    public convenience init(path: String, eosTokenIDs: Set<TokenID>? = nil) throws {
        try self.init(contentsOf: URL(fileURLWithPath: path), eosTokenIDs: eosTokenIDs)
    }

    /// Builds the tokenizer from tokenizer.json text. `path` only names the source in errors.
    public init(json data: Data, config: TokenizerConfig? = nil, path: String, eosTokenIDs: Set<TokenID>? = nil) throws {
        let f = JSONFields(path: path)
        let root = try f.parse(data)
        self.path = path
        self.config = config

        // Model.
        let modelJSON = try f.object(root["model"], "model")
        let type = try f.optionalString(modelJSON["type"], "model.type") ?? "BPE"
        guard type == "BPE" else { throw TokenizerError.unsupported(path: path, feature: "model type '\(type)'") }
        if let dropout = try f.optionalDouble(modelJSON["dropout"], "model.dropout"), dropout != 0 {
            throw TokenizerError.unsupported(path: path, feature: "BPE dropout \(dropout)")
        }
        for field in ["continuing_subword_prefix", "end_of_word_suffix"] {
            if let s = try f.optionalString(modelJSON[field], "model.\(field)"), !s.isEmpty {
                throw TokenizerError.unsupported(path: path, feature: "model.\(field) '\(s)'")
            }
        }
        let vocabJSON = try f.object(modelJSON["vocab"], "model.vocab")
        let limit = Self.maximumVocabularySize - 1
        var vocab: [String: TokenID] = [:]
        vocab.reserveCapacity(vocabJSON.count)
        var maxID = -1
        for (text, value) in vocabJSON {
            let id = try f.integer(value, "model.vocab[\(Self.quoted(text))]", limit: limit)
            vocab[text] = TokenID(id)
            maxID = max(maxID, id)
        }

        // Added tokens.
        var added: [AddedToken] = []
        if let list = f.present(root["added_tokens"]) {
            guard let list = list as? [Any] else { throw f.wrongType("added_tokens", "an array") }
            for (i, entry) in list.enumerated() {
                let field = "added_tokens[\(i)]"
                let o = try f.object(entry, field)
                let id = try f.integer(o["id"], field + ".id", limit: limit)
                let content = try f.string(o["content"], field + ".content")
                let special = try f.bool(o["special"], field + ".special", default: false)
                added.append(AddedToken(
                    id: TokenID(id), content: content, special: special,
                    singleWord: try f.bool(o["single_word"], field + ".single_word", default: false),
                    lstrip: try f.bool(o["lstrip"], field + ".lstrip", default: false),
                    rstrip: try f.bool(o["rstrip"], field + ".rstrip", default: false),
                    normalized: try f.bool(o["normalized"], field + ".normalized", default: !special)))
                maxID = max(maxID, id)
            }
        }
        let size = maxID + 1
        // Ids index dense tables; a few huge ids in a small file would be a corrupt file
        // asking for gigabytes.
        guard size <= 2 * (vocab.count + added.count) + 1024 else {
            throw TokenizerError.malformed(path: path, field: "model.vocab", reason: "ids reach \(maxID) but only \(vocab.count + added.count) tokens are defined")
        }
        vocabularySize = size

        // Per-id tables: the byte string each id decodes to, its text, whether it is special.
        var texts = [String?](repeating: nil, count: size)
        var pieces = [[UInt8]?](repeating: nil, count: size)
        var whole: [ArraySlice<UInt8>: TokenID] = [:]
        whole.reserveCapacity(vocab.count)
        for (text, id) in vocab {
            texts[Int(id)] = text
            if let bytes = ByteLevel.decode(text) {
                pieces[Int(id)] = bytes
                whole[ArraySlice(bytes)] = id
            } else {
                // Not byte-level text: unreachable by BPE; decodes to its UTF-8, as the
                // ByteLevel decoder falls back to.
                pieces[Int(id)] = Array(text.utf8)
            }
        }
        var special = [Bool](repeating: false, count: size)
        var byText = vocab
        for token in added {
            texts[Int(token.id)] = token.content
            pieces[Int(token.id)] = Array(token.content.utf8)
            special[Int(token.id)] = token.special
            byText[token.content] = token.id
        }
        var flat: [UInt8] = []
        var starts: [Int] = [0]
        starts.reserveCapacity(size + 1)
        for piece in pieces {
            if let piece { flat.append(contentsOf: piece) }
            starts.append(flat.count)
        }
        pieceBytes = flat
        pieceStarts = starts
        tokenTexts = texts
        specialFlags = special
        idsByText = byText

        // Merges.
        var merges: [UInt64: UInt64] = [:]
        let mergeList = try f.present(modelJSON["merges"]).map { try f.array($0, "model.merges") } ?? []
        merges.reserveCapacity(mergeList.count)
        for (rank, entry) in mergeList.enumerated() {
            func field() -> String { "model.merges[\(rank)]" }
            let a: String
            let b: String
            if let s = entry as? String {
                let parts = s.split(separator: " ", omittingEmptySubsequences: false)
                guard parts.count == 2 else {
                    throw TokenizerError.malformed(path: path, field: field(), reason: "\(Self.quoted(s)) is not two tokens separated by one space")
                }
                a = String(parts[0])
                b = String(parts[1])
            } else if let pair = entry as? [Any], pair.count == 2 {
                a = try f.string(pair[0], field() + "[0]")
                b = try f.string(pair[1], field() + "[1]")
            } else {
                throw f.wrongType(field(), "a \"a b\" string or a pair of strings")
            }
            guard let ida = vocab[a] else { throw Self.unknownMergeToken(path, field(), a) }
            guard let idb = vocab[b] else { throw Self.unknownMergeToken(path, field(), b) }
            guard let merged = vocab[a + b] else { throw Self.unknownMergeToken(path, field(), a + b) }
            merges[BPEModel.pairKey(ida, idb)] = UInt64(rank) << 32 | UInt64(UInt32(bitPattern: merged))
        }

        var byteIDs = [TokenID](repeating: -1, count: 256)
        for byte in 0..<256 {
            if let scalar = Unicode.Scalar(ByteLevel.scalarForByte[byte]), let id = vocab[String(Character(scalar))] {
                byteIDs[byte] = id
            }
        }
        if try f.bool(modelJSON["byte_fallback"], "model.byte_fallback", default: false), byteIDs.contains(-1) {
            throw TokenizerError.unsupported(path: path, feature: "byte_fallback with a vocabulary missing byte-level tokens")
        }
        var unknownID: TokenID?
        if let unk = try f.optionalString(modelJSON["unk_token"], "model.unk_token") {
            guard let id = vocab[unk] else {
                throw TokenizerError.malformed(path: path, field: "model.unk_token", reason: "\(Self.quoted(unk)) is not in model.vocab")
            }
            unknownID = id
        }
        model = BPEModel(
            byteIDs: byteIDs, merges: merges, wholeTokens: whole,
            ignoreMerges: try f.bool(modelJSON["ignore_merges"], "model.ignore_merges", default: false),
            unknownID: unknownID,
            fuseUnknown: try f.bool(modelJSON["fuse_unk"], "model.fuse_unk", default: false))
        addedTokens = AddedTokenMatcher(added)

        // Normalizer, pre-tokenizer, decoder.
        if let normalizer = try f.optionalObject(root["normalizer"], "normalizer") {
            let t = try f.string(normalizer["type"], "normalizer.type")
            let empty = t == "Sequence" && ((normalizer["normalizers"] as? [Any])?.isEmpty ?? false)
            guard empty else { throw TokenizerError.unsupported(path: path, feature: "normalizer '\(t)'") }
        }
        preTokenizer = try Self.parsePreTokenizer(root["pre_tokenizer"], f)
        try Self.checkDecoder(root["decoder"], f)

        // Post-processor, then the config's overrides.
        var (prefix, suffix) = try Self.parsePostProcessor(root["post_processor"], f, "post_processor")
        if let bad = (prefix + suffix).first(where: { Int($0) >= size }) {
            throw TokenizerError.malformed(path: path, field: "post_processor", reason: "adds id \(bad), beyond the vocabulary (\(size) ids)")
        }
        let bos = config?.bosToken.flatMap { byText[$0] } ?? prefix.first
        let configEOS = config?.eosToken.flatMap { byText[$0] }
        if let addBOS = config?.addBOSToken, let bos {
            if addBOS && !prefix.contains(bos) { prefix.insert(bos, at: 0) }
            if !addBOS { prefix.removeAll { $0 == bos } }
        }
        if let addEOS = config?.addEOSToken, let eos = configEOS {
            if addEOS && !suffix.contains(eos) { suffix.append(eos) }
            if !addEOS { suffix.removeAll { $0 == eos } }
        }
        prefixIDs = prefix
        suffixIDs = suffix
        bosTokenID = bos
        addsBOS = bos.map { prefix.first == $0 } ?? false
        addsEOS = configEOS.map { suffix.last == $0 } ?? false
        if let eosTokenIDs {
            self.eosTokenIDs = eosTokenIDs
        } else if let configEOS {
            self.eosTokenIDs = [configEOS]
        } else {
            // No declared EOS: take the end markers of the common chat formats that the
            // vocabulary defines as special tokens.
            let names = ["<|eot_id|>", "<|end_of_text|>", "<|eom_id|>", "<|im_end|>", "<|endoftext|>", "</s>", "<eos>", "<|end|>"]
            self.eosTokenIDs = Set(added.filter { $0.special && names.contains($0.content) }.map(\.id))
        }
    }

    // MARK: Encoding

    public func encode(_ text: String, addSpecialTokens: Bool, parseSpecialTokens: Bool) -> [TokenID] {
        var buffer = Array(text.utf8)
        var out: [TokenID] = []
        out.reserveCapacity(buffer.count / 3 + prefixIDs.count + suffixIDs.count + 1)
        if addSpecialTokens { out.append(contentsOf: prefixIDs) }
        let splits = splitAddedTokens(buffer, parseSpecialTokens: parseSpecialTokens)
        var scratch = BPEModel.Scratch(useCache: buffer.count >= 2048)
        var splitScratch = PreTokenizer.Scratch()
        var pieces: [Range<Int>] = []
        for split in splits {
            if let id = split.id {
                out.append(id)
                continue
            }
            pieces.removeAll(keepingCapacity: true)
            preTokenizer.split(&buffer, split.range, into: &pieces, scratch: &splitScratch)
            for piece in pieces { model.tokenize(buffer, piece, &scratch, into: &out) }
        }
        if addSpecialTokens { out.append(contentsOf: suffixIDs) }
        return out
    }

    /// The pre-tokens `text` is cut into before BPE (added tokens excluded), for tests and
    /// diagnostics.
    public func preTokenize(_ text: String, parseSpecialTokens: Bool = true) -> [String] {
        var buffer = Array(text.utf8)
        var pieces: [Range<Int>] = []
        var scratch = PreTokenizer.Scratch()
        for split in splitAddedTokens(buffer, parseSpecialTokens: parseSpecialTokens) where split.id == nil {
            preTokenizer.split(&buffer, split.range, into: &pieces, scratch: &scratch)
        }
        return pieces.map { String(decoding: buffer[$0], as: UTF8.self) }
    }

    private func splitAddedTokens(_ buffer: [UInt8], parseSpecialTokens: Bool) -> [AddedTokenSplit] {
        guard !addedTokens.isEmpty else { return [AddedTokenSplit(range: 0..<buffer.count, id: nil)] }
        return buffer.withUnsafeBufferPointer { addedTokens.split($0, parseSpecialTokens: parseSpecialTokens) }
    }

    // MARK: Decoding

    public func bytes(for id: TokenID, after previous: TokenID?) -> [UInt8] {
        guard id >= 0, Int(id) < vocabularySize else { return [] }
        return Array(pieceBytes[pieceStarts[Int(id)]..<pieceStarts[Int(id) + 1]])
    }

    public func decode(_ ids: [TokenID]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(ids.count * 4)
        for id in ids where id >= 0 && Int(id) < vocabularySize {
            bytes.append(contentsOf: pieceBytes[pieceStarts[Int(id)]..<pieceStarts[Int(id) + 1]])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    public func isSpecial(_ id: TokenID) -> Bool {
        guard id >= 0, Int(id) < vocabularySize else { return false }
        return specialFlags[Int(id)]
    }

    /// The id of a token given as it is written in tokenizer.json (byte-level text for
    /// vocabulary entries, plain text for added tokens).
    public func id(forToken text: String) -> TokenID? { idsByText[text] }

    /// The token text tokenizer.json gives id `id`.
    public func token(for id: TokenID) -> String? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return tokenTexts[Int(id)]
    }

    // MARK: Parsing helpers

    private static func quoted(_ s: String) -> String { JSONWriter.quoted(s) }

    private static func unknownMergeToken(_ path: String, _ field: String, _ token: String) -> TokenizerError {
        .malformed(path: path, field: field, reason: "names \(quoted(token)), which is not in model.vocab")
    }

    private static func parsePreTokenizer(_ value: Any?, _ f: JSONFields) throws -> PreTokenizer {
        guard let json = try f.optionalObject(value, "pre_tokenizer") else {
            throw TokenizerError.unsupported(path: f.path, feature: "no pre_tokenizer (byte-level BPE needs ByteLevel)")
        }
        var stages: [PreTokenizer.Stage] = []
        try collectStages(json, "pre_tokenizer", f, into: &stages)
        guard let last = stages.last, case .byteLevel = last else {
            throw TokenizerError.unsupported(path: f.path, feature: "pre_tokenizer without a final ByteLevel step")
        }
        // Byte-level mapping is implicit (pieces stay bytes), so a ByteLevel step that neither
        // prefixes nor splits does nothing and is dropped.
        stages.removeAll { $0 == .byteLevel(addPrefixSpace: false, useRegex: false) }
        return PreTokenizer(stages: stages)
    }

    private static func collectStages(_ json: [String: Any], _ field: String, _ f: JSONFields, into stages: inout [PreTokenizer.Stage]) throws {
        let type = try f.string(json["type"], field + ".type")
        if stages.contains(where: { if case .byteLevel = $0 { return true } else { return false } }) {
            throw TokenizerError.unsupported(path: f.path, feature: "pre_tokenizer step '\(type)' after ByteLevel")
        }
        switch type {
        case "Sequence":
            let list = try f.array(json["pretokenizers"], field + ".pretokenizers")
            for (i, entry) in list.enumerated() {
                try collectStages(try f.object(entry, "\(field).pretokenizers[\(i)]"), "\(field).pretokenizers[\(i)]", f, into: &stages)
            }
        case "Split":
            let pattern = try f.object(json["pattern"], field + ".pattern")
            guard let regex = try f.optionalString(pattern["Regex"], field + ".pattern.Regex") else {
                let literal = (try? f.optionalString(pattern["String"], field + ".pattern.String")) ?? nil
                throw TokenizerError.unsupported(path: f.path, feature: "Split on a literal string \(quoted(literal ?? "?"))")
            }
            guard let known = PreTokenizer.SplitPattern(regex: regex) else {
                throw TokenizerError.unsupported(path: f.path, feature: "Split regex \(quoted(regex))")
            }
            let behavior = try f.optionalString(json["behavior"], field + ".behavior") ?? "Isolated"
            guard behavior == "Isolated" else {
                throw TokenizerError.unsupported(path: f.path, feature: "Split behavior '\(behavior)'")
            }
            guard try !f.bool(json["invert"], field + ".invert", default: false) else {
                throw TokenizerError.unsupported(path: f.path, feature: "inverted Split")
            }
            stages.append(.split(known))
        case "Digits":
            stages.append(.digits(individual: try f.bool(json["individual_digits"], field + ".individual_digits", default: false)))
        case "ByteLevel":
            stages.append(.byteLevel(
                addPrefixSpace: try f.bool(json["add_prefix_space"], field + ".add_prefix_space", default: true),
                useRegex: try f.bool(json["use_regex"], field + ".use_regex", default: true)))
        default:
            throw TokenizerError.unsupported(path: f.path, feature: "pre_tokenizer '\(type)'")
        }
    }

    private static func checkDecoder(_ value: Any?, _ f: JSONFields) throws {
        guard let json = try f.optionalObject(value, "decoder") else {
            throw TokenizerError.unsupported(path: f.path, feature: "no decoder (byte-level BPE needs ByteLevel)")
        }
        let type = try f.string(json["type"], "decoder.type")
        if type == "ByteLevel" { return }
        if type == "Sequence", let list = json["decoders"] as? [[String: Any]],
            list.count == 1, list[0]["type"] as? String == "ByteLevel"
        {
            return
        }
        throw TokenizerError.unsupported(path: f.path, feature: "decoder '\(type)'")
    }

    /// The ids a post-processor puts around a single sequence.
    private static func parsePostProcessor(_ value: Any?, _ f: JSONFields, _ field: String) throws -> ([TokenID], [TokenID]) {
        guard let json = try f.optionalObject(value, field) else { return ([], []) }
        let type = try f.string(json["type"], field + ".type")
        switch type {
        case "ByteLevel":
            return ([], [])
        case "Sequence":
            var prefix: [TokenID] = []
            var suffix: [TokenID] = []
            let list = try f.array(json["processors"], field + ".processors")
            for (i, entry) in list.enumerated() {
                let (p, s) = try parsePostProcessor(entry, f, "\(field).processors[\(i)]")
                prefix += p
                suffix = s + suffix
            }
            return (prefix, suffix)
        case "TemplateProcessing":
            return try parseTemplate(json, f, field)
        default:
            throw TokenizerError.unsupported(path: f.path, feature: "post_processor '\(type)'")
        }
    }

    private static func parseTemplate(_ json: [String: Any], _ f: JSONFields, _ field: String) throws -> ([TokenID], [TokenID]) {
        var specials: [String: [TokenID]] = [:]
        if let map = try f.optionalObject(json["special_tokens"], field + ".special_tokens") {
            for (name, entry) in map {
                let sub = "\(field).special_tokens[\(quoted(name))]"
                let o = try f.object(entry, sub)
                let ids = try f.array(o["ids"], sub + ".ids")
                specials[name] = try ids.enumerated().map {
                    TokenID(try f.integer($0.element, "\(sub).ids[\($0.offset)]", limit: maximumVocabularySize - 1))
                }
            }
        }
        // Each template item is a special token's name or the sequence; both the serialized
        // form ({"SpecialToken": {"id": …}}, {"Sequence": {"id": "A"}}) and the "<s> $A"
        // string form are accepted.
        var items: [String?] = []  // nil = the sequence
        let single = f.present(json["single"])
        if let text = single as? String {
            for word in text.split(separator: " ") {
                let name = word.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
                items.append(name.hasPrefix("$") ? nil : name)
            }
        } else {
            let list = try f.array(single, field + ".single")
            for (i, entry) in list.enumerated() {
                let o = try f.object(entry, "\(field).single[\(i)]")
                if let token = try f.optionalObject(o["SpecialToken"], "\(field).single[\(i)].SpecialToken") {
                    items.append(try f.string(token["id"], "\(field).single[\(i)].SpecialToken.id"))
                } else if o["Sequence"] != nil {
                    items.append(nil)
                } else {
                    throw f.wrongType("\(field).single[\(i)]", "a SpecialToken or Sequence item")
                }
            }
        }
        guard let sequenceIndex = items.firstIndex(where: { $0 == nil }) else {
            throw TokenizerError.malformed(path: f.path, field: field + ".single", reason: "has no sequence item")
        }
        func ids(_ names: ArraySlice<String?>) throws -> [TokenID] {
            var out: [TokenID] = []
            for case let name? in names {
                guard let ids = specials[name] else {
                    throw TokenizerError.malformed(path: f.path, field: field + ".special_tokens", reason: "no entry for \(quoted(name))")
                }
                out += ids
            }
            return out
        }
        return (try ids(items[..<sequenceIndex]), try ids(items[(sequenceIndex + 1)...]))
    }
}
