/// The pre-tokenizers of Hugging Face byte-level BPE tokenizers, as hand-written scanners.
///
/// HF runs its split patterns through Oniguruma. Rather than carry a regex engine, each
/// supported pattern is recognised by its exact text and replaced by a scanner that walks
/// Unicode scalars in the UTF-8 bytes and reproduces the regex's leftmost-first alternation
/// and backtracking. Character classes follow Oniguruma: `\p{L}` and `\p{N}` are the L* and
/// N* general categories, `\s` is the Unicode White_Space property (Swift's tables agree with
/// the `tokenizers` package on every assigned scalar; only scalars new in Unicode 17 differ).
///
/// Pieces are byte ranges into a working buffer, so splitting allocates no strings.
struct PreTokenizer: Sendable {
    /// One step of a `Sequence` pre-tokenizer, applied to every piece of the previous step.
    enum Stage: Sendable, Equatable {
        /// `Split` with one of the known patterns, behavior `Isolated`, not inverted.
        case split(SplitPattern)
        /// `Digits`: every number scalar alone (`individual`) or runs of them.
        case digits(individual: Bool)
        /// `ByteLevel`: optionally prefix a space, optionally split with GPT-2's pattern.
        /// The byte-to-character mapping itself is implicit: pieces stay raw bytes.
        case byteLevel(addPrefixSpace: Bool, useRegex: Bool)
        /// `Metaspace` (SentencePiece-style vocabularies): spaces become `▁`, a `▁` is put in
        /// front unless the piece starts with one (always, only at the start of the text, or
        /// never), and with `split` the piece is cut before every `▁`.
        case metaspace(prepend: MetaspacePrepend, split: Bool)
    }

    /// Metaspace's `prepend_scheme`.
    enum MetaspacePrepend: String, Sendable, Equatable {
        case always, first, never
    }

    /// U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's visible space.
    static let metaspace: [UInt8] = [0xE2, 0x96, 0x81]

    /// The split regexes we can scan without a regex engine.
    enum SplitPattern: Sendable, Equatable {
        /// Llama 3 (and tiktoken cl100k): digits in groups of up to three.
        case llama3
        /// Qwen2: the Llama 3 pattern with single digits.
        case qwen2
        /// GPT-2 (the ByteLevel pre-tokenizer's built-in pattern).
        case gpt2

        static let llama3Text =
            #"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"#
        static let qwen2Text =
            #"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"#
        static let gpt2Text =
            #"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"#

        /// The pattern whose regex text is exactly `text`, if we have a scanner for it.
        init?(regex text: String) {
            switch text {
            case Self.llama3Text: self = .llama3
            case Self.qwen2Text: self = .qwen2
            case Self.gpt2Text: self = .gpt2
            default: return nil
            }
        }

        var regexText: String {
            switch self {
            case .llama3: return Self.llama3Text
            case .qwen2: return Self.qwen2Text
            case .gpt2: return Self.gpt2Text
            }
        }
    }

    let stages: [Stage]

    /// Reusable arrays for multi-stage splitting, so a long text does not allocate per segment.
    struct Scratch {
        var current: [Range<Int>] = []
        var next: [Range<Int>] = []
    }

    /// Splits `segment` of `buffer` into pieces, appended to `pieces`. A stage that rewrites
    /// bytes (a prefixed space, Metaspace's `▁`) appends the new copy to the end of `buffer`,
    /// so earlier ranges stay valid. `atTextStart` says whether the segment begins the text
    /// (Metaspace's `first` scheme prefixes only there).
    func split(
        _ buffer: inout [UInt8], _ segment: Range<Int>,
        into pieces: inout [Range<Int>], scratch: inout Scratch, atTextStart: Bool = true
    ) {
        guard !segment.isEmpty else { return }
        guard let lastStage = stages.last else {
            pieces.append(segment)
            return
        }
        if stages.count == 1 {
            apply(lastStage, &buffer, segment, atTextStart, into: &pieces)
            return
        }
        scratch.current.removeAll(keepingCapacity: true)
        scratch.current.append(segment)
        var first = atTextStart
        for stage in stages.dropLast() {
            scratch.next.removeAll(keepingCapacity: true)
            for (i, piece) in scratch.current.enumerated() { apply(stage, &buffer, piece, first && i == 0, into: &scratch.next) }
            swap(&scratch.current, &scratch.next)
            first = first && !scratch.current.isEmpty
        }
        for (i, piece) in scratch.current.enumerated() { apply(lastStage, &buffer, piece, first && i == 0, into: &pieces) }
    }

