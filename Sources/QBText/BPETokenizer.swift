import Foundation

/// A BPE tokenizer with merge ranks: Hugging Face tokenizer.json files of both kinds, and
/// the same engine for tiktoken rank files and GGUF `gpt2` vocabularies.
///
/// - Byte-level (GPT-2, Llama 3, SmolLM2, Qwen2, the synthetic models): pre-tokens are
///   raw bytes, merged from single bytes; decoding concatenates bytes.
/// - SentencePiece-style (Llama 2's tokenizer.json): text is normalized (`▁` for spaces,
///   by a normalizer or a `Metaspace` pre-tokenizer), merged from Unicode scalars with
///   `<0xNN>` byte fallback; decoding turns `▁` back into spaces, joins byte runs and strips
///   the leading space.
///
/// Encoding reproduces the `tokenizers` package id for id: added tokens are taken out first
/// (non-normalized ones in the raw text, normalized ones in the normalized text), the rest
/// is pre-tokenized by hand-written scanners (see `PreTokenizer`) and each pre-token merged
/// by rank (see `BPEModel`). What a file may contain is listed on
/// `init(json:config:path:eosTokenIDs:)`; anything else is rejected with
/// `TokenizerError.unsupported` rather than guessed at.
public final class BPETokenizer: Tokenizer, PieceDecoding {
    /// Whether pieces are bytes or SentencePiece-style text.
    public enum Kind: String, Sendable {
        case byteLevel
        case sentencePiece
    }

    /// The file this was read from (for messages).
    public let path: String
    public let kind: Kind
    public let vocabularySize: Int
    public let bosTokenID: TokenID?
    public let eosTokenIDs: Set<TokenID>
    public let addsBOS: Bool
    /// Whether `encode(_:addSpecialTokens:parseSpecialTokens:)` appends EOS.
    public let addsEOS: Bool
    /// tokenizer_config.json (or an equivalent given by the caller), when there was one.
    public let config: TokenizerConfig?
    /// The model's Jinja chat template (tokenizer_config.json, chat_template.jinja or GGUF).
    public let chatTemplate: String?

    /// Ids the post-processor puts before and after the text when adding special tokens.
    public let prefixIDs: [TokenID]
    public let suffixIDs: [TokenID]

    let model: BPEModel
    let normalizer: Normalizer?
    let preTokenizer: PreTokenizer
    let addedTokens: AddedTokenMatcher
    let decodingRules: DecodingRules
    /// What each id decodes to, flattened: id i is pieceBytes[pieceStarts[i]..<pieceStarts[i+1]].
    private let pieceBytes: [UInt8]
    private let pieceStarts: [Int]
    private let pieceKinds: [PieceKind]
    private let specialFlags: [Bool]
    private let tokenTexts: [String?]
    private let idsByText: ByteStringMap

    /// Ids above this are rejected as corrupt rather than allocated for.
    static let maximumVocabularySize = 1 << 22

    /// How a file's decoder turns tokens into text.
    enum Decoder: Equatable {
        /// `ByteLevel`: pieces are GPT-2 byte-alphabet text.
        case byteLevel
        /// SentencePiece-style `Sequence` of `Replace` (literal), `ByteFallback`, `Fuse` and
        /// a final `Strip` of up to `strip` leading spaces.
        case sentencePiece(replacements: [([UInt8], [UInt8])], byteFallback: Bool, strip: Int)

        static func == (a: Decoder, b: Decoder) -> Bool {
            switch (a, b) {
            case (.byteLevel, .byteLevel): return true
            case let (.sentencePiece(r1, f1, s1), .sentencePiece(r2, f2, s2)):
                return f1 == f2 && s1 == s2 && r1.count == r2.count && zip(r1, r2).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
            default: return false
            }
        }
    }

    /// Everything a tokenizer is built from, whatever file it came from.
    struct Parts {
        var path: String
        var kind: Kind
        var config: TokenizerConfig?
        var chatTemplate: String?
        /// Every id's text as the file writes it (nil for gaps); its count is the vocabulary size.
        var tokenTexts: [String?]
        var added: [AddedToken]
        var model: BPEModel
        var normalizer: Normalizer?
        var preTokenizer: PreTokenizer
        var decoder: Decoder
        var prefix: [TokenID]
        var suffix: [TokenID]
        var bos: TokenID?
        var eos: Set<TokenID>
        var addsEOS: Bool
    }

