import Foundation
import QBGeneration
import QBRunner
import QBSupport

/// An error answered in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
public struct APIError: Error, Sendable, Equatable {
    public let status: Int
    public let message: String
    public let type: String
    public let param: String?
    public let code: String?
    /// Seconds a client should wait before retrying (503).
    public let retryAfter: Int?

    public init(status: Int, message: String, type: String = "invalid_request_error", param: String? = nil, code: String? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code
        self.retryAfter = retryAfter
    }

    /// A 400 for a request field: its message, the field (`param`) and a machine-readable code.
    public static func invalid(_ message: String, param: String? = nil, code: String? = "invalid_value") -> APIError {
        APIError(status: 400, message: message, param: param, code: code)
    }

    public var body: JSONValue {
        .object(JSONObject(members: [
            ("error", .object(JSONObject(members: [
                ("message", .string(message)), ("type", .string(type)),
                ("param", param.map { .string($0) } ?? .null), ("code", code.map { .string($0) } ?? .null),
            ]))),
        ]))
    }
}

/// What `/v1/chat/completions` and `/v1/completions` ask for, checked field by field.
public struct CompletionRequest: Sendable {
    public enum Input: Sendable, Equatable {
        case chat([(role: ChatRole, content: String)])
        case text(String)

        public static func == (a: Input, b: Input) -> Bool {
            switch (a, b) {
            case (.text(let x), .text(let y)): return x == y
            case (.chat(let x), .chat(let y)): return x.map(\.role) == y.map(\.role) && x.map(\.content) == y.map(\.content)
            default: return false
            }
        }
    }

    public var input: Input
    public var model: String?
    public var maxTokens: Int?
    public var stream = false
    public var includeUsage = false
    public var stop: [String] = []
    public var sampling: SamplingParameters

    /// Fields each endpoint accepts; any other is refused, as OpenAI refuses unrecognized
    /// arguments, so a typo does not pass silently.
    static let common: Set<String> = [
        "model", "max_tokens", "max_completion_tokens", "stream", "stream_options", "stop", "temperature", "top_p",
        "top_k", "min_p", "seed", "n", "presence_penalty", "frequency_penalty", "repeat_penalty", "user", "logprobs",
    ]
    static let chatFields = common.union(["messages"])
    static let textFields = common.union(["prompt", "echo"])

    /// Parses a request body. `chat` picks the endpoint.
    public static func parse(_ body: Data, chat: Bool) throws(APIError) -> CompletionRequest {
        let value: JSONValue
        do {
            value = try JSONReader.parse(body, maximumDepth: 64)
        } catch {
            throw APIError.invalid("the body is not valid JSON: \(error)", code: "invalid_json")
        }
        guard case .object(let o) = value else { throw APIError.invalid("the body must be a JSON object", code: "invalid_json") }
        var seen = Set<String>()
        for (key, _) in o {
            guard (chat ? chatFields : textFields).contains(key) else {
                throw APIError.invalid("unrecognized request argument: \(key)", param: key, code: "unknown_parameter")
            }
            guard seen.insert(key).inserted else { throw APIError.invalid("duplicate argument: \(key)", param: key) }
        }

        let input: Input
        if chat {
            input = .chat(try messages(o["messages"]))
        } else {
            input = .text(try prompt(o["prompt"]))
            if let e = o["echo"], !e.isNull, e.boolValue != false {
                guard e.boolValue != nil else { throw typeError("echo", "a boolean") }
                throw APIError.invalid("echo is not supported", param: "echo", code: "unsupported_value")
            }
        }

        var sampling = SamplingParameters(temperature: 1, topK: 0, topP: 1, minP: 0, repeatPenalty: 1, seed: UInt64.random(in: 0...UInt64.max))
        var r = CompletionRequest(input: input, sampling: sampling)
        if let m = o["model"], !m.isNull {
            guard let s = m.stringValue else { throw typeError("model", "a string") }
            r.model = s
        }
        for key in ["max_tokens", "max_completion_tokens"] {
            guard let v = o[key], !v.isNull else { continue }
            guard let n = v.intValue else { throw typeError(key, "an integer") }
            guard n >= 1 else { throw APIError.invalid("\(key) must be at least 1, got \(n)", param: key) }
            r.maxTokens = n
        }
        if let v = o["stream"], !v.isNull {
            guard let b = v.boolValue else { throw typeError("stream", "a boolean") }
            r.stream = b
        }
        if let v = o["stream_options"], !v.isNull {
            guard let so = v.objectValue else { throw typeError("stream_options", "an object") }
            for (key, value) in so {
                guard key == "include_usage" else {
                    throw APIError.invalid("unrecognized stream option: \(key)", param: "stream_options.\(key)", code: "unknown_parameter")
                }
                guard let b = value.boolValue else { throw typeError("stream_options.include_usage", "a boolean") }
                r.includeUsage = b
            }
            guard r.stream else { throw APIError.invalid("stream_options needs stream: true", param: "stream_options") }
        }
        if let v = o["stop"], !v.isNull {
            if let s = v.stringValue {
                r.stop = [s]
            } else if let a = v.arrayValue {
                guard a.count <= 4 else { throw APIError.invalid("stop takes at most 4 strings", param: "stop") }
                r.stop = try a.map { (e) throws(APIError) -> String in
                    guard let s = e.stringValue else { throw typeError("stop", "a string or an array of strings") }
                    return s
                }
            } else {
                throw typeError("stop", "a string or an array of strings")
            }
        }
        if let v = o["n"], !v.isNull {
            guard let n = v.intValue else { throw typeError("n", "an integer") }
            guard n == 1 else { throw APIError.invalid("only n = 1 is supported", param: "n", code: "unsupported_value") }
        }
        if let v = o["logprobs"], !v.isNull {
            guard let b = v.boolValue else { throw typeError("logprobs", chat ? "a boolean" : "an integer") }
            guard !b else { throw APIError.invalid("logprobs are not supported", param: "logprobs", code: "unsupported_value") }
        }
        if let v = o["user"], !v.isNull, v.stringValue == nil { throw typeError("user", "a string") }

        sampling.temperature = try number(o, "temperature", in: 0...2) ?? 1
        sampling.topP = try number(o, "top_p", in: 0...1) ?? 1
        if sampling.topP == 0 { throw APIError.invalid("top_p must be greater than 0", param: "top_p") }
        sampling.minP = try number(o, "min_p", in: 0...1) ?? 0
        sampling.presencePenalty = try number(o, "presence_penalty", in: -2...2) ?? 0
        sampling.frequencyPenalty = try number(o, "frequency_penalty", in: -2...2) ?? 0
        sampling.repeatPenalty = try number(o, "repeat_penalty", in: 0.01...10) ?? 1
        if let v = o["top_k"], !v.isNull {
            guard let k = v.intValue else { throw typeError("top_k", "an integer") }
            guard k >= 0 else { throw APIError.invalid("top_k must be >= 0", param: "top_k") }
            sampling.topK = k
        }
        if let v = o["seed"], !v.isNull {
            guard let s = v.intValue else { throw typeError("seed", "an integer") }
            sampling.seed = UInt64(bitPattern: Int64(s))
        }
        do {
            try sampling.validate()
        } catch {
            throw APIError.invalid("\(error)", param: "sampling")
        }
        r.sampling = sampling
        return r
    }

