import Foundation

/// The project's JSON reader: strict RFC 8259 over UTF-8 bytes into `JSONValue`, objects
/// in file order (see `JSONObject`). Strings must be valid UTF-8; a lone surrogate escape
/// becomes U+FFFD, since a Swift string cannot hold one. A UTF-8 byte order mark before
/// the text is tolerated, as most JSON readers do.
public struct JSONReader {
    /// Why the text is not JSON, and where.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let reason: String
        /// Byte offset into the text.
        public let offset: Int
        /// 1-based line and column (in bytes) of `offset`, which is what people look for
        /// in an editor.
        public let line: Int
        public let column: Int

        public var description: String { "\(reason) at line \(line), column \(column)" }
    }

    /// Nesting deeper than this (objects and arrays) is refused rather than risking the
    /// stack: a hostile file, not a configuration.
    public static let defaultMaximumDepth = 512

    private let bytes: [UInt8]
    private let maximumDepth: Int
    private let allowsNonFinite: Bool
    private var i = 0
    private var depth = 0

    private init(_ bytes: [UInt8], maximumDepth: Int, allowsNonFinite: Bool) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.allowsNonFinite = allowsNonFinite
    }

    /// Parses one JSON document. `allowsNonFinite` also accepts Python's `NaN`,
    /// `Infinity` and `-Infinity` (what `json.dumps` writes by default).
    public static func parse(
        _ data: Data, maximumDepth: Int = defaultMaximumDepth, allowsNonFinite: Bool = false
    ) throws(Failure) -> JSONValue {
        var p = JSONReader([UInt8](data), maximumDepth: maximumDepth, allowsNonFinite: allowsNonFinite)
        if p.bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.i = 3 }
        let value = try p.value()
        p.skipSpace()
        guard p.i == p.bytes.count else { throw p.fail("unexpected text after the JSON value") }
        return value
    }

    /// Parses JSON text given as a string.
    public static func parse(
        _ text: String, maximumDepth: Int = defaultMaximumDepth, allowsNonFinite: Bool = false
    ) throws(Failure) -> JSONValue {
        try parse(Data(text.utf8), maximumDepth: maximumDepth, allowsNonFinite: allowsNonFinite)
    }

    private mutating func skipSpace() {
        while i < bytes.count {
            switch bytes[i] {
            case 0x20, 0x09, 0x0A, 0x0D: i += 1
            default: return
            }
        }
    }

    private func fail(_ reason: String) -> Failure { fail(reason, at: i) }

    private func fail(_ reason: String, at offset: Int) -> Failure {
        var line = 1, column = 1
        for b in bytes[0..<min(offset, bytes.count)] {
            if b == 0x0A {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return Failure(reason: reason, offset: offset, line: line, column: column)
    }

    private mutating func value() throws(Failure) -> JSONValue {
        skipSpace()
        guard i < bytes.count else { throw fail("unexpected end of JSON") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "N") where allowsNonFinite: return try literal("NaN", .double(.nan))
        case UInt8(ascii: "I") where allowsNonFinite: return try literal("Infinity", .double(.infinity))
        default: return try number()
        }
    }

    private mutating func literal(_ word: StaticString, _ v: JSONValue) throws(Failure) -> JSONValue {
        let n = word.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: n)
        guard i + n <= bytes.count, bytes[i..<(i + n)].elementsEqual(expected) else { throw fail("invalid literal") }
        i += n
        return v
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        if depth > maximumDepth { throw fail("nesting deeper than \(maximumDepth) levels") }
    }

    private mutating func object() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        i += 1
        var o = JSONObject()
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "}") {
            i += 1
            return .object(o)
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            o.members.append((key, try value()))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of JSON in an object") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
            } else if bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(o)
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func array() throws(Failure) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        i += 1
        var a: [JSONValue] = []
        skipSpace()
        if i < bytes.count && bytes[i] == UInt8(ascii: "]") {
            i += 1
            return .array(a)
        }
        while true {
            a.append(try value())
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of JSON in an array") }
            if bytes[i] == UInt8(ascii: ",") {
                i += 1
            } else if bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(a)
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    private mutating func string() throws(Failure) -> String {
        i += 1
        let start = i
        // Most strings (every vocabulary entry of a byte-level tokenizer) have no escapes
        // and are decoded straight from the input.
        while i < bytes.count && bytes[i] != 0x22 && bytes[i] != 0x5C && bytes[i] >= 0x20 { i += 1 }
        if i < bytes.count && bytes[i] == 0x22 {
            defer { i += 1 }
            return try text(bytes[start..<i])
        }
        var out = Array(bytes[start..<i])
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let b = bytes[i]
            switch b {
            case 0x22:
                i += 1
                return try text(out[...])
            case 0x5C:
                i += 1
                guard i < bytes.count else { throw fail("unterminated escape") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var v = try hex4()
                    if (0xD800..<0xDC00).contains(v), i + 6 <= bytes.count, bytes[i] == 0x5C, bytes[i + 1] == UInt8(ascii: "u") {
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
            let b = bytes[i]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw fail("invalid \\u escape")
            }
            v = v << 4 | UInt32(d)
            i += 1
        }
        return v
    }

    private func text(_ b: ArraySlice<UInt8>) throws(Failure) -> String {
        guard let s = String(validating: b, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
        return s
    }

    private mutating func number() throws(Failure) -> JSONValue {
        let start = i
        if i < bytes.count && bytes[i] == UInt8(ascii: "-") {
            i += 1
            if allowsNonFinite && i < bytes.count && bytes[i] == UInt8(ascii: "I") {
                _ = try literal("Infinity", .null)
                return .double(-.infinity)
            }
        }
        func digits() -> Int {
            let s = i
            while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") { i += 1 }
            return i - s
        }
        let intStart = i
        let n = digits()
        if n == 0 {
            guard i < bytes.count else { throw fail("unexpected end of JSON") }
            let c = bytes[i] < 0x80 ? String(UnicodeScalar(bytes[i])) : "non-ASCII text"
            throw fail("expected a JSON value, found '\(c)'")
        }
        if n > 1 && bytes[intStart] == UInt8(ascii: "0") { throw fail("leading zero in a number") }
        var isInteger = true
        if i < bytes.count && bytes[i] == UInt8(ascii: ".") {
            i += 1
            if digits() == 0 { throw fail("digits expected after '.'") }
            isInteger = false
        }
        if i < bytes.count && (bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E")) {
            i += 1
            if i < bytes.count && (bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-")) { i += 1 }
            if digits() == 0 { throw fail("digits expected in the exponent") }
            isInteger = false
        }
        let literal = String(decoding: bytes[start..<i], as: UTF8.self)
        if isInteger, let n = Int(literal) { return .int(n) }
        guard let d = Double(literal) else { throw fail("invalid number") }
        return .double(d)
    }
}
