import Foundation
import HeapModule

/// A SentencePiece BPE vocabulary merged by piece scores: GGUF `llama` vocabularies
/// (llama.cpp's SPM tokenizer) and SentencePiece `tokenizer.model` files.
///
/// Encoding follows llama.cpp's `llm_tokenizer_spm`, itself a port of SentencePiece's BPE
/// `Model::Encode`: spaces become `▁` (and a `▁` is put in front of the text and after every
/// special token when the vocabulary adds a space prefix); the text is split into UTF-8
/// characters; repeatedly, of all adjacent pairs whose joined text is a piece, the one with
/// the highest score is merged (leftmost on ties); a final symbol that is not a piece
/// becomes its bytes' `<0xNN>` pieces (or the unknown piece).
///
/// Decoding follows SentencePiece: `▁` becomes a space, the first piece loses its leading
/// space when the vocabulary adds a prefix, and runs of byte pieces decode character by
/// character, each byte that starts no complete character becoming U+FFFD.
public final class SentencePieceTokenizer: Tokenizer, PieceDecoding {
    /// llama.cpp's (and SentencePiece's) token types.
    public enum TokenType: Int32, Sendable {
        case normal = 1, unknown = 2, control = 3, userDefined = 4, unused = 5, byte = 6
    }

    /// Everything the tokenizer is built from.
    public struct Vocabulary: Sendable {
        public var pieces: [String]
        public var scores: [Float]
        public var types: [TokenType]
        public var bos: TokenID?
        public var eos: Set<TokenID>
        public var unknown: TokenID?
        public var addsBOS: Bool
        public var addsEOS: Bool
        /// Whether a `▁` goes in front of the text (SentencePiece's `add_dummy_prefix`).
        public var addSpacePrefix: Bool
        /// llama.cpp lets a merge produce any piece; SentencePiece only normal,
        /// user-defined and unused ones (never control, unknown or byte pieces).
        public var mergesIntoAnyPiece: Bool
        public var chatTemplate: String?

        public init(
            pieces: [String], scores: [Float], types: [TokenType], bos: TokenID?, eos: Set<TokenID>, unknown: TokenID?,
            addsBOS: Bool, addsEOS: Bool, addSpacePrefix: Bool, mergesIntoAnyPiece: Bool, chatTemplate: String? = nil
        ) {
            self.pieces = pieces
            self.scores = scores
            self.types = types
            self.bos = bos
            self.eos = eos
            self.unknown = unknown
            self.addsBOS = addsBOS
            self.addsEOS = addsEOS
            self.addSpacePrefix = addSpacePrefix
            self.mergesIntoAnyPiece = mergesIntoAnyPiece
            self.chatTemplate = chatTemplate
        }
    }

    /// The file this was read from (for messages).
    public let path: String
    public let vocabularySize: Int
    public let bosTokenID: TokenID?
    public let eosTokenIDs: Set<TokenID>
    public let addsBOS: Bool
    public let addsEOS: Bool
    public let chatTemplate: String?
    public let addSpacePrefix: Bool

    let decodingRules: DecodingRules
    private let pieces: [String]
    private let scores: [Float]
    private let types: [TokenType]
    private let unknownID: TokenID?
    /// Piece bytes → id, for every piece (final symbols look up any piece).
    private let lookup: ByteStringTable
    /// Whether a merge may produce id i.
    private let mergeable: [Bool]
    private let byteIDs: [TokenID]
    /// Whether text may be merged in parts cut before each `▁` that follows another
    /// character (see `Metaspace`).
    private let cutsBeforeMetaspace: Bool
    private let addedTokens: AddedTokenMatcher
    /// Decoded bytes of each id, flattened, and how they join the text.
    private let pieceBytes: [UInt8]
    private let pieceStarts: [Int]
    private let pieceKinds: [PieceKind]

