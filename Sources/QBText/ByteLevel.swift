/// GPT-2's byte-level alphabet: every byte is given a printable Unicode character so that
/// vocabularies of arbitrary byte strings can be stored as JSON text.
///
/// Bytes that are already printable and unambiguous (`!`…`~`, `¡`…`¬`, `®`…`ÿ`) stand for
/// themselves; the other 68 bytes are moved, in order, to U+0100 and up (so a space is `Ġ`,
/// a newline `Ċ`). The tables are computed once; lookups are array indexing.
public enum ByteLevel {
    /// The character (as a Unicode scalar value) that stands for each byte.
    public static let scalarForByte: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 256)
        var next: UInt32 = 256
        for byte in 0..<256 {
            if isSelfMapped(UInt8(byte)) {
                table[byte] = UInt32(byte)
            } else {
                table[byte] = next
                next += 1
            }
        }
        return table
    }()

    /// The inverse of `scalarForByte`, indexed by scalar value; -1 where a scalar is not in
    /// the alphabet. Every mapped scalar is below 0x144, so the table stays small.
    static let byteForScalar: [Int16] = {
        var table = [Int16](repeating: -1, count: 0x144)
        for (byte, scalar) in scalarForByte.enumerated() {
            table[Int(scalar)] = Int16(byte)
        }
        return table
    }()

    private static func isSelfMapped(_ b: UInt8) -> Bool {
        (0x21...0x7E).contains(b) || (0xA1...0xAC).contains(b) || (0xAE...0xFF).contains(b)
    }

    /// The byte-level text for raw bytes (what a tokenizer.json vocabulary stores).
    public static func encode<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        var scalars = String.UnicodeScalarView()
        for b in bytes {
            // Every table entry is a valid scalar below 0x144.
            if let s = Unicode.Scalar(scalarForByte[Int(b)]) { scalars.append(s) }
        }
        return String(scalars)
    }

    /// The raw bytes of byte-level text, or nil if a character is outside the alphabet
    /// (such strings are not byte-level tokens, e.g. added tokens written as plain text).
    public static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            let v = Int(scalar.value)
            guard v < byteForScalar.count else { return nil }
            let b = byteForScalar[v]
            guard b >= 0 else { return nil }
            out.append(UInt8(b))
        }
        return out
    }
}