    init(parts p: Parts) {
        path = p.path
        kind = p.kind
        config = p.config
        chatTemplate = p.chatTemplate
        vocabularySize = p.tokenTexts.count
        model = p.model
        normalizer = p.normalizer
        preTokenizer = p.preTokenizer
        addedTokens = AddedTokenMatcher(p.added, normalizer: p.normalizer)
        prefixIDs = p.prefix
        suffixIDs = p.suffix
        bosTokenID = p.bos
        addsBOS = p.bos.map { p.prefix.first == $0 } ?? false
        addsEOS = p.addsEOS
        eosTokenIDs = p.eos

        let size = p.tokenTexts.count
        var texts = p.tokenTexts
        var special = [Bool](repeating: false, count: size)
        var kinds = [PieceKind](repeating: .text, count: size)
        var byText = ByteStringMap()
        byText.reserveCapacity(size)
        for (id, text) in texts.enumerated() {
            if let text { byText[text] = TokenID(id) } else { kinds[id] = .none }
        }
        // Added tokens decode to their content; normalized ones to their normalized content,
        // as the crate's `id_to_token` gives it (so Llama 2's `<s>` decodes with the `▁` its
        // normalized form absorbed, and "a <s> b" round-trips).
        var decodeTexts = texts
        var addedIDs = Set<Int>()
        for token in p.added where Int(token.id) < size {
            let id = Int(token.id)
            addedIDs.insert(id)
            texts[id] = token.content
            decodeTexts[id] = token.normalized ? (p.normalizer?.normalize(token.content) ?? token.content) : token.content
            special[id] = token.special
            kinds[id] = token.special ? .special : .text
            byText[token.content] = token.id
        }
        var flat: [UInt8] = []
        var starts: [Int] = [0]
        starts.reserveCapacity(size + 1)
        for id in 0..<size {
            guard let text = decodeTexts[id] else {
                starts.append(flat.count)
                continue
            }
            switch p.decoder {
            case .byteLevel:
                // Added tokens and entries outside the byte alphabet decode to their UTF-8,
                // as the ByteLevel decoder falls back to.
                if !addedIDs.contains(id), let bytes = ByteLevel.decode(text) {
                    flat.append(contentsOf: bytes)
                } else {
                    flat.append(contentsOf: text.utf8)
                }
            case .sentencePiece(let replacements, let byteFallback, _):
                if byteFallback, let byte = Self.byteFallbackValue(text) {
                    flat.append(byte)
                    kinds[id] = .fallbackByte
                } else {
                    var bytes = Array(text.utf8)
                    for (pattern, content) in replacements {
                        var replaced: [UInt8] = []
                        Normalizer.replace(bytes, pattern, content, into: &replaced)
                        bytes = replaced
                    }
                    flat.append(contentsOf: bytes)
                }
            }
            starts.append(flat.count)
        }
        pieceBytes = flat
        pieceStarts = starts
        pieceKinds = kinds
        tokenTexts = texts
        specialFlags = special
        idsByText = byText
        switch p.decoder {
        case .byteLevel: decodingRules = .plain
        case .sentencePiece(_, _, let strip):
            decodingRules = DecodingRules(leadingSpace: strip > 0 ? .stripCharacters(strip) : .keep, byteRuns: .wholeRun)
        }
    }

    /// `<0xNN>` (either case of hex digits, as the crate's `from_str_radix` reads it).
    static func byteFallbackValue(_ text: String) -> UInt8? {
        let u = Array(text.utf8)
        guard u.count == 6, u[0] == 0x3C, u[1] == 0x30, u[2] == 0x78, u[5] == 0x3E,
            let hi = hexDigit(u[3]), let lo = hexDigit(u[4])
        else { return nil }
        return hi << 4 | lo
    }

