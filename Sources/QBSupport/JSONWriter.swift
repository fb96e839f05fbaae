/// The project's JSON writer. It writes text directly, so generated files are
/// byte-for-byte deterministic (key order as given, no platform-dependent number or escape
/// formatting), and it can write exactly what Python's `json.dumps` writes.
public enum JSONWriter {
    /// Which characters a string literal escapes besides `"`, `\` and the C0 controls.
    public enum Escaping: Sendable {
        /// Nothing else: Python's `json.dumps(..., ensure_ascii=False)`.
        case controls
        /// Also DEL (U+007F), so generated files show no invisible characters.
        case controlsAndDelete
        /// Everything outside printable ASCII, astral scalars as UTF-16 surrogate pairs:
        /// Python's default `ensure_ascii=True`.
        case nonASCII
    }

    /// Layout and formatting of `write`. The defaults are Python's `json.dumps` defaults
    /// except `ensure_ascii`.
    public struct Format {
        /// Per-level indentation; nil writes everything on one line.
        public var indent: String?
        /// Between items; Python's default is ", " on one line and "," when indenting.
        public var itemSeparator: String
        public var keySeparator: String
        public var escaping: Escaping
        /// Object members in this order when given (Python's `sort_keys`), else as stored.
        public var keyOrder: ((String, String) -> Bool)?
        /// Text of a finite double; non-finite ones are written `NaN`, `Infinity` and
        /// `-Infinity`, as Python does.
        public var double: (Double) -> String

        public init(
            indent: String? = nil, itemSeparator: String? = nil, keySeparator: String = ": ",
            escaping: Escaping = .controls, keyOrder: ((String, String) -> Bool)? = nil,
            double: @escaping (Double) -> String = { "\($0)" }
        ) {
            self.indent = indent
            self.itemSeparator = itemSeparator ?? (indent == nil ? ", " : ",")
            self.keySeparator = keySeparator
            self.escaping = escaping
            self.keyOrder = keyOrder
            self.double = double
        }
    }

    /// `value` as JSON text.
    public static func string(_ value: JSONValue, format: Format = Format()) -> String {
        var out = ""
        write(value, into: &out, format: format, level: 0)
        return out
    }

    private static func write(_ value: JSONValue, into out: inout String, format: Format, level: Int) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isNaN {
                out += "NaN"
            } else if d.isInfinite {
                out += d < 0 ? "-Infinity" : "Infinity"
            } else {
                out += format.double(d)
            }
        case .string(let s): quote(s, into: &out, escaping: format.escaping)
        case .array(let a):
            if a.isEmpty {
                out += "[]"
                return
            }
            out += "["
            let inner = format.indent.map { "\n" + String(repeating: $0, count: level + 1) }
            for (i, v) in a.enumerated() {
                if i > 0 { out += format.itemSeparator }
                if let inner { out += inner }
                write(v, into: &out, format: format, level: level + 1)
            }
            if let indent = format.indent { out += "\n" + String(repeating: indent, count: level) }
            out += "]"
        case .object(let o):
            if o.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            let inner = format.indent.map { "\n" + String(repeating: $0, count: level + 1) }
            var members = o.members
            if let order = format.keyOrder { members.sort { order($0.key, $1.key) } }
            for (n, member) in members.enumerated() {
                if n > 0 { out += format.itemSeparator }
                if let inner { out += inner }
                quote(member.key, into: &out, escaping: format.escaping)
                out += format.keySeparator
                write(member.value, into: &out, format: format, level: level + 1)
            }
            if let indent = format.indent { out += "\n" + String(repeating: indent, count: level) }
            out += "}"
        }
    }

    /// `s` as a JSON string literal, quotes included.
    public static func quoted(_ s: String, escaping: Escaping = .controlsAndDelete) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count + 2)
        quote(s, into: &out, escaping: escaping)
        return out
    }

    /// Appends `s` as a JSON string literal (lower-case hex escapes, as Python writes them).
    public static func quote(_ s: String, into out: inout String, escaping: Escaping) {
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
                let v = c.value
                if v < 0x20 || (v == 0x7F && escaping != .controls) {
                    out += "\\u" + hex4(v)
                } else if escaping == .nonASCII && v > 0x7E {
                    if v > 0xFFFF {
                        let w = v - 0x10000
                        out += "\\u" + hex4(0xD800 + (w >> 10)) + "\\u" + hex4(0xDC00 + (w & 0x3FF))
                    } else {
                        out += "\\u" + hex4(v)
                    }
                } else {
                    out.unicodeScalars.append(c)
                }
            }
        }
        out += "\""
    }

    private static func hex4(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 4 - s.count)) + s
    }
}
