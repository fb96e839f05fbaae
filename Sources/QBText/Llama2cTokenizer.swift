import Foundation
import QBSupport
import HeapModule

/// llama2.c's `tokenizer.bin`: int32 `max_token_length`, then per token a float32 score, an
/// int32 byte length and the bytes (little-endian). The file does not store the vocabulary
/// size; it comes from the model header.
///
/// Encoding and decoding follow llama2.c `run.c` (`encode()` and `decode()`), including its
/// quirks, so that ids match what llama2.c feeds its models:
/// - BOS (1), then the dummy-prefix token (the vocabulary entry " ") when the text is not
///   empty, then one token per UTF-8 scalar, or its bytes as `<0xNN>` tokens (`byte + 3`);
/// - then, repeatedly, the adjacent pair whose concatenation is a vocabulary entry with the
///   highest score is merged (leftmost on ties; scores must exceed -1e10, as run.c's
///   starting `best_score` demands). BOS takes part in this loop, as in run.c.
/// - Pieces are C strings in run.c, so a piece is cut at its first NUL byte here too.
/// Deviations, where run.c has undefined behaviour: a vocabulary without " " gets no dummy
/// prefix; byte tokens that would be out of range are dropped; duplicate pieces resolve to
/// the lowest id; a NUL in the text is encoded as its byte token (a C string would end).
public final class Llama2cTokenizer: Tokenizer, PieceDecoding {
    public let path: String
    public let vocabularySize: Int
    /// The file's declared longest piece (informational; not needed for encoding).
    public let maxTokenLength: Int
    public var bosTokenID: TokenID? { Self.bos }
    public var eosTokenIDs: Set<TokenID> { [Self.eos] }
    public var addsBOS: Bool { true }

    static let bos: TokenID = 1
    static let eos: TokenID = 2
    /// Pieces and lengths beyond this are corruption, not vocabularies.
    static let maximumPieceLength = 1 << 16
    static let maximumVocabularySize = 1 << 22

    private let pieceBytes: [UInt8]
    private let pieceStarts: [Int]
    private let scores: [Float]
    private let lookup: [ArraySlice<UInt8>: TokenID]
    private let dummyPrefixID: TokenID?