    /// Builds the tokenizer; `path` names the source in errors. Throws when the tables
    /// disagree in length or an id is out of range.
    public init(vocabulary v: Vocabulary, path: String) throws {
        let n = v.pieces.count
        guard n > 0, n <= BPETokenizer.maximumVocabularySize else {
            throw TokenizerError.malformed(path: path, field: "tokens", reason: "\(n) pieces")
        }
        guard v.scores.count == n else {
            throw TokenizerError.malformed(path: path, field: "scores", reason: "\(v.scores.count) scores for \(n) pieces")
        }
        guard v.types.count == n else {
            throw TokenizerError.malformed(path: path, field: "token types", reason: "\(v.types.count) types for \(n) pieces")
        }
        for (name, id) in [("bos", v.bos), ("unknown", v.unknown)] + v.eos.map({ ("eos", $0) }) {
            if let id, id < 0 || Int(id) >= n {
                throw TokenizerError.malformed(path: path, field: "\(name) token id", reason: "\(id) is outside the \(n) pieces")
            }
        }
        self.path = path
        vocabularySize = n
        bosTokenID = v.bos
        eosTokenIDs = v.eos
        addsBOS = v.addsBOS && v.bos != nil
        addsEOS = v.addsEOS && !v.eos.isEmpty
        chatTemplate = v.chatTemplate
        addSpacePrefix = v.addSpacePrefix
        pieces = v.pieces
        scores = v.scores.map { $0.isNaN ? -.infinity : $0 }
        types = v.types
        unknownID = v.unknown

        var lookup: [ArraySlice<UInt8>: TokenID] = [:]
        lookup.reserveCapacity(n)
        var mergeable = [Bool](repeating: false, count: n)
        var byteIDs = [TokenID](repeating: -1, count: 256)
        var added: [AddedToken] = []
        var flat: [UInt8] = []
        var starts: [Int] = [0]
        var kinds = [PieceKind](repeating: .text, count: n)
        let space: [UInt8] = [0x20]
        for (id, piece) in v.pieces.enumerated() {
            let bytes = Array(piece.utf8)
            // The first of duplicate pieces wins, as in llama.cpp's token_to_id map.
            if lookup[bytes[...]] == nil { lookup[bytes[...]] = TokenID(id) }
            let type = v.types[id]
            mergeable[id] = v.mergesIntoAnyPiece || type == .normal || type == .userDefined || type == .unused
            switch type {
            case .byte:
                if let b = BPETokenizer.byteFallbackValue(piece) {
                    if byteIDs[Int(b)] < 0 { byteIDs[Int(b)] = TokenID(id) }
                    flat.append(b)
                    kinds[id] = .fallbackByte
                } else {
                    flat.append(contentsOf: bytes)
                }
            case .control, .unknown:
                flat.append(contentsOf: bytes)
                kinds[id] = .special
                if !piece.isEmpty {
                    added.append(AddedToken(id: TokenID(id), content: piece, special: true, singleWord: false, lstrip: false, rstrip: false, normalized: false))
                }
            case .userDefined:
                Normalizer.replace(bytes, PreTokenizer.metaspace, space, into: &flat)
                if !piece.isEmpty {
                    added.append(AddedToken(id: TokenID(id), content: piece, special: false, singleWord: false, lstrip: false, rstrip: false, normalized: false))
                }
            case .normal, .unused:
                Normalizer.replace(bytes, PreTokenizer.metaspace, space, into: &flat)
            }
            starts.append(flat.count)
        }
        self.lookup = ByteStringTable(lookup)
        cutsBeforeMetaspace = lookup[PreTokenizer.metaspace[...]] != nil && Metaspace.cutsAreSafe(lookup.keys)
        self.mergeable = mergeable
        self.byteIDs = byteIDs
        addedTokens = AddedTokenMatcher(added)
        pieceBytes = flat
        pieceStarts = starts
        pieceKinds = kinds
        decodingRules = DecodingRules(leadingSpace: v.addSpacePrefix ? .stripFirstPiece : .keep, byteRuns: .perCharacter)
    }

    // MARK: Encoding