    static func hexDigit(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    // MARK: Encoding

    public func encode(_ text: String, addSpecialTokens: Bool, parseSpecialTokens: Bool) -> [TokenID] {
        var buffer = Array(text.utf8)
        var out: [TokenID] = []
        out.reserveCapacity(buffer.count / 3 + prefixIDs.count + suffixIDs.count + 1)
        if addSpecialTokens { out.append(contentsOf: prefixIDs) }
        var scratch = BPEModel.Scratch(useCache: buffer.count >= 2048)
        var splitScratch = PreTokenizer.Scratch()
        var pieces: [Range<Int>] = []

        func tokenize(_ bytes: inout [UInt8], _ range: Range<Int>, atTextStart: Bool) {
            pieces.removeAll(keepingCapacity: true)
            preTokenizer.split(&bytes, range, into: &pieces, scratch: &splitScratch, atTextStart: atTextStart)
            bytes.withUnsafeBufferPointer { p in
                for piece in pieces { model.tokenize(p, piece, &scratch, into: &out) }
            }
        }

        guard let normalizer else {
            for split in splitAddedTokens(buffer, parseSpecialTokens: parseSpecialTokens) {
                if let id = split.id {
                    out.append(id)
                } else {
                    tokenize(&buffer, split.range, atTextStart: split.range.lowerBound == 0)
                }
            }
            if addSpecialTokens { out.append(contentsOf: suffixIDs) }
            return out
        }
        // With a normalizer, each piece between raw added tokens is normalized on its own
        // (the crate normalizes per split), then searched for normalized added tokens.
        let rawSplits = buffer.withUnsafeBufferPointer {
            addedTokens.splitRaw($0, 0..<$0.count, parseSpecialTokens: parseSpecialTokens)
        }
        var work: [UInt8] = []
        for split in rawSplits {
            if let id = split.id {
                out.append(id)
                continue
            }
            work.removeAll(keepingCapacity: true)
            normalizer.normalize(buffer[split.range], into: &work)
            let inner = work.withUnsafeBufferPointer {
                addedTokens.splitNormalized($0, 0..<$0.count, parseSpecialTokens: parseSpecialTokens)
            }
            for piece in inner {
                if let id = piece.id {
                    out.append(id)
                } else {
                    tokenize(&work, piece.range, atTextStart: split.range.lowerBound == 0 && piece.range.lowerBound == 0)
                }
            }
        }
        if addSpecialTokens { out.append(contentsOf: suffixIDs) }
        return out
    }

    /// The pre-tokens `text` is cut into before BPE (added tokens excluded, normalizer
    /// applied), for tests and diagnostics.
    public func preTokenize(_ text: String, parseSpecialTokens: Bool = true) -> [String] {
        var buffer = Array(text.utf8)
        if let normalizer {
            var normalized: [UInt8] = []
            normalizer.normalize(buffer[...], into: &normalized)
            buffer = normalized
        }
        var pieces: [Range<Int>] = []
        var scratch = PreTokenizer.Scratch()
        for split in splitAddedTokens(buffer, parseSpecialTokens: parseSpecialTokens) where split.id == nil {
            preTokenizer.split(&buffer, split.range, into: &pieces, scratch: &scratch, atTextStart: split.range.lowerBound == 0)
        }
        return pieces.map { String(decoding: buffer[$0], as: UTF8.self) }
    }

    private func splitAddedTokens(_ buffer: [UInt8], parseSpecialTokens: Bool) -> [AddedTokenSplit] {
        guard !addedTokens.isEmpty else {
            return buffer.isEmpty ? [] : [AddedTokenSplit(range: 0..<buffer.count, id: nil)]
        }
        return buffer.withUnsafeBufferPointer { addedTokens.split($0, parseSpecialTokens: parseSpecialTokens) }
    }

    // MARK: Decoding

    func appendPiece(_ id: TokenID, after previous: TokenID?, skipSpecialTokens: Bool, to bytes: inout [UInt8]) -> PieceKind {
        guard id >= 0, Int(id) < vocabularySize else { return .none }
        let kind = pieceKinds[Int(id)]
        if kind == .none || (skipSpecialTokens && kind == .special) { return .none }
        bytes.append(contentsOf: pieceBytes[pieceStarts[Int(id)]..<pieceStarts[Int(id) + 1]])
        return kind
    }

    /// The bytes of token `id` (its decoded piece; a SentencePiece piece's `▁` as a space).
    public func bytes(for id: TokenID, after previous: TokenID?) -> [UInt8] {
        guard id >= 0, Int(id) < vocabularySize else { return [] }
        return Array(pieceBytes[pieceStarts[Int(id)]..<pieceStarts[Int(id) + 1]])
    }

    /// Decodes as the `tokenizers` package does with `skip_special_tokens=False`.
    public func decode(_ ids: [TokenID]) -> String {
        decodeSequence(ids, skipSpecialTokens: false)
    }

    public func decode(_ ids: [TokenID], skipSpecialTokens: Bool) -> String {
        decodeSequence(ids, skipSpecialTokens: skipSpecialTokens)
    }

    public func isSpecial(_ id: TokenID) -> Bool {
        guard id >= 0, Int(id) < vocabularySize else { return false }
        return specialFlags[Int(id)]
    }

    /// The id of a token given as it is written in the file (byte-level or `▁` text for
    /// vocabulary entries, plain text for added tokens).
    public func id(forToken text: String) -> TokenID? { idsByText[text] }

    /// The token text the file gives id `id`.
    public func token(for id: TokenID) -> String? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return tokenTexts[Int(id)]
    }

    public func tokenText(for id: TokenID) -> String? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return tokenTexts[Int(id)]
    }
}