    static func typeError(_ param: String, _ expected: String) -> APIError {
        APIError.invalid("\(param) must be \(expected)", param: param, code: "invalid_type")
    }

    static func number(_ o: JSONObject, _ key: String, in range: ClosedRange<Double>) throws(APIError) -> Double? {
        guard let v = o[key], !v.isNull else { return nil }
        let d: Double
        switch v {
        case .int(let i): d = Double(i)
        case .double(let x): d = x
        default: throw typeError(key, "a number")
        }
        guard d.isFinite, range.contains(d) else {
            throw APIError.invalid("\(key) must be between \(range.lowerBound) and \(range.upperBound), got \(d)", param: key)
        }
        return d
    }

    static func messages(_ v: JSONValue?) throws(APIError) -> [(role: ChatRole, content: String)] {
        guard let v, !v.isNull else { throw APIError.invalid("messages is required", param: "messages", code: "missing_required_parameter") }
        guard let a = v.arrayValue else { throw typeError("messages", "an array") }
        guard !a.isEmpty else { throw APIError.invalid("messages must not be empty", param: "messages") }
        var out: [(role: ChatRole, content: String)] = []
        for (i, m) in a.enumerated() {
            let p = "messages[\(i)]"
            guard let o = m.objectValue else { throw typeError(p, "an object") }
            for (key, _) in o where !["role", "content", "name"].contains(key) {
                throw APIError.invalid("unrecognized message field: \(key)", param: "\(p).\(key)", code: "unknown_parameter")
            }
            guard let roleText = o["role"]?.stringValue else { throw typeError("\(p).role", "a string") }
            let role: ChatRole
            switch roleText {
            case "system", "developer": role = .system
            case "user": role = .user
            case "assistant": role = .assistant
            default:
                throw APIError.invalid("\(p).role must be system, developer, user or assistant, got \(roleText)", param: "\(p).role")
            }
            guard let c = o["content"] else { throw APIError.invalid("\(p).content is required", param: "\(p).content", code: "missing_required_parameter") }
            if let s = c.stringValue {
                out.append((role, s))
            } else if let parts = c.arrayValue {
                var text = ""
                for part in parts {
                    guard let po = part.objectValue, po["type"]?.stringValue == "text", let t = po["text"]?.stringValue else {
                        throw APIError.invalid("\(p).content parts must be {\"type\": \"text\", \"text\": ...}", param: "\(p).content", code: "unsupported_value")
                    }
                    text += t
                }
                out.append((role, text))
            } else {
                throw typeError("\(p).content", "a string or an array of text parts")
            }
        }
        return out
    }

    static func prompt(_ v: JSONValue?) throws(APIError) -> String {
        guard let v, !v.isNull else { throw APIError.invalid("prompt is required", param: "prompt", code: "missing_required_parameter") }
        if let s = v.stringValue { return s }
        if let a = v.arrayValue, a.count == 1, let s = a[0].stringValue { return s }
        throw typeError("prompt", "a string (or an array of one string)")
    }
}
