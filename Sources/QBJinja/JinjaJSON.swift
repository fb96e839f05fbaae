import Foundation
import QBSupport

/// JSON in and out for templates, through the project's order-keeping reader and writer:
/// Foundation's JSONSerialization loses object key order, and the order is visible
/// (`tojson`, `items()`, `for key in dict`), and `tojson` writes exactly what Python's
/// `json.dumps` writes.
public enum JinjaJSON {
    /// Deeper nesting than this is refused rather than risking the stack.
    static let maximumDepth = 512

    /// Parses JSON text (RFC 8259, plus Python's NaN/Infinity) keeping key order. Integers
    /// that fit in an Int stay integers; other numbers become doubles.
    /// `source` names the text in errors.
    public static func parse(_ data: Data, source: String = "JSON") throws -> JinjaValue {
        do {
            return JinjaValue(json: try JSONReader.parse(data, maximumDepth: maximumDepth, allowsNonFinite: true))
        } catch {
            throw ChatTemplateError.invalidJSON(source: source, reason: error.description)
        }
    }

    /// Parses JSON text given as a string.
    public static func parse(_ text: String, source: String = "JSON") throws -> JinjaValue {
        try parse(Data(text.utf8), source: source)
    }

    /// Python's `json.dumps(value, ensure_ascii=..., indent=..., separators=...,
    /// sort_keys=...)`. `indent` is a string (Python accepts an int n, meaning n spaces).
    /// Throws for values JSON cannot hold (undefined, macros), as Python does.
    package static func dumps(
        _ value: JinjaValue, ensureASCII: Bool = false, indent: String? = nil,
        separators: (item: String, key: String)? = nil, sortKeys: Bool = false
    ) throws -> String {
        let format = JSONWriter.Format(
            indent: indent, itemSeparator: separators?.item, keySeparator: separators?.key ?? ": ",
            escaping: ensureASCII ? .nonASCII : .controls,
            keyOrder: sortKeys ? { PyText.compare($0, $1) < 0 } : nil,
            double: PyText.floatRepr)
        return JSONWriter.string(try json(value), format: format)
    }

    /// A template value as JSON: markup is its text, tuples are arrays.
    private static func json(_ value: JinjaValue) throws -> JSONValue {
        switch value {
        case .none: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .double(let d): return .double(d)
        case .string(let s), .markup(let s): return .string(s)
        case .array(let a), .tuple(let a): return .array(try a.map(json))
        case .object(let o):
            var members: [(key: String, value: JSONValue)] = []
            members.reserveCapacity(o.count)
            for i in 0..<o.count { members.append((o.keys[i], try json(o.values[i]))) }
            return .object(JSONObject(members: members))
        case .undefined, .callable:
            throw JinjaFailure(.type, "Object of type \(value.typeName) is not JSON serializable")
        }
    }
}

extension JinjaValue {
    /// A parsed JSON value as a template value; a repeated object key keeps its first
    /// position and its last value, as Python's `json.loads` does.
    init(json: JSONValue) {
        switch json {
        case .null: self = .none
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .int(i)
        case .double(let d): self = .double(d)
        case .string(let s): self = .string(s)
        case .array(let a): self = .array(a.map(JinjaValue.init(json:)))
        case .object(let o):
            var object = JinjaObject()
            for (key, value) in o { object[key] = JinjaValue(json: value) }
            self = .object(object)
        }
    }
}
