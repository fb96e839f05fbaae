import Foundation

/// A JSON object with its members in file order and its keys exactly as written.
///
/// Foundation's JSONSerialization on Linux stores objects as Swift dictionaries, whose
/// String keys compare by canonical equivalence: "ά" (U+03AC) and "ά" (U+03B1 U+0301) are
/// one key there, so six of Llama 2's 32000 vocabulary entries vanished. Vocabularies are
/// byte strings, so objects are kept as member lists and read by iterating.
struct JSONObject: Sequence {
    var members: [(key: String, value: Any)] = []

    var count: Int { members.count }

    /// The value of the last member named `key` (lookups are linear: only small objects are
    /// read by key; vocabularies are iterated).
    subscript(key: String) -> Any? {
        for member in members.reversed() where member.key == key { return member.value }
        return nil
    }

    func makeIterator() -> IndexingIterator<[(key: String, value: Any)]> { members.makeIterator() }
}

/// A strict RFC 8259 parser over UTF-8 bytes. Values are `JSONObject`, `[Any]`, `String`,
/// `Bool`, `Int` (integers without fraction or exponent that fit), `Double`, and `NSNull`.
/// Strings must be valid UTF-8; lone surrogate escapes become U+FFFD (as Python's json and
/// serde_json-with-lossy do not, but no tokenizer file relies on them).
struct JSONParser {
    struct Failure: Error {
        let reason: String
        let offset: Int
    }

    /// Nesting deeper than this is a hostile file, not a tokenizer.
    static let maximumDepth = 256

    private let bytes: [UInt8]
    private var i = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func parse(_ data: Data) throws(Failure) -> Any {
        var p = JSONParser([UInt8](data))
        // A UTF-8 byte order mark is tolerated, as most JSON readers do.
        if p.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.i = 3 }
        p.skipSpace()
        let value = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == p.bytes.count else { throw Failure(reason: "unexpected data after the top-level value", offset: p.i) }
        return value
    }

    private mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private func fail(_ reason: String) -> Failure { Failure(reason: reason, offset: i) }

    private mutating func value(depth: Int) throws(Failure) -> Any {
        guard depth < Self.maximumDepth else { throw fail("nested more than \(Self.maximumDepth) deep") }
        guard i < bytes.count else { throw fail("unexpected end of file") }
        switch bytes[i] {
        case 0x7B: return try object(depth: depth)
        case 0x5B: return try array(depth: depth)
        case 0x22: return try string()
        case 0x74: try literal("true"); return true
        case 0x66: try literal("false"); return false
        case 0x6E: try literal("null"); return NSNull()
        case 0x2D, 0x30...0x39: return try number()
        default: throw fail("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        guard i + n <= bytes.count else { throw fail("unexpected end of file") }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: n)
        guard bytes[i..<(i + n)].elementsEqual(expected) else { throw fail("unexpected character") }
        i += n
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONObject {
        i += 1
        var o = JSONObject()
        skipSpace()
        if i < bytes.count && bytes[i] == 0x7D {
            i += 1
            return o
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == 0x22 else { throw fail("expected a member name") }
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == 0x3A else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            o.members.append((key, try value(depth: depth + 1)))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of file in an object") }
            if bytes[i] == 0x2C {
                i += 1
            } else if bytes[i] == 0x7D {
                i += 1
                return o
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> [Any] {
        i += 1
        var a: [Any] = []
        skipSpace()
        if i < bytes.count && bytes[i] == 0x5D {
            i += 1
            return a
        }
        while true {
            skipSpace()
            a.append(try value(depth: depth + 1))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of file in an array") }
            if bytes[i] == 0x2C {
                i += 1
            } else if bytes[i] == 0x5D {
                i += 1
                return a
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    private mutating func string() throws(Failure) -> String {
        i += 1
        let start = i
        // Fast path: no escapes.
        while i < bytes.count && bytes[i] != 0x22 && bytes[i] != 0x5C && bytes[i] >= 0x20 { i += 1 }
        if i < bytes.count && bytes[i] == 0x22 {
            defer { i += 1 }
            return try text(bytes[start..<i], at: start)
        }
        var out = Array(bytes[start..<i])
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let b = bytes[i]
            switch b {
            case 0x22:
                i += 1
                return try text(out[...], at: start)
            case 0x5C:
                i += 1
                guard i < bytes.count else { throw fail("unterminated string") }
                let e = bytes[i]
                i += 1
                switch e {
                case 0x22: out.append(0x22)
                case 0x5C: out.append(0x5C)
                case 0x2F: out.append(0x2F)
                case 0x62: out.append(0x08)
                case 0x66: out.append(0x0C)
                case 0x6E: out.append(0x0A)
                case 0x72: out.append(0x0D)
                case 0x74: out.append(0x09)
                case 0x75:
                    var v = try hex4()
                    if (0xD800..<0xDC00).contains(v), i + 6 <= bytes.count, bytes[i] == 0x5C, bytes[i + 1] == 0x75 {
                        let save = i
                        i += 2
                        let low = try hex4()
                        if (0xDC00..<0xE000).contains(low) {
                            v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            i = save
                        }
                    }
                    let scalar = Unicode.Scalar(v) ?? "\u{FFFD}"
                    UTF8.encode(scalar) { out.append($0) }
                default:
                    throw fail("invalid escape")
                }
            default:
                guard b >= 0x20 else { throw fail("control character in a string") }
                out.append(b)
                i += 1
            }
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            guard let d = BPETokenizer.hexDigit(bytes[i]) else { throw fail("invalid \\u escape") }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    private func text(_ b: ArraySlice<UInt8>, at offset: Int) throws(Failure) -> String {
        guard let s = String(validating: b, as: UTF8.self) else { throw Failure(reason: "string is not valid UTF-8", offset: offset) }
        return s
    }

    private mutating func number() throws(Failure) -> Any {
        let start = i
        if bytes[i] == 0x2D { i += 1 }
        guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw fail("invalid number") }
        if bytes[i] == 0x30 {
            i += 1
        } else {
            while i < bytes.count && (0x30...0x39).contains(bytes[i]) { i += 1 }
        }
        var integral = true
        if i < bytes.count && bytes[i] == 0x2E {
            integral = false
            i += 1
            guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw fail("invalid number") }
            while i < bytes.count && (0x30...0x39).contains(bytes[i]) { i += 1 }
        }
        if i < bytes.count && (bytes[i] == 0x65 || bytes[i] == 0x45) {
            integral = false
            i += 1
            if i < bytes.count && (bytes[i] == 0x2B || bytes[i] == 0x2D) { i += 1 }
            guard i < bytes.count, (0x30...0x39).contains(bytes[i]) else { throw fail("invalid number") }
            while i < bytes.count && (0x30...0x39).contains(bytes[i]) { i += 1 }
        }
        let literal = String(decoding: bytes[start..<i], as: UTF8.self)
        if integral, let n = Int(literal) { return n }
        guard let d = Double(literal) else { throw fail("invalid number") }
        return d
    }
}