    /// llama.cpp's SPM path of `llama_tokenize`: special tokens (control and unknown pieces
    /// only when `parseSpecialTokens`; user-defined pieces always) are taken out, and every
    /// text fragment that follows the start or a special token gets the space prefix.
    public func encode(_ text: String, addSpecialTokens: Bool, parseSpecialTokens: Bool) -> [TokenID] {
        let buffer = Array(text.utf8)
        var out: [TokenID] = []
        out.reserveCapacity(buffer.count / 3 + 2)
        if addSpecialTokens && addsBOS, let bos = bosTokenID { out.append(bos) }
        let splits: [AddedTokenSplit] =
            addedTokens.isEmpty
            ? (buffer.isEmpty ? [] : [AddedTokenSplit(range: 0..<buffer.count, id: nil)])
            : buffer.withUnsafeBufferPointer { addedTokens.split($0, parseSpecialTokens: parseSpecialTokens) }
        var previousWasSpecial = true
        var work: [UInt8] = []
        var scratch = Scratch()
        scratch.useCache = buffer.count >= 2048
        for split in splits {
            if let id = split.id {
                out.append(id)
                previousWasSpecial = true
                continue
            }
            work.removeAll(keepingCapacity: true)
            if addSpacePrefix && previousWasSpecial { work.append(contentsOf: PreTokenizer.metaspace) }
            Normalizer.replace(Array(buffer[split.range]), [0x20], PreTokenizer.metaspace, into: &work)
            tokenizeFragment(work, &scratch, into: &out)
            previousWasSpecial = false
        }
        if addSpecialTokens && addsEOS, let eos = eosTokenIDs.min() { out.append(eos) }
        return out
    }

    /// Working memory for one encode.
    private struct Scratch {
        var start: [Int] = []
        var length: [Int] = []
        var prev: [Int] = []
        var next: [Int] = []
        var heap = Heap<Bigram>()
        /// Parts already merged → their ids in `cacheStore` (long texts repeat words).
        var useCache = false
        var cache = PieceCache()
        var cacheStore: [TokenID] = []
    }

    /// One text fragment, merged in parts when the vocabulary allows (see `Metaspace`).
    private func tokenizeFragment(_ text: [UInt8], _ s: inout Scratch, into out: inout [TokenID]) {
        text.withUnsafeBufferPointer { p in
            guard cutsBeforeMetaspace, p.count > 3 else { return tokenize(p, 0..<p.count, &s, into: &out) }
            var start = 0
            func part(_ range: Range<Int>) {
                guard !range.isEmpty else { return }
                guard s.useCache else { return tokenize(p, range, &s, into: &out) }
                let h = ByteHash.hash(p, range)
                if let cached = s.cache.lookup(p, range, hash: h) {
                    out.append(contentsOf: s.cacheStore[cached])
                    return
                }
                let first = s.cacheStore.count
                var store: [TokenID] = []
                swap(&store, &s.cacheStore)  // tokenize needs `s` too
                tokenize(p, range, &s, into: &store)
                swap(&store, &s.cacheStore)
                out.append(contentsOf: s.cacheStore[first...])
                s.cache.insert(p, range, hash: h, result: first..<s.cacheStore.count)
            }
            Metaspace.forEachCut(p, 0..<p.count) { cut in
                part(start..<cut)
                start = cut
            }
            part(start..<p.count)
        }
    }

    private struct Bigram: Comparable {
        var score: Float
        var left: Int
        var right: Int
        var size: Int

        /// `<` means "merges first": higher score, then the leftmost.
        static func < (a: Bigram, b: Bigram) -> Bool {
            a.score > b.score || (a.score == b.score && a.left < b.left)
        }

        static func == (a: Bigram, b: Bigram) -> Bool { !(a < b) && !(b < a) }
    }