    private func apply(
        _ stage: Stage, _ buffer: inout [UInt8], _ piece: Range<Int>, _ atTextStart: Bool, into out: inout [Range<Int>]
    ) {
        guard !piece.isEmpty else { return }
        switch stage {
        case .metaspace(let prepend, let split):
            let start = buffer.count
            let meta = Self.metaspace
            let replaced = buffer.withUnsafeBufferPointer { p -> [UInt8] in
                var r: [UInt8] = []
                Normalizer.replace(Array(p[piece]), [0x20], meta, into: &r)
                return r
            }
            let wantsPrefix = prepend == .always || (prepend == .first && atTextStart)
            if wantsPrefix && !replaced.starts(with: meta) { buffer.append(contentsOf: meta) }
            buffer.append(contentsOf: replaced)
            let end = buffer.count
            guard split else {
                out.append(start..<end)
                return
            }
            // MergedWithNext: every `▁` starts a new piece.
            var pieceStart = start
            var i = start
            while i + 3 <= end {
                if buffer[i] == 0xE2 && buffer[i + 1] == 0x96 && buffer[i + 2] == 0x81 {
                    if i > pieceStart { out.append(pieceStart..<i) }
                    pieceStart = i
                    i += 3
                } else {
                    i += 1
                }
            }
            if end > pieceStart { out.append(pieceStart..<end) }
        case .split(let pattern):
            buffer.withUnsafeBufferPointer { Scanner.split(pattern, $0, piece, into: &out) }
        case .digits(let individual):
            buffer.withUnsafeBufferPointer { Scanner.splitDigits($0, piece, individual: individual, into: &out) }
        case .byteLevel(let addPrefixSpace, let useRegex):
            var range = piece
            if addPrefixSpace && buffer[piece.lowerBound] != 0x20 {
                let start = buffer.count
                buffer.append(0x20)
                buffer.append(contentsOf: buffer[piece])
                range = start..<buffer.count
            }
            if useRegex {
                buffer.withUnsafeBufferPointer { Scanner.split(.gpt2, $0, range, into: &out) }
            } else {
                out.append(range)
            }
        }
    }
}

/// Character classes the split patterns distinguish.
enum ScalarClass: UInt8 {
    case other = 0
    case letter = 1
    case number = 2
    /// White_Space other than CR and LF.
    case space = 3
    /// CR or LF (`[\r\n]`), also whitespace.
    case newline = 4

    @inline(__always) var isWhitespace: Bool { self == .space || self == .newline }

    @inline(__always) static func of(_ v: UInt32) -> ScalarClass {
        if v < 0x80 {
            switch v {
            case 0x41...0x5A, 0x61...0x7A: return .letter
            case 0x30...0x39: return .number
            case 0x0A, 0x0D: return .newline
            case 0x09, 0x0B, 0x0C, 0x20: return .space
            default: return .other
            }
        }
        guard let scalar = Unicode.Scalar(v) else { return .other }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter:
            return .letter
        case .decimalNumber, .letterNumber, .otherNumber:
            return .number
        default:
            return properties.isWhitespace ? .space : .other
        }
    }
}

/// The scanners. All take the working buffer and a byte range that starts and ends on scalar
/// boundaries; the buffer holds valid UTF-8 (it comes from a Swift String), but a malformed
/// byte is still read as one U+FFFD scalar so no input can make a scanner stall or trap.
enum Scanner {
    typealias Bytes = UnsafeBufferPointer<UInt8>

