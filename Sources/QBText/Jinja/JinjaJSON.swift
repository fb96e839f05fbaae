import Foundation

/// JSON in and out for templates. Foundation's JSONSerialization loses object key order,
/// and the order is visible (`tojson`, `items()`, `for key in dict`), so messages and tools
/// are read by this parser, and `tojson` writes exactly what Python's `json.dumps` writes.
public enum JinjaJSON {
    /// Parses JSON text (RFC 8259, plus Python's NaN/Infinity) keeping key order. Integers
    /// that fit in an Int stay integers; other numbers become doubles.
    /// `source` names the text in errors.
    public static func parse(_ data: Data, source: String = "JSON") throws -> JinjaValue {
        var p = JSONReader(bytes: Array(data), source: source)
        return try p.document()
    }

    /// Parses JSON text given as a string.
    public static func parse(_ text: String, source: String = "JSON") throws -> JinjaValue {
        try parse(Data(text.utf8), source: source)
    }

    /// Python's `json.dumps(value, ensure_ascii=..., indent=..., separators=...,
    /// sort_keys=...)`. `indent` is a string (Python accepts an int n, meaning n spaces).
    /// Throws for values JSON cannot hold (undefined, macros), as Python does.
    static func dumps(
        _ value: JinjaValue, ensureASCII: Bool = false, indent: String? = nil,
        separators: (item: String, key: String)? = nil, sortKeys: Bool = false
    ) throws -> String {
        let seps = separators ?? (indent == nil ? (", ", ": ") : (",", ": "))
        var out = ""
        try write(value, into: &out, ensureASCII: ensureASCII, indent: indent, level: 0, seps: seps, sortKeys: sortKeys)
        return out
    }

    private static func write(
        _ value: JinjaValue, into out: inout String, ensureASCII: Bool, indent: String?, level: Int,
        seps: (item: String, key: String), sortKeys: Bool
    ) throws {
        switch value {
        case .none: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isNaN {
                out += "NaN"
            } else if d.isInfinite {
                out += d < 0 ? "-Infinity" : "Infinity"
            } else {
                out += PyText.floatRepr(d)
            }
        case .string(let s), .markup(let s): quote(s, into: &out, ensureASCII: ensureASCII)
        case .array(let a), .tuple(let a):
            if a.isEmpty {
                out += "[]"
                return
            }
            out += "["
            let inner = indent.map { "\n" + String(repeating: $0, count: level + 1) }
            for (i, v) in a.enumerated() {
                if i > 0 { out += seps.item }
                if let inner { out += inner }
                try write(v, into: &out, ensureASCII: ensureASCII, indent: indent, level: level + 1, seps: seps, sortKeys: sortKeys)
            }
            if let indent { out += "\n" + String(repeating: indent, count: level) }
            out += "]"
        case .object(let o):
            if o.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            let inner = indent.map { "\n" + String(repeating: $0, count: level + 1) }
            var order = Array(0..<o.count)
            if sortKeys { order.sort { PyText.compare(o.keys[$0], o.keys[$1]) < 0 } }
            for (n, i) in order.enumerated() {
                if n > 0 { out += seps.item }
                if let inner { out += inner }
                quote(o.keys[i], into: &out, ensureASCII: ensureASCII)
                out += seps.key
                try write(o.values[i], into: &out, ensureASCII: ensureASCII, indent: indent, level: level + 1, seps: seps, sortKeys: sortKeys)
            }
            if let indent { out += "\n" + String(repeating: indent, count: level) }
            out += "}"
        case .undefined, .callable:
            throw JinjaFailure(.type, "Object of type \(value.typeName) is not JSON serializable")
        }
    }

    /// A JSON string literal as Python writes it (lower-case hex escapes).
    static func quote(_ s: String, into out: inout String, ensureASCII: Bool) {
        out += "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if c.value < 0x20 {
                    out += "\\u" + PyText.hex(c.value, 4)
                } else if ensureASCII && c.value > 0x7E {
                    if c.value > 0xFFFF {
                        let v = c.value - 0x10000
                        out += "\\u" + PyText.hex(0xD800 + (v >> 10), 4) + "\\u" + PyText.hex(0xDC00 + (v & 0x3FF), 4)
                    } else {
                        out += "\\u" + PyText.hex(c.value, 4)
                    }
                } else {
                    out.unicodeScalars.append(c)
                }
            }
        }
        out += "\""
    }
}

/// A recursive-descent JSON reader over UTF-8 bytes.
private struct JSONReader {
    let bytes: [UInt8]
    let source: String
    var pos = 0
    var depth = 0
    /// Deeper nesting than this is refused rather than risking the stack.
    static let maximumDepth = 512

    init(bytes: [UInt8], source: String) {
        self.bytes = bytes
        self.source = source
        // A UTF-8 byte order mark is allowed before the text.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { pos = 3 }
    }

