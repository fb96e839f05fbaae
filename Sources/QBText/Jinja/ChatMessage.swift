import Foundation
import QBJinja

/// One message of a conversation, as a chat template sees it: an object with `role`,
/// `content` and whatever else the caller gives (`tool_calls`, `tool_call_id`, `name`,
/// `reasoning_content`, ...), in the order given.
///
/// `content` is usually a string; it may be null (an assistant turn that only calls tools)
/// or a list of content parts for templates that take them.
public struct ChatMessage: Sendable, Equatable {
    /// Every field of the message, `role` and `content` included, in order.
    public private(set) var fields: JinjaObject

    /// A message with string content.
    public init(role: String, content: String) {
        fields = ["role": .string(role), "content": .string(content)]
    }

    /// A message with any content (string, null, or a list of parts) and extra fields
    /// (e.g. `["tool_calls": [...]]`), which follow role and content.
    public init(role: String, content: JinjaValue, extra: JinjaObject = [:]) {
        fields = ["role": .string(role), "content": content]
        for (k, v) in extra where k != "role" && k != "content" { fields[k] = v }
    }

    /// A message from a JSON-like object; it must have a string `role`.
    public init(fields: JinjaObject, source: String = "messages") throws {
        guard case .string? = fields["role"] else {
            throw ChatTemplateError.invalidMessages(source: source, reason: "a message has no string \"role\"")
        }
        self.fields = fields
    }

    /// Shorthands for text messages.
    public static func system(_ text: String) -> ChatMessage { ChatMessage(role: "system", content: text) }
    public static func user(_ text: String) -> ChatMessage { ChatMessage(role: "user", content: text) }
    public static func assistant(_ text: String) -> ChatMessage { ChatMessage(role: "assistant", content: text) }

    /// "system", "user", "assistant", "tool", ...
    public var role: String {
        get { fields["role"]?.stringValue ?? "" }
        set { fields["role"] = .string(newValue) }
    }

    /// The content; `.none` when the message has none.
    public var content: JinjaValue {
        get { fields["content"] ?? .none }
        set { fields["content"] = newValue }
    }

    /// `tool_calls`, when the message has them.
    public var toolCalls: JinjaValue? { fields["tool_calls"] }

    /// Any field by name (`role` can only be set to a string).
    public subscript(field: String) -> JinjaValue? {
        get { fields[field] }
        set {
            if field == "role", newValue?.stringValue == nil { return }
            fields[field] = newValue
        }
    }

    /// Reads messages from JSON text: either a list of messages, or an object with a
    /// "messages" list (the rest of that object is returned as extra template variables,
    /// e.g. "tools", "add_generation_prompt", "bos_token"). `source` names the text in errors.
    public static func parse(json data: Data, source: String) throws -> (messages: [ChatMessage], context: JinjaObject) {
        let root = try JinjaJSON.parse(data, source: source)
        var context = JinjaObject()
        let list: [JinjaValue]
        switch root {
        case .array(let a):
            list = a
        case .object(let o):
            guard case .array(let a)? = o["messages"] else {
                throw ChatTemplateError.invalidMessages(source: source, reason: "expected a list of messages or an object with a \"messages\" list")
            }
            list = a
            for (k, v) in o where k != "messages" { context[k] = v }
        default:
            throw ChatTemplateError.invalidMessages(source: source, reason: "expected a list of messages or an object with a \"messages\" list")
        }
        var messages: [ChatMessage] = []
        for (i, m) in list.enumerated() {
            guard case .object(let o) = m else {
                throw ChatTemplateError.invalidMessages(source: source, reason: "message \(i) is not an object")
            }
            guard case .string? = o["role"] else {
                throw ChatTemplateError.invalidMessages(source: source, reason: "message \(i) has no string \"role\"")
            }
            messages.append(try ChatMessage(fields: o, source: source))
        }
        return (messages, context)
    }
}

extension ChatMessage: Codable {
    /// Decodes an object with a string "role". Key order follows the decoder (Foundation's
    /// JSONDecoder does not promise one); `parse(json:source:)` keeps the file's order.
    public init(from decoder: Decoder) throws {
        let v = try JinjaValue(from: decoder)
        guard case .object(let o) = v else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a chat message must be an object"))
        }
        guard case .string? = o["role"] else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a chat message needs a string \"role\""))
        }
        fields = o
    }

    public func encode(to encoder: Encoder) throws {
        try JinjaValue.object(fields).encode(to: encoder)
    }
}

extension JinjaValue: Codable {
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Decodes JSON-like data (null, bools, numbers, strings, arrays, objects).
    public init(from decoder: Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: Key.self) {
            var o = JinjaObject()
            for k in keyed.allKeys { o[k.stringValue] = try keyed.decode(JinjaValue.self, forKey: k) }
            self = .object(o)
            return
        }
        if var list = try? decoder.unkeyedContainer() {
            var a: [JinjaValue] = []
            while !list.isAtEnd { a.append(try list.decode(JinjaValue.self)) }
            self = .array(a)
            return
        }
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .none
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int.self) {
            self = .int(i)
        } else if let d = try? c.decode(Double.self) {
            self = .double(d)
        } else {
            self = .string(try c.decode(String.self))
        }
    }

    /// Encodes the JSON-like cases; undefined and callables (which only exist inside a
    /// render) cannot be encoded.
    public func encode(to encoder: Encoder) throws {
        switch self {
        case .object(let o):
            var c = encoder.container(keyedBy: Key.self)
            for (k, v) in o { try c.encode(v, forKey: Key(stringValue: k)) }
        case .array(let a), .tuple(let a):
            var c = encoder.unkeyedContainer()
            for v in a { try c.encode(v) }
        case .none:
            var c = encoder.singleValueContainer()
            try c.encodeNil()
        case .bool(let b):
            var c = encoder.singleValueContainer()
            try c.encode(b)
        case .int(let i):
            var c = encoder.singleValueContainer()
            try c.encode(i)
        case .double(let d):
            var c = encoder.singleValueContainer()
            try c.encode(d)
        case .string(let s), .markup(let s):
            var c = encoder.singleValueContainer()
            try c.encode(s)
        case .undefined, .callable:
            throw EncodingError.invalidValue(
                self, .init(codingPath: encoder.codingPath, debugDescription: "\(typeName) values cannot be encoded"))
        }
    }
}