    /// Decodes the scalar starting at `i`.
    @inline(__always) static func scalar(_ p: Bytes, _ i: Int, _ end: Int) -> (value: UInt32, length: Int) {
        let b0 = UInt32(p[i])
        if b0 < 0x80 { return (b0, 1) }
        let length: Int
        var value: UInt32
        switch b0 {
        case 0xC2...0xDF: length = 2; value = b0 & 0x1F
        case 0xE0...0xEF: length = 3; value = b0 & 0x0F
        case 0xF0...0xF4: length = 4; value = b0 & 0x07
        default: return (0xFFFD, 1)
        }
        guard i + length <= end else { return (0xFFFD, 1) }
        for k in 1..<length {
            let b = UInt32(p[i + k])
            guard b & 0xC0 == 0x80 else { return (0xFFFD, 1) }
            value = (value << 6) | (b & 0x3F)
        }
        return (value, length)
    }

    @inline(__always) static func classAt(_ p: Bytes, _ i: Int, _ end: Int) -> (ScalarClass, Int) {
        let (v, l) = scalar(p, i, end)
        return (ScalarClass.of(v), l)
    }

    static func split(_ pattern: PreTokenizer.SplitPattern, _ p: Bytes, _ range: Range<Int>, into out: inout [Range<Int>]) {
        var pos = range.lowerBound
        let end = range.upperBound
        while pos < end {
            let next: Int
            switch pattern {
            case .llama3: next = llama3End(p, pos, end, maxDigits: 3)
            case .qwen2: next = llama3End(p, pos, end, maxDigits: 1)
            case .gpt2: next = gpt2End(p, pos, end)
            }
            // Every scanner consumes at least one scalar; the max() is a guard against a
            // future scanner bug turning into an infinite loop.
            let stop = max(next, pos + 1)
            out.append(pos..<stop)
            pos = stop
        }
    }

    /// `Digits`: Rust's `char::is_numeric` (N* categories), isolated or contiguous.
    static func splitDigits(_ p: Bytes, _ range: Range<Int>, individual: Bool, into out: inout [Range<Int>]) {
        var pos = range.lowerBound
        let end = range.upperBound
        var runStart = pos
        var runIsNumber = false
        while pos < end {
            let (k, l) = classAt(p, pos, end)
            let isNumber = k == .number
            if pos > runStart && (isNumber != runIsNumber || (isNumber && individual)) {
                out.append(runStart..<pos)
                runStart = pos
            }
            runIsNumber = isNumber
            pos += l
        }
        if pos > runStart { out.append(runStart..<pos) }
    }

    /// Matches `'s|'t|'re|'ve|'m|'ll|'d` after an apostrophe ending at `i`. Case-insensitive
    /// matching follows Oniguruma's case folding, under which `s` also matches U+017F (ſ).
    @inline(__always) static func contractionEnd(_ p: Bytes, _ i: Int, _ end: Int, caseInsensitive: Bool) -> Int? {
        guard i < end else { return nil }
        @inline(__always) func folded(_ v: UInt32) -> UInt32 {
            guard caseInsensitive else { return v }
            if (0x41...0x5A).contains(v) { return v + 0x20 }
            if v == 0x17F { return 0x73 }
            return v
        }
        let (c1, l1) = scalar(p, i, end)
        let j = i + l1
        switch folded(c1) {
        case 0x73, 0x74, 0x6D, 0x64:  // s t m d
            return j
        case 0x72, 0x76:  // r v, followed by e
            guard j < end else { return nil }
            let (c2, l2) = scalar(p, j, end)
            return folded(c2) == 0x65 ? j + l2 : nil
        case 0x6C:  // l, followed by l
            guard j < end else { return nil }
            let (c2, l2) = scalar(p, j, end)
            return folded(c2) == 0x6C ? j + l2 : nil
        default:
            return nil
        }
    }