    private func tokenize(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ s: inout Scratch, into out: inout [TokenID]) {
        guard !range.isEmpty else { return }
        s.start.removeAll(keepingCapacity: true)
        s.length.removeAll(keepingCapacity: true)
        // One symbol per UTF-8 character (the text came from a String, so it is well formed;
        // a stray byte would be a symbol of its own).
        var i = range.lowerBound
        while i < range.upperBound {
            let (_, l) = Scanner.scalar(p, i, range.upperBound)
            s.start.append(i)
            s.length.append(l)
            i += l
        }
        let n = s.start.count
        s.prev.removeAll(keepingCapacity: true)
        s.next.removeAll(keepingCapacity: true)
        for i in 0..<n {
            s.prev.append(i - 1)
            s.next.append(i + 1 < n ? i + 1 : -1)
        }

        func tryAdd(_ left: Int, _ right: Int, _ s: inout Scratch) {
            guard left >= 0, right >= 0 else { return }
            let lo = s.start[left]
            let size = s.length[left] + s.length[right]
            let id = lookup.lookup(p, lo..<(lo + size))
            guard id >= 0, mergeable[Int(id)] else { return }
            s.heap.insert(Bigram(score: scores[Int(id)], left: left, right: right, size: size))
        }

        for i in 1..<max(n, 1) { tryAdd(i - 1, i, &s) }
        // Runs until the heap is empty, so the next word starts with an empty heap (and
        // its storage's capacity).
        while let top = s.heap.popMin() {
            let l = top.left, r = top.right
            // Stale: one side was merged away, or grew since the pair was queued.
            guard s.length[l] > 0, s.length[r] > 0, s.length[l] + s.length[r] == top.size else { continue }
            s.length[l] += s.length[r]
            s.length[r] = 0
            s.next[l] = s.next[r]
            if s.next[r] >= 0 { s.prev[s.next[r]] = l }
            tryAdd(s.prev[l], l, &s)
            tryAdd(l, s.next[l], &s)
        }
        var k = 0
        while k >= 0 && k < n {
            let lo = s.start[k]
            let symbol = p[lo..<(lo + s.length[k])]
            let id = lookup.lookup(p, lo..<(lo + s.length[k]))
            if id >= 0 {
                out.append(id)
            } else if symbol.allSatisfy({ byteIDs[Int($0)] >= 0 }) {
                // Merged symbols are always pieces; only single characters get here.
                for b in symbol { out.append(byteIDs[Int(b)]) }
            } else if let unk = unknownID {
                // Without byte pieces a character the vocabulary lacks is one unknown piece,
                // as SentencePiece makes it (llama.cpp would fail here).
                out.append(unk)
            }
            k = s.next[k]
        }
    }

    // MARK: Decoding

    func appendPiece(_ id: TokenID, after previous: TokenID?, skipSpecialTokens: Bool, to bytes: inout [UInt8]) -> PieceKind {
        guard id >= 0, Int(id) < vocabularySize else { return .none }
        let kind = pieceKinds[Int(id)]
        if skipSpecialTokens && kind == .special { return .none }
        bytes.append(contentsOf: pieceBytes[pieceStarts[Int(id)]..<pieceStarts[Int(id) + 1]])
        return kind
    }

    /// The bytes of token `id`: `▁` as a space, a byte piece as its byte, and after BOS a
    /// first piece without its leading space (as a SentencePiece decode starts).
    public func bytes(for id: TokenID, after previous: TokenID?) -> [UInt8] {
        guard id >= 0, Int(id) < vocabularySize else { return [] }
        var b = pieceBytes[pieceStarts[Int(id)]..<pieceStarts[Int(id) + 1]]
        if addSpacePrefix, previous == nil || previous == bosTokenID, pieceKinds[Int(id)] == .text, b.first == 0x20 {
            b = b.dropFirst()
        }
        return Array(b)
    }

    /// Decodes as SentencePiece does, special tokens written as their text.
    public func decode(_ ids: [TokenID]) -> String { decodeSequence(ids, skipSpecialTokens: false) }

    public func decode(_ ids: [TokenID], skipSpecialTokens: Bool) -> String {
        decodeSequence(ids, skipSpecialTokens: skipSpecialTokens)
    }

    /// Control and unknown pieces.
    public func isSpecial(_ id: TokenID) -> Bool {
        guard id >= 0, Int(id) < vocabularySize else { return false }
        return types[Int(id)] == .control || types[Int(id)] == .unknown
    }

    public func tokenText(for id: TokenID) -> String? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return pieces[Int(id)]
    }

    /// The merge score of piece `id`.
    public func score(for id: TokenID) -> Float? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return scores[Int(id)]
    }

    /// The type of piece `id`.
    public func type(of id: TokenID) -> TokenType? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return types[Int(id)]
    }
}
