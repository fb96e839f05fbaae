import Foundation
import QBSupport

/// Reading Hugging Face tokenizer.json into a `BPETokenizer`.
extension BPETokenizer {
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
            throw TokenizerError.unreadable(path: url.path, reason: FoundationErrorText.reason(error))
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
    ///
    /// Supported pieces of the file:
    /// - model: `BPE` with `vocab`, `merges` ("a b" strings or [a, b] pairs), `ignore_merges`,
    ///   `unk_token`/`fuse_unk`, `byte_fallback`; no dropout, subword prefixes or suffixes.
    /// - normalizer: none, or `Prepend` / `Replace` (literal pattern), alone or in a `Sequence`.
    /// - pre_tokenizer: for byte-level files `ByteLevel`, or a `Sequence` of `Split` (Llama 3 /
    ///   Qwen2 / GPT-2 regex, `Isolated`), `Digits` and a final `ByteLevel`; for
    ///   SentencePiece-style files none, `Metaspace`, `Split` or `Digits`.
    /// - decoder: `ByteLevel` for byte-level files; for SentencePiece-style ones a `Sequence`
    ///   of `Replace` (literal), `ByteFallback`, `Fuse` and a final `Strip` of leading spaces.
    /// - post_processor: `TemplateProcessing`, `ByteLevel`, a `Sequence` of those, or none.
    public convenience init(json data: Data, config: TokenizerConfig? = nil, path: String, eosTokenIDs: Set<TokenID>? = nil) throws {
        self.init(parts: try Self.parts(json: data, config: config, path: path, eosTokenIDs: eosTokenIDs))
    }

