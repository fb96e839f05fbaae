/// Byte-level UTF-8 validation for decoding token pieces.
///
/// Token pieces are bytes, not text: a byte-level BPE piece or a byte-fallback token can
/// hold part of a character. Decoding therefore needs three answers Swift's String does not
/// give directly: whether the bytes at an offset form a complete character, an ill-formed
/// sequence (and how long its maximal subpart is), or a well-formed start that the next
/// bytes may still complete. The rules are the Unicode Standard's Table 3-7 (no overlongs,
/// no surrogates, nothing above U+10FFFF), the same ones Swift, Rust and Python decode by.
enum UTF8Scan {
    enum Sequence: Equatable {
        /// A well-formed character of this many bytes.
        case complete(Int)
        /// Ill-formed; the maximal subpart (the longest well-formed prefix, at least one
        /// byte) is this long. Lossy decoders replace exactly that with one U+FFFD.
        case invalid(Int)
        /// Well-formed so far but cut off by the end of the bytes.
        case truncated
    }

    /// U+FFFD REPLACEMENT CHARACTER in UTF-8.
    static let replacement: [UInt8] = [0xEF, 0xBF, 0xBD]

    /// Classifies the sequence starting at `i` (which must be below `end`).
    @inline(__always)
    static func sequence<C: RandomAccessCollection>(_ b: C, at i: C.Index, end: C.Index) -> Sequence
    where C.Element == UInt8, C.Index == Int {
        let b0 = b[i]
        if b0 < 0x80 { return .complete(1) }
        let need: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; low = 0xA0
        case 0xE1...0xEC, 0xEE, 0xEF: need = 2
        case 0xED: need = 2; high = 0x9F
        case 0xF0: need = 3; low = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; high = 0x8F
        default: return .invalid(1)
        }
        // Only the second byte has a narrowed range; the rest are plain continuations.
        for k in 1...need {
            let j = i + k
            guard j < end else { return .truncated }
            let c = b[j]
            if c < low || c > high { return .invalid(k) }
            low = 0x80
            high = 0xBF
        }
        return .complete(need + 1)
    }

    /// Where a trailing well-formed but incomplete sequence starts (`b.count` if none): the
    /// bytes before it decode the same whatever follows, the bytes from it may not.
    static func incompleteTailStart(_ b: [UInt8]) -> Int {
        let n = b.count
        var j = n - 1
        // A character is at most four bytes, so its lead is among the last four.
        while j >= 0 && j >= n - 4 {
            let byte = b[j]
            if byte & 0xC0 != 0x80 {
                return sequence(b, at: j, end: n) == .truncated ? j : n
            }
            j -= 1
        }
        return n
    }

    /// Appends `b[range]` to `out` as well-formed UTF-8, each maximal subpart of an
    /// ill-formed sequence replaced by one U+FFFD (what `String(decoding:as:)`, Rust's
    /// `from_utf8_lossy` and Python's `errors="replace"` produce).
    static func appendLossy(_ b: [UInt8], _ range: Range<Int>, to out: inout [UInt8]) {
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            // ASCII runs are the common case: copy them without classification.
            if b[i] < 0x80 {
                var j = i + 1
                while j < end && b[j] < 0x80 { j += 1 }
                out.append(contentsOf: b[i..<j])
                i = j
                continue
            }
            switch sequence(b, at: i, end: end) {
            case .complete(let l):
                out.append(contentsOf: b[i..<(i + l)])
                i += l
            case .invalid(let l):
                out.append(contentsOf: replacement)
                i += l
            case .truncated:
                // A cut-off sequence is one maximal subpart.
                out.append(contentsOf: replacement)
                i = end
            }
        }
    }

    /// Appends `b[range]` decoding one character at a time, where every byte that does not
    /// begin a complete character becomes its own U+FFFD (SentencePiece's rule for runs of
    /// byte pieces).
    static func appendPerByte(_ b: [UInt8], _ range: Range<Int>, to out: inout [UInt8]) {
        var i = range.lowerBound
        let end = range.upperBound
        while i < end {
            if case .complete(let l) = sequence(b, at: i, end: end) {
                out.append(contentsOf: b[i..<(i + l)])
                i += l
            } else {
                out.append(contentsOf: replacement)
                i += 1
            }
        }
    }

    /// Whether all of `b` is well-formed UTF-8.
    static func isValid(_ b: [UInt8]) -> Bool {
        var i = 0
        while i < b.count {
            guard case .complete(let l) = sequence(b, at: i, end: b.count) else { return false }
            i += l
        }
        return true
    }
}