    func fail(_ what: String) -> ChatTemplateError {
        // Report a 1-based line and column, which is what people look for in an editor.
        var line = 1, column = 1
        for b in bytes[0..<min(pos, bytes.count)] {
            if b == 0x0A {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return .invalidJSON(source: source, reason: "\(what) at line \(line), column \(column)")
    }

    mutating func document() throws -> JinjaValue {
        let v = try value()
        skipSpace()
        if pos != bytes.count { throw fail("unexpected text after the JSON value") }
        return v
    }

    mutating func skipSpace() {
        while pos < bytes.count, bytes[pos] == 0x20 || bytes[pos] == 0x0A || bytes[pos] == 0x0D || bytes[pos] == 0x09 {
            pos += 1
        }
    }

    mutating func literal(_ word: String, _ v: JinjaValue) throws -> JinjaValue {
        let w = Array(word.utf8)
        guard pos + w.count <= bytes.count, bytes[pos..<(pos + w.count)].elementsEqual(w) else {
            throw fail("invalid literal")
        }
        pos += w.count
        return v
    }

    mutating func value() throws -> JinjaValue {
        skipSpace()
        guard pos < bytes.count else { throw fail("unexpected end of JSON") }
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .none)
        case UInt8(ascii: "N"): return try literal("NaN", .double(.nan))
        case UInt8(ascii: "I"): return try literal("Infinity", .double(.infinity))
        default: return try number()
        }
    }

    mutating func enter() throws {
        depth += 1
        if depth > Self.maximumDepth { throw fail("nesting deeper than \(Self.maximumDepth) levels") }
    }

    mutating func object() throws -> JinjaValue {
        try enter()
        defer { depth -= 1 }
        pos += 1
        var o = JinjaObject()
        skipSpace()
        if pos < bytes.count && bytes[pos] == UInt8(ascii: "}") {
            pos += 1
            return .object(o)
        }
        while true {
            skipSpace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
            let key = try string()
            skipSpace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            pos += 1
            o[key] = try value()
            skipSpace()
            guard pos < bytes.count else { throw fail("unexpected end of JSON in an object") }
            if bytes[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if bytes[pos] == UInt8(ascii: "}") {
                pos += 1
                return .object(o)
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    mutating func array() throws -> JinjaValue {
        try enter()
        defer { depth -= 1 }
        pos += 1
        var a: [JinjaValue] = []
        skipSpace()
        if pos < bytes.count && bytes[pos] == UInt8(ascii: "]") {
            pos += 1
            return .array(a)
        }
        while true {
            a.append(try value())
            skipSpace()
            guard pos < bytes.count else { throw fail("unexpected end of JSON in an array") }
            if bytes[pos] == UInt8(ascii: ",") {
                pos += 1
            } else if bytes[pos] == UInt8(ascii: "]") {
                pos += 1
                return .array(a)
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    mutating func hex4() throws -> UInt32 {
        guard pos + 4 <= bytes.count else { throw fail("truncated \\u escape") }
        var v: UInt32 = 0
        for b in bytes[pos..<(pos + 4)] {
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw fail("invalid \\u escape")
            }
            v = v * 16 + UInt32(d)
        }
        pos += 4
        return v
    }

    mutating func string() throws -> String {
        pos += 1
        var out = [UInt8]()
        while true {
            guard pos < bytes.count else { throw fail("unterminated string") }
            let b = bytes[pos]
            if b == UInt8(ascii: "\"") {
                pos += 1
                break
            }
            if b < 0x20 { throw fail("control character in a string") }
            if b != UInt8(ascii: "\\") {
                out.append(b)
                pos += 1
                continue
            }
            pos += 1
            guard pos < bytes.count else { throw fail("unterminated escape") }
            let e = bytes[pos]
            pos += 1
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
                if (0xD800..<0xDC00).contains(v), pos + 6 <= bytes.count, bytes[pos] == UInt8(ascii: "\\"),
                    bytes[pos + 1] == UInt8(ascii: "u")
                {
                    let save = pos
                    pos += 2
                    let low = try hex4()
                    if (0xDC00..<0xE000).contains(low) {
                        v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        pos = save
                    }
                }
                // A lone surrogate cannot live in a Swift string; U+FFFD stands in for it.
                let scalar = Unicode.Scalar(v) ?? "\u{FFFD}"
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            default:
                throw fail("invalid escape")
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
        return s
    }

    mutating func number() throws -> JinjaValue {
        let start = pos
        if pos < bytes.count && bytes[pos] == UInt8(ascii: "-") {
            pos += 1
            if pos < bytes.count && bytes[pos] == UInt8(ascii: "I") {
                _ = try literal("Infinity", .none)
                return .double(-.infinity)
            }
        }
        func digits() -> Int {
            let s = pos
            while pos < bytes.count, bytes[pos] >= UInt8(ascii: "0"), bytes[pos] <= UInt8(ascii: "9") { pos += 1 }
            return pos - s
        }
        let intStart = pos
        let n = digits()
        if n == 0 {
            guard pos < bytes.count else { throw fail("unexpected end of JSON") }
            let c = bytes[pos] < 0x80 ? String(UnicodeScalar(bytes[pos])) : "non-ASCII text"
            throw fail("expected a JSON value, found '\(c)'")
        }
        if n > 1 && bytes[intStart] == UInt8(ascii: "0") { throw fail("leading zero in a number") }
        var isInteger = true
        if pos < bytes.count && bytes[pos] == UInt8(ascii: ".") {
            pos += 1
            if digits() == 0 { throw fail("digits expected after '.'") }
            isInteger = false
        }
        if pos < bytes.count && (bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E")) {
            pos += 1
            if pos < bytes.count && (bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-")) { pos += 1 }
            if digits() == 0 { throw fail("digits expected in the exponent") }
            isInteger = false
        }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        if isInteger, let i = Int(text) { return .int(i) }
        guard let d = Double(text) else { throw fail("invalid number") }
        return .double(d)
    }
}