    static func parts(json data: Data, config: TokenizerConfig?, path: String, eosTokenIDs: Set<TokenID>?) throws -> Parts {
        let f = JSONFields(path: path)
        let root = try f.parse(data)

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
        let limit = maximumVocabularySize - 1
        // Keyed by bytes: Swift String keys would merge canonically equivalent entries.
        var vocab = ByteStringMap()
        vocab.reserveCapacity(vocabJSON.count)
        var entries: [(String, Int)] = []
        entries.reserveCapacity(vocabJSON.count)
        var maxID = -1
        for (text, value) in vocabJSON {
            let id = try f.integer(value, "model.vocab[\(quoted(text))]", limit: limit)
            vocab[text] = TokenID(id)
            entries.append((text, id))
            maxID = max(maxID, id)
        }

        // Added tokens.
        var added: [AddedToken] = []
        if let list = f.present(root["added_tokens"]) {
            guard let list = list.arrayValue else { throw f.wrongType("added_tokens", "an array") }
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
        var texts = [String?](repeating: nil, count: size)
        for (text, id) in entries { texts[id] = text }

        // Normalizer, pre-tokenizer, decoder; together they say which kind of BPE this is.
        let normalizer = try parseNormalizer(root["normalizer"], f)
        var stages: [PreTokenizer.Stage] = []
        if let json = try f.optionalObject(root["pre_tokenizer"], "pre_tokenizer") {
            try collectStages(json, "pre_tokenizer", f, into: &stages)
        }
        let decoder = try parseDecoder(root["decoder"], f)
        let byteLevel = stages.contains { if case .byteLevel = $0 { return true } else { return false } }
        let described = stages.isEmpty ? "none" : stages.map(describe).joined(separator: ", ")
        switch decoder {
        case .byteLevel:
            guard let last = stages.last, case .byteLevel = last else {
                throw TokenizerError.unsupported(path: path, feature: "decoder 'ByteLevel' with a pre_tokenizer not ending in ByteLevel (\(described))")
            }
        case .sentencePiece:
            guard !byteLevel else {
                throw TokenizerError.unsupported(path: path, feature: "pre_tokenizer ByteLevel with a SentencePiece-style decoder")
            }
        }
        // Byte-level mapping is implicit (pieces stay bytes), so a ByteLevel step that neither
        // prefixes nor splits does nothing and is dropped.
        stages.removeAll { $0 == .byteLevel(addPrefixSpace: false, useRegex: false) }
        let kind: Kind = byteLevel ? .byteLevel : .sentencePiece

        // Merges.
        var merges: [UInt64: UInt64] = [:]
        let mergeList = try f.present(modelJSON["merges"]).map { try f.array($0, "model.merges") } ?? []
        merges.reserveCapacity(mergeList.count)
        for (rank, entry) in mergeList.enumerated() {
            func field() -> String { "model.merges[\(rank)]" }
            let a: String
            let b: String
            if let s = entry.stringValue {
                let parts = s.split(separator: " ", omittingEmptySubsequences: false)
                guard parts.count == 2 else {
                    throw TokenizerError.malformed(path: path, field: field(), reason: "\(quoted(s)) is not two tokens separated by one space")
                }
                a = String(parts[0])
                b = String(parts[1])
            } else if let pair = entry.arrayValue, pair.count == 2 {
                a = try f.string(pair[0], field() + "[0]")
                b = try f.string(pair[1], field() + "[1]")
            } else {
                throw f.wrongType(field(), "a \"a b\" string or a pair of strings")
            }
            guard let ida = vocab[a] else { throw unknownMergeToken(path, field(), a) }
            guard let idb = vocab[b] else { throw unknownMergeToken(path, field(), b) }
            guard let merged = vocab[a + b] else { throw unknownMergeToken(path, field(), a + b) }
            // A pair listed twice keeps its last rank, as the crate's map collection does.
            merges[BPEModel.pairKey(ida, idb)] = UInt64(rank) << 32 | UInt64(UInt32(bitPattern: merged))
        }

        let byteFallback = try f.bool(modelJSON["byte_fallback"], "model.byte_fallback", default: false)
        var byteIDs = [TokenID](repeating: -1, count: 256)
        var whole: [ArraySlice<UInt8>: TokenID] = [:]
        whole.reserveCapacity(vocab.count)
        let symbols: BPEModel.Symbols
        switch kind {
        case .byteLevel:
            for byte in 0..<256 {
                if let scalar = Unicode.Scalar(ByteLevel.scalarForByte[byte]), let id = vocab[String(Character(scalar))] {
                    byteIDs[byte] = id
                }
            }
            if byteFallback, byteIDs.contains(-1) {
                throw TokenizerError.unsupported(path: path, feature: "byte_fallback with a vocabulary missing byte-level tokens")
            }
            for (id, text) in texts.enumerated() {
                if let text, let bytes = ByteLevel.decode(text) { whole[ArraySlice(bytes)] = TokenID(id) }
            }
            symbols = .bytes
        case .sentencePiece:
            for byte in 0..<256 {
                byteIDs[byte] = vocab[byteTokenText(UInt8(byte))] ?? -1
            }
            var table = ScalarTable()
            for (id, text) in texts.enumerated() {
                guard let text else { continue }
                whole[ArraySlice(Array(text.utf8))] = TokenID(id)
                table.setIfSingleScalar(text, TokenID(id))
            }
            symbols = .scalars(table, byteFallback: byteFallback)
        }
        var unknownID: TokenID?
        if let unk = try f.optionalString(modelJSON["unk_token"], "model.unk_token") {
            guard let id = vocab[unk] else {
                throw TokenizerError.malformed(path: path, field: "model.unk_token", reason: "\(quoted(unk)) is not in model.vocab")
            }
            unknownID = id
        }
        let model = BPEModel(
            symbols: symbols, byteIDs: byteIDs, merges: merges, wholeTokens: whole,
            ignoreMerges: try f.bool(modelJSON["ignore_merges"], "model.ignore_merges", default: false),
            unknownID: unknownID,
            fuseUnknown: try f.bool(modelJSON["fuse_unk"], "model.fuse_unk", default: false))

        // Post-processor, then the config's overrides.
        var byText = vocab
        for token in added { byText[token.content] = token.id }

        var (prefix, suffix) = try parsePostProcessor(root["post_processor"], f, "post_processor")
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
        let eos: Set<TokenID>
        if let eosTokenIDs {
            eos = eosTokenIDs
        } else if let configEOS {
            eos = [configEOS]
        } else {
            eos = defaultEOS(added)
        }
        return Parts(
            path: path, kind: kind, config: config, chatTemplate: config?.chatTemplate, tokenTexts: texts,
            added: added, model: model, normalizer: normalizer, preTokenizer: PreTokenizer(stages: stages),
            decoder: decoder, prefix: prefix, suffix: suffix, bos: bos, eos: eos,
            addsEOS: configEOS.map { suffix.last == $0 } ?? false)
    }

    /// With no declared EOS: the end markers of the common chat formats that the vocabulary
    /// defines as special tokens.
    static func defaultEOS(_ added: [AddedToken]) -> Set<TokenID> {
        let names = ["<|eot_id|>", "<|end_of_text|>", "<|eom_id|>", "<|im_end|>", "<|endoftext|>", "</s>", "<eos>", "<|end|>"]
        return Set(added.filter { $0.special && names.contains($0.content) }.map(\.id))
    }

    /// SentencePiece's name for the token of one byte, `<0x0A>`.
    static func byteTokenText(_ byte: UInt8) -> String {
        let hex = String(byte, radix: 16, uppercase: true)
        return "<0x" + (hex.count == 1 ? "0" + hex : hex) + ">"
    }

    // MARK: Parsing helpers

    private static func quoted(_ s: String) -> String { JSONWriter.quoted(s) }

    private static func unknownMergeToken(_ path: String, _ field: String, _ token: String) -> TokenizerError {
        .malformed(path: path, field: field, reason: "names \(quoted(token)), which is not in model.vocab")
    }

    private static func describe(_ stage: PreTokenizer.Stage) -> String {
        switch stage {
        case .split: return "Split"
        case .digits: return "Digits"
        case .byteLevel: return "ByteLevel"
        case .metaspace: return "Metaspace"
        }
    }

    private static func parseNormalizer(_ value: JSONValue?, _ f: JSONFields) throws -> Normalizer? {
        guard let json = try f.optionalObject(value, "normalizer") else { return nil }
        var steps: [Normalizer.Step] = []
        try collectNormalizers(json, "normalizer", f, into: &steps)
        guard !steps.isEmpty else { return nil }
        let normalizer = Normalizer(steps: steps)
        // Replace steps multiply the text's length: chained ones could grow one letter
        // into gigabytes. Real exports grow it by a few times at most.
        let growth = normalizer.worstGrowth
        guard growth <= Double(Normalizer.maximumGrowth) else {
            throw TokenizerError.malformed(
                path: f.path, field: "normalizer",
                reason: "its Replace steps can grow text \(growth > 1e15 ? "beyond 10^15" : String(Int(growth))) times over; at most \(Normalizer.maximumGrowth) is allowed")
        }
        return normalizer
    }

    private static func collectNormalizers(_ json: JSONObject, _ field: String, _ f: JSONFields, into steps: inout [Normalizer.Step]) throws {
        let type = try f.string(json["type"], field + ".type")
        switch type {
        case "Sequence":
            let list = try f.array(json["normalizers"], field + ".normalizers")
            for (i, entry) in list.enumerated() {
                let sub = "\(field).normalizers[\(i)]"
                try collectNormalizers(try f.object(entry, sub), sub, f, into: &steps)
            }
        case "Prepend":
            let text = try f.string(json["prepend"], field + ".prepend")
            if !text.isEmpty { steps.append(.prepend(Array(text.utf8))) }
        case "Replace":
            let pattern = try f.object(json["pattern"], field + ".pattern")
            guard let literal = try f.optionalString(pattern["String"], field + ".pattern.String") else {
                throw TokenizerError.unsupported(path: f.path, feature: "normalizer Replace with a regex pattern")
            }
            let content = try f.string(json["content"], field + ".content")
            steps.append(.replace(pattern: Array(literal.utf8), content: Array(content.utf8)))
        default:
            throw TokenizerError.unsupported(path: f.path, feature: "normalizer '\(type)'")
        }
    }

    private static func collectStages(_ json: JSONObject, _ field: String, _ f: JSONFields, into stages: inout [PreTokenizer.Stage]) throws {
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
        case "Metaspace":
            let replacement = try f.optionalString(json["replacement"], field + ".replacement") ?? "\u{2581}"
            guard replacement == "\u{2581}" else {
                throw TokenizerError.unsupported(path: f.path, feature: "Metaspace replacement \(quoted(replacement))")
            }
            // Files before tokenizers 0.14 say `add_prefix_space` instead of `prepend_scheme`.
            let prepend: PreTokenizer.MetaspacePrepend
            if let scheme = try f.optionalString(json["prepend_scheme"], field + ".prepend_scheme") {
                guard let p = PreTokenizer.MetaspacePrepend(rawValue: scheme) else {
                    throw TokenizerError.unsupported(path: f.path, feature: "Metaspace prepend_scheme '\(scheme)'")
                }
                prepend = p
            } else {
                prepend = try f.bool(json["add_prefix_space"], field + ".add_prefix_space", default: true) ? .always : .never
            }
            stages.append(.metaspace(prepend: prepend, split: try f.bool(json["split"], field + ".split", default: true)))
        default:
            throw TokenizerError.unsupported(path: f.path, feature: "pre_tokenizer '\(type)'")
        }
    }