    /// Reads a tokenizer.bin holding (at least) `vocabularySize` tokens.
    public convenience init(contentsOf url: URL, vocabularySize: Int) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TokenizerError.unreadable(path: url.path, reason: FoundationErrorText.reason(error))
        }
        try self.init(data: data, vocabularySize: vocabularySize, path: url.path)
    }

    /// Reads the tokenizer.bin at `path`.
    public convenience init(path: String, vocabularySize: Int) throws {
        try self.init(contentsOf: URL(fileURLWithPath: path), vocabularySize: vocabularySize)
    }

    /// Parses tokenizer.bin bytes. `path` only names the source in errors. Bytes after the
    /// last of the `vocabularySize` tokens are ignored, as llama2.c does.
    public init(data: Data, vocabularySize: Int, path: String) throws {
        self.path = path
        guard vocabularySize >= 3, vocabularySize <= Self.maximumVocabularySize else {
            throw TokenizerError.malformed(path: path, field: "vocab_size", reason: "\(vocabularySize) is not in 3...\(Self.maximumVocabularySize) (ids 1 and 2 are BOS and EOS)")
        }
        self.vocabularySize = vocabularySize
        let bytes = [UInt8](data)
        var offset = 0

        func int32(_ field: String) throws -> Int32 {
            guard offset + 4 <= bytes.count else {
                throw TokenizerError.malformed(path: path, field: field, reason: "file truncated at byte \(bytes.count)")
            }
            let v = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8
                | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
            offset += 4
            return Int32(bitPattern: v)
        }

        let maxLength = try int32("max_token_length")
        guard maxLength >= 0, Int(maxLength) <= Self.maximumPieceLength else {
            throw TokenizerError.malformed(path: path, field: "max_token_length", reason: "\(maxLength) is not in 0...\(Self.maximumPieceLength)")
        }
        maxTokenLength = Int(maxLength)

        var flat: [UInt8] = []
        var starts: [Int] = [0]
        var scores: [Float] = []
        starts.reserveCapacity(vocabularySize + 1)
        scores.reserveCapacity(vocabularySize)
        for i in 0..<vocabularySize {
            let field = "token[\(i)]"
            if offset == bytes.count {
                throw TokenizerError.malformed(path: path, field: field, reason: "file has only \(i) tokens, the model's vocabulary has \(vocabularySize)")
            }
            let score = Float(bitPattern: UInt32(bitPattern: try int32(field + ".score")))
            let length = try int32(field + ".length")
            guard length >= 0, Int(length) <= Self.maximumPieceLength else {
                throw TokenizerError.malformed(path: path, field: field + ".length", reason: "\(length) is not in 0...\(Self.maximumPieceLength)")
            }
            guard offset + Int(length) <= bytes.count else {
                throw TokenizerError.malformed(path: path, field: field, reason: "file truncated: \(length) bytes declared, \(bytes.count - offset) left")
            }
            let piece = bytes[offset..<(offset + Int(length))]
            offset += Int(length)
            // run.c keeps pieces as C strings: everything from a NUL on is invisible.
            flat.append(contentsOf: piece.prefix { $0 != 0 })
            starts.append(flat.count)
            scores.append(score)
        }
        pieceBytes = flat
        pieceStarts = starts
        self.scores = scores

        var lookup: [ArraySlice<UInt8>: TokenID] = [:]
        lookup.reserveCapacity(vocabularySize)
        for id in 0..<vocabularySize {
            let key = ArraySlice(flat[starts[id]..<starts[id + 1]])
            if lookup[key] == nil { lookup[key] = TokenID(id) }
        }
        self.lookup = lookup
        dummyPrefixID = lookup[[0x20]]
    }

    /// How many tokens a tokenizer.bin holds when it ends exactly after its last record
    /// (the format does not store the count; llama2.c takes it from the model). Nil when the
    /// bytes are not a sequence of well-formed records.
    public static func tokenCount(in data: Data) -> Int? {
        // Read in place: this also probes files that are not tokenizers (possibly large,
        // memory-mapped), and gives up at the first record that does not fit.
        data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Int? in
            func int32(at i: Int) -> Int32? {
                guard i + 4 <= bytes.count else { return nil }
                let v = UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
                return Int32(bitPattern: v)
            }
            guard let maxLength = int32(at: 0), maxLength >= 0, Int(maxLength) <= maximumPieceLength else { return nil }
            var offset = 4
            var count = 0
            while offset < bytes.count {
                guard let length = int32(at: offset + 4), length >= 0, Int(length) <= Int(maxLength),
                    offset + 8 + Int(length) <= bytes.count
                else { return nil }
                offset += 8 + Int(length)
                count += 1
                guard count <= maximumVocabularySize else { return nil }
            }
            return count >= 3 ? count : nil
        }
    }

    // MARK: Encoding

    public func encode(_ text: String, addSpecialTokens: Bool, parseSpecialTokens: Bool) -> [TokenID] {
        // The format has no special-token text to parse.
        encode(text, bos: addSpecialTokens, eos: false)
    }

    /// run.c's `encode(text, bos, eos)`.
    public func encode(_ text: String, bos: Bool, eos: Bool) -> [TokenID] {
        var tokens: [TokenID] = []
        tokens.reserveCapacity(text.utf8.count + 3)
        if bos { tokens.append(Self.bos) }
        if !text.isEmpty, let dummy = dummyPrefixID { tokens.append(dummy) }
        var scalarBytes: [UInt8] = []
        for scalar in text.unicodeScalars {
            scalarBytes.removeAll(keepingCapacity: true)
            UTF8.encode(scalar) { scalarBytes.append($0) }
            if let id = lookup[scalarBytes[...]] {
                tokens.append(id)
            } else {
                for b in scalarBytes where Int(b) + 3 < vocabularySize {
                    tokens.append(TokenID(b) + 3)
                }
            }
        }
        mergeByScore(&tokens)
        if eos { tokens.append(Self.eos) }
        return tokens
    }

    /// run.c's merge loop in O(n log n): a max-heap of candidate pairs ordered by score, then
    /// by position, replaces its O(n²) rescans. Node indices keep list order, so "lowest
    /// node index" is run.c's "first pair".
    private func mergeByScore(_ tokens: inout [TokenID]) {
        let n = tokens.count
        guard n > 1 else { return }
        var next = (0..<n).map { $0 + 1 < n ? $0 + 1 : -1 }
        var prev = (0..<n).map { $0 - 1 }
        var alive = [Bool](repeating: true, count: n)
        var heap = Heap<Candidate>()
        var joined: [UInt8] = []
        let threshold: Float = -1e10

        func candidate(_ left: Int, _ right: Int) {
            let a = tokens[left], b = tokens[right]
            joined.removeAll(keepingCapacity: true)
            joined.append(contentsOf: piece(a))
            joined.append(contentsOf: piece(b))
            guard let id = lookup[joined[...]] else { return }
            let score = scores[Int(id)]
            // run.c's strict `score > best_score` starting from -1e10: NaN and very low
            // scores never merge.
            guard score > threshold else { return }
            heap.insert(Candidate(score: score, left: left, right: right, leftToken: a, rightToken: b, merged: id))
        }

        for i in 0..<(n - 1) { candidate(i, i + 1) }
        while let top = heap.popMin() {
            guard alive[top.left], next[top.left] == top.right,
                tokens[top.left] == top.leftToken, tokens[top.right] == top.rightToken
            else { continue }
            tokens[top.left] = top.merged
            alive[top.right] = false
            let after = next[top.right]
            next[top.left] = after
            if after >= 0 { prev[after] = top.left }
            if prev[top.left] >= 0 { candidate(prev[top.left], top.left) }
            if after >= 0 { candidate(top.left, after) }
        }
        var out: [TokenID] = []
        out.reserveCapacity(n)
        for i in 0..<n where alive[i] { out.append(tokens[i]) }
        tokens = out
    }

    /// A merge candidate; `<` means "merges first" (higher score, then the leftmost).
    private struct Candidate: Comparable {
        var score: Float
        var left: Int
        var right: Int
        var leftToken: TokenID
        var rightToken: TokenID
        var merged: TokenID

        static func < (a: Candidate, b: Candidate) -> Bool {
            a.score > b.score || (a.score == b.score && a.left < b.left)
        }

        static func == (a: Candidate, b: Candidate) -> Bool { !(a < b) && !(b < a) }
    }

    // MARK: Decoding

    /// The piece of `id` as stored (cut at NUL), or empty for an unknown id.
    private func piece(_ id: TokenID) -> ArraySlice<UInt8> {
        guard id >= 0, Int(id) < vocabularySize else { return [] }
        return pieceBytes[pieceStarts[Int(id)]..<pieceStarts[Int(id) + 1]]
    }

    /// The stored bytes of token `id` (llama2.c's `vocab[id]`), or nil for an unknown id.
    public func piece(for id: TokenID) -> [UInt8]? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return Array(piece(id))
    }

    /// The merge score of token `id`, or nil for an unknown id.
    public func score(for id: TokenID) -> Float? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return scores[Int(id)]
    }

    /// run.c's `decode(prev, token)`: one leading space is dropped after BOS, and a piece
    /// of the exact form `<0xNN>` stands for that raw byte.
    public func bytes(for id: TokenID, after previous: TokenID?) -> [UInt8] {
        var p = piece(id)
        if previous == Self.bos, p.first == 0x20 { p = p.dropFirst() }
        if p.count == 6, let byte = Self.byteFallback(p) { return [byte] }
        return Array(p)
    }

    /// Text as llama2.c prints a token stream: every token's `decode(prev, token)`, except
    /// BOS and EOS themselves, which delimit sequences and are never printed by run.c.
    public func decode(_ ids: [TokenID]) -> String { decodeSequence(ids, skipSpecialTokens: true) }

    /// The same as `decode(_:)` whatever `skipSpecialTokens` says: run.c never prints BOS
    /// or EOS, and the format has no other special tokens.
    public func decode(_ ids: [TokenID], skipSpecialTokens: Bool) -> String { decodeSequence(ids, skipSpecialTokens: true) }

    var decodingRules: DecodingRules { .plain }

    func appendPiece(_ id: TokenID, after previous: TokenID?, skipSpecialTokens: Bool, to bytes: inout [UInt8]) -> PieceKind {
        guard id != Self.bos && id != Self.eos else { return .none }
        bytes.append(contentsOf: self.bytes(for: id, after: previous))
        return .text
    }

    public func tokenText(for id: TokenID) -> String? {
        guard id >= 0, Int(id) < vocabularySize else { return nil }
        return String(decoding: piece(id), as: UTF8.self)
    }

    /// `<unk>`, BOS and EOS, the SentencePiece control ids llama2.c's export keeps at 0…2.
    public func isSpecial(_ id: TokenID) -> Bool { id >= 0 && id < 3 }

    private static func byteFallback(_ p: ArraySlice<UInt8>) -> UInt8? {
        let b = Array(p)
        guard b[0] == 0x3C, b[1] == 0x30, b[2] == 0x78, b[5] == 0x3E,
            let hi = hexValue(b[3]), let lo = hexValue(b[4])
        else { return nil }
        return hi << 4 | lo
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }
}
