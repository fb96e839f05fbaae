/// How a tokenizer turns ids back into text, one token at a time.
///
/// Whole-sequence decoding and streaming share this one description, so the text a stream
/// emits piece by piece is, by construction, the text `decode` gives for the whole sequence.
/// A tokenizer says what each id contributes (`appendPiece`) and which sequence-level rules
/// apply (`decodingRules`); `DecodeState` does the rest.
protocol PieceDecoding: Sendable {
    var decodingRules: DecodingRules { get }

    /// Appends the bytes token `id` contributes when it follows `previous`, and says how
    /// they join the text. Unknown ids contribute nothing. Never traps.
    func appendPiece(_ id: TokenID, after previous: TokenID?, skipSpecialTokens: Bool, to bytes: inout [UInt8]) -> PieceKind
}

/// What one token's bytes are.
enum PieceKind: Equatable {
    /// Nothing (a skipped special token, an unknown id).
    case none
    /// Ordinary text; may hold part of a character (byte-level BPE), which the next
    /// pieces complete.
    case text
    /// A special token's text.
    case special
    /// One raw byte from a byte-fallback token (`<0xNN>`); consecutive ones are decoded
    /// together under `DecodingRules.byteRuns`.
    case fallbackByte
}

/// Sequence-level decoding rules.
struct DecodingRules: Sendable, Equatable {
    enum LeadingSpace: Sendable, Equatable {
        /// Text is kept as is.
        case keep
        /// Up to this many spaces are removed from the start of the decoded text, whatever
        /// token they came from: Hugging Face's `Strip` decoder after `Fuse`.
        case stripCharacters(Int)
        /// The first piece, when it is ordinary text starting with a space, loses that
        /// space: SentencePiece's removal of its dummy prefix (a byte-fallback space or a
        /// special token's text coming first keeps it).
        case stripFirstPiece
    }

    enum ByteRuns: Sendable, Equatable {
        /// A run of byte-fallback tokens that is not well-formed UTF-8 as a whole becomes one
        /// U+FFFD per byte (Hugging Face's `ByteFallback` decoder).
        case wholeRun
        /// A run is decoded character by character; each byte that starts no complete
        /// character becomes one U+FFFD (SentencePiece).
        case perCharacter
    }

    var leadingSpace: LeadingSpace = .keep
    var byteRuns: ByteRuns = .perCharacter

    static let plain = DecodingRules()
}

/// The running state of decoding one sequence: bytes held back until they are whole text.
///
/// Text bytes are released as soon as they cannot decode differently, i.e. up to a trailing
/// well-formed but incomplete UTF-8 sequence; ill-formed bytes become U+FFFD exactly as a
/// lossy decode of the whole sequence makes them. A byte-fallback run is held until it ends
/// when its validity is judged as a whole.
struct DecodeState: Sendable {
    let rules: DecodingRules
    private(set) var previous: TokenID?
    /// Text bytes not yet released (a trailing incomplete character).
    private var pending: [UInt8] = []
    /// The current run of byte-fallback bytes.
    private var run: [UInt8] = []
    /// The bytes of the piece being pushed (reused).
    private var piece: [UInt8] = []
    /// Whether a piece has been seen (for `stripFirstPiece`).
    private var sawPiece = false
    /// Leading spaces still to strip (for `stripCharacters`); 0 once text was released.
    private var stripRemaining: Int

    init(rules: DecodingRules, previous: TokenID? = nil) {
        self.rules = rules
        self.previous = previous
        if case .stripCharacters(let n) = rules.leadingSpace { stripRemaining = n } else { stripRemaining = 0 }
    }

    /// Marks the start of the text as already passed: used when a stream continues a
    /// sequence whose beginning was decoded elsewhere (leading-space rules no longer apply).
    mutating func markStarted() {
        sawPiece = true
        stripRemaining = 0
    }

    /// Feeds one token; appends to `out` the well-formed UTF-8 it completes.
    mutating func push(_ id: TokenID, _ decoder: some PieceDecoding, skipSpecialTokens: Bool, into out: inout [UInt8]) {
        piece.removeAll(keepingCapacity: true)
        let kind = decoder.appendPiece(id, after: previous, skipSpecialTokens: skipSpecialTokens, to: &piece)
        previous = id
        switch kind {
        case .none:
            return
        case .fallbackByte:
            sawPiece = true
            if !pending.isEmpty { releasePending(final: true, into: &out) }
            run.append(contentsOf: piece)
            if rules.byteRuns == .perCharacter { releaseRun(final: false, into: &out) }
        case .text, .special:
            if !run.isEmpty { releaseRun(final: true, into: &out) }
            var start = 0
            if kind == .text, !sawPiece, rules.leadingSpace == .stripFirstPiece, piece.first == 0x20 { start = 1 }
            sawPiece = true
            if pending.isEmpty && start == 0 {
                swap(&pending, &piece)
            } else {
                pending.append(contentsOf: piece[start...])
            }
            releasePending(final: false, into: &out)
        }
    }

    /// Ends the sequence: whatever is held back is released (an incomplete character
    /// becomes U+FFFD).
    mutating func finish(into out: inout [UInt8]) {
        if !run.isEmpty { releaseRun(final: true, into: &out) }
        if !pending.isEmpty { releasePending(final: true, into: &out) }
    }

    private mutating func releasePending(final: Bool, into out: inout [UInt8]) {
        let cut = final ? pending.count : UTF8Scan.incompleteTailStart(pending)
        guard cut > 0 else { return }
        let start = out.count
        UTF8Scan.appendLossy(pending, 0..<cut, to: &out)
        stripLeadingSpaces(&out, from: start)
        if cut == pending.count {
            pending.removeAll(keepingCapacity: true)
        } else {
            pending.removeFirst(cut)
        }
    }

    private mutating func releaseRun(final: Bool, into out: inout [UInt8]) {
        let start = out.count
        switch rules.byteRuns {
        case .wholeRun:
            guard final else { return }
            if UTF8Scan.isValid(run) {
                out.append(contentsOf: run)
            } else {
                for _ in run { out.append(contentsOf: UTF8Scan.replacement) }
            }
            run.removeAll(keepingCapacity: true)
        case .perCharacter:
            let cut = final ? run.count : UTF8Scan.incompleteTailStart(run)
            guard cut > 0 else { return }
            UTF8Scan.appendPerByte(run, 0..<cut, to: &out)
            run.removeFirst(cut)
        }
        stripLeadingSpaces(&out, from: start)
    }

    /// Applies `stripCharacters` to text just released at `out[start...]`.
    private mutating func stripLeadingSpaces(_ out: inout [UInt8], from start: Int) {
        guard stripRemaining > 0, start < out.count else { return }
        var end = start
        while end < out.count && stripRemaining > 0 && out[end] == 0x20 {
            end += 1
            stripRemaining -= 1
        }
        if end < out.count { stripRemaining = 0 }
        if end > start { out.removeSubrange(start..<end) }
    }
}

extension PieceDecoding {
    /// Decodes a whole sequence by the same steps a stream takes.
    func decodeSequence(_ ids: [TokenID], skipSpecialTokens: Bool) -> String {
        var state = DecodeState(rules: decodingRules)
        var out: [UInt8] = []
        out.reserveCapacity(ids.count * 4)
        for id in ids { state.push(id, self, skipSpecialTokens: skipSpecialTokens, into: &out) }
        state.finish(into: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