    private static func parseDecoder(_ value: JSONValue?, _ f: JSONFields) throws -> Decoder {
        guard let json = try f.optionalObject(value, "decoder") else {
            throw TokenizerError.unsupported(path: f.path, feature: "no decoder")
        }
        let type = try f.string(json["type"], "decoder.type")
        if type == "ByteLevel" { return .byteLevel }
        guard type == "Sequence" else { throw TokenizerError.unsupported(path: f.path, feature: "decoder '\(type)'") }
        let list = try f.array(json["decoders"], "decoder.decoders")
        var steps: [(String, JSONObject)] = []
        for (i, entry) in list.enumerated() {
            let o = try f.object(entry, "decoder.decoders[\(i)]")
            steps.append((try f.string(o["type"], "decoder.decoders[\(i)].type"), o))
        }
        if steps.count == 1 && steps[0].0 == "ByteLevel" { return .byteLevel }
        // SentencePiece style: per-token literal replacements and byte fallback, then Fuse
        // (our decoding always concatenates), then a Strip of leading spaces of the whole.
        var replacements: [([UInt8], [UInt8])] = []
        var byteFallback = false
        var fused = false
        var strip = 0
        for (i, (kind, o)) in steps.enumerated() {
            let field = "decoder.decoders[\(i)]"
            switch kind {
            case "Replace" where !fused:
                let pattern = try f.object(o["pattern"], field + ".pattern")
                guard let literal = try f.optionalString(pattern["String"], field + ".pattern.String") else {
                    throw TokenizerError.unsupported(path: f.path, feature: "decoder Replace with a regex pattern")
                }
                replacements.append((Array(literal.utf8), Array(try f.string(o["content"], field + ".content").utf8)))
            case "ByteFallback" where !fused:
                byteFallback = true
            case "Fuse":
                fused = true
            case "Strip" where fused && strip == 0 && i == steps.count - 1:
                let content = try f.string(o["content"], field + ".content")
                let start = try f.integer(o["start"], field + ".start", limit: 1 << 20)
                let stop = try f.integer(o["stop"], field + ".stop", limit: 1 << 20)
                guard content == " ", stop == 0 else {
                    throw TokenizerError.unsupported(path: f.path, feature: "decoder Strip of \(quoted(content)) at the end (stop \(stop))")
                }
                strip = start
            default:
                throw TokenizerError.unsupported(path: f.path, feature: "decoder step '\(kind)' at position \(i) of a Sequence")
            }
        }
        return .sentencePiece(replacements: replacements, byteFallback: byteFallback, strip: strip)
    }

    /// The ids a post-processor puts around a single sequence.
    private static func parsePostProcessor(_ value: JSONValue?, _ f: JSONFields, _ field: String) throws -> ([TokenID], [TokenID]) {
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

    private static func parseTemplate(_ json: JSONObject, _ f: JSONFields, _ field: String) throws -> ([TokenID], [TokenID]) {
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
        if let text = single?.stringValue {
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
