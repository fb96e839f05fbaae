/// A parsed JSON value. Objects keep their members in file order with keys exactly as
/// written (see `JSONObject`), because both tokenizer vocabularies and template output
/// (`tojson`, `items()`) depend on that order.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// An integer written without fraction or exponent that fits in an `Int`.
    case int(Int)
    /// Any other number (and, where the reader allows them, NaN and the infinities).
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    public var isNull: Bool { if case .null = self { return true } else { return false } }
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    public var intValue: Int? { if case .int(let n) = self { return n } else { return nil } }
    public var doubleValue: Double? { if case .double(let d) = self { return d } else { return nil } }
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
}