    @inline(__always) static func runEnd(_ p: Bytes, _ from: Int, _ end: Int, of kind: ScalarClass, limit: Int = .max) -> Int {
        var e = from
        var n = 0
        while e < end && n < limit {
            let (k, l) = classAt(p, e, end)
            guard k == kind else { break }
            e += l
            n += 1
        }
        return e
    }

    /// The whitespace alternatives at a whitespace scalar: `\s*[\r\n]+` (only when
    /// `newlines`), then `\s+(?!\S)`, then `\s+`.
    @inline(__always) static func whitespaceEnd(_ p: Bytes, _ pos: Int, _ end: Int, newlines: Bool) -> Int {
        var e = pos
        var lastStart = pos
        var count = 0
        var lastNewlineEnd = -1
        while e < end {
            let (k, l) = classAt(p, e, end)
            guard k.isWhitespace else { break }
            if k == .newline { lastNewlineEnd = e + l }
            lastStart = e
            e += l
            count += 1
        }
        // \s* backtracks to the last CR/LF of the run and [\r\n]+ ends right after it.
        if newlines && lastNewlineEnd >= 0 { return lastNewlineEnd }
        // (?!\S) holds at the end of the piece; before a non-space it holds one scalar back.
        if e == end || count < 2 { return e }
        return lastStart
    }

    /// One match of the Llama 3 pattern (or Qwen2's, with `maxDigits` 1) starting at `pos`.
    static func llama3End(_ p: Bytes, _ pos: Int, _ end: Int, maxDigits: Int) -> Int {
        let (c0, l0) = scalar(p, pos, end)
        let k0 = ScalarClass.of(c0)
        let after0 = pos + l0
        // (?i:'s|'t|'re|'ve|'m|'ll|'d)
        if c0 == 0x27, let e = contractionEnd(p, after0, end, caseInsensitive: true) { return e }
        // [^\r\n\p{L}\p{N}]?\p{L}+
        if k0 == .letter { return runEnd(p, after0, end, of: .letter) }
        if k0 != .newline && k0 != .number && after0 < end {
            let (k1, l1) = classAt(p, after0, end)
            if k1 == .letter { return runEnd(p, after0 + l1, end, of: .letter) }
        }
        // \p{N}{1,3}
        if k0 == .number { return runEnd(p, after0, end, of: .number, limit: maxDigits - 1) }
        // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
        let q = c0 == 0x20 ? after0 : pos
        if q < end {
            let (kq, lq) = classAt(p, q, end)
            if kq == .other {
                var e = runEnd(p, q + lq, end, of: .other)
                while e < end && (p[e] == 0x0A || p[e] == 0x0D) { e += 1 }
                return e
            }
        }
        guard k0.isWhitespace else { return after0 }
        return whitespaceEnd(p, pos, end, newlines: true)
    }

    /// One match of GPT-2's pattern starting at `pos`.
    static func gpt2End(_ p: Bytes, _ pos: Int, _ end: Int) -> Int {
        let (c0, l0) = scalar(p, pos, end)
        let k0 = ScalarClass.of(c0)
        let after0 = pos + l0
        // 's|'t|'re|'ve|'m|'ll|'d
        if c0 == 0x27, let e = contractionEnd(p, after0, end, caseInsensitive: false) { return e }
        // ' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+': the optional space only helps when a
        // non-space follows; a space itself matches none of the three classes.
        var q = pos
        var kq = k0
        var lq = l0
        if c0 == 0x20 && after0 < end {
            q = after0
            (kq, lq) = classAt(p, q, end)
        }
        switch kq {
        case .letter, .number, .other:
            return runEnd(p, q + lq, end, of: kq)
        case .space, .newline:
            break
        }
        guard k0.isWhitespace else { return after0 }
        return whitespaceEnd(p, pos, end, newlines: false)
    }
}
