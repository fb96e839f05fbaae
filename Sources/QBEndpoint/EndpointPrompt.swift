import QBGeneration
import QBRunner
import QBSupport

/// Which OpenAI endpoint requests go to.
public enum EndpointAPI: String, Sendable, CaseIterable {
    /// Chat cases to /chat/completions, text prompts to /completions.
    case auto
    /// Everything to /chat/completions (a text prompt as one user message).
    case chat
    /// Everything to /completions (chat cases are left out).
    case completions
}

/// One request body a load level sends, made from a suite case.
public struct EndpointPrompt: Sendable, Equatable {
    public var id: String
    public var chat: Bool
    /// The JSON body without `model`, `stream` and `stream_options`.
    public var fields: [(key: String, value: JSONValue)]
    public var maxTokens: Int

    public static func == (a: EndpointPrompt, b: EndpointPrompt) -> Bool {
        a.id == b.id && a.chat == b.chat && a.maxTokens == b.maxTokens
            && JSONValue.object(JSONObject(members: a.fields)) == JSONValue.object(JSONObject(members: b.fields))
    }

    /// The stop strings the request carries.
    public var stops: [String] {
        fields.first { $0.key == "stop" }?.value.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// The suite's cases that can be sent over HTTP: generation and chat cases with a text
    /// prompt or messages. Cases that need the engine itself (forced end of sequence, stop
    /// strings taken from the output, cancellation, throughput tests, prompts of token
    /// counts) are left out, each with the reason in `skipped`.
    public static func from(
        _ suite: Suite, api: EndpointAPI, maxTokens: Int?
    ) -> (prompts: [EndpointPrompt], skipped: [String]) {
        var prompts: [EndpointPrompt] = []
        var skipped: [String] = []
        for c in suite.cases {
            switch c.kind {
            case .cancel, .throughput, .load:
                skipped.append("\(c.id): a \(c.kind.rawValue) case")
                continue
            case .generate, .chat:
                break
            }
            if c.forceEndOfSequence || c.stopFromOutput != nil || !c.turns.isEmpty {
                skipped.append("\(c.id): needs the engine (forced end, stops from the output or several turns)")
                continue
            }
            var messages: [(role: String, content: String)]?
            var text: String?
            switch c.prompt {
            case .text(let t): text = t
            case .messages(let system, let ms):
                messages = (system.map { [("system", $0)] } ?? []) + ms.map { ($0.role.rawValue, $0.content) }
            case .tokens:
                skipped.append("\(c.id): a prompt of token counts")
                continue
            }
            let chat: Bool
            switch api {
            case .auto: chat = messages != nil
            case .chat: chat = true
            case .completions:
                if messages != nil {
                    skipped.append("\(c.id): a chat case (--api completions)")
                    continue
                }
                chat = false
            }
            let limit = maxTokens ?? c.maxTokens
            guard limit >= 1 else {
                skipped.append("\(c.id): max_tokens 0")
                continue
            }
            var f: [(key: String, value: JSONValue)] = []
            if chat {
                let ms = messages ?? [("user", text ?? "")]
                f.append(("messages", .array(ms.map { .object(JSONObject(members: [("role", .string($0.role)), ("content", .string($0.content))])) })))
            } else {
                f.append(("prompt", .string(text ?? "")))
            }
            f.append(("max_tokens", .int(limit)))
            let s = c.sampling
            f.append(("temperature", .double(s.temperature)))
            if s.temperature > 0 && s.topP < 1 { f.append(("top_p", .double(s.topP))) }
            f.append(("seed", .int(Int(truncatingIfNeeded: s.seed & 0x7fff_ffff))))
            if !c.stop.isEmpty { f.append(("stop", .array(c.stop.map { .string($0) }))) }
            prompts.append(EndpointPrompt(id: c.id, chat: chat, fields: f, maxTokens: limit))
        }
        return (prompts, skipped)
    }

    /// The streamed request's body. `prefix` goes before the prompt text (the first
    /// message's content for chat), so requests that would repeat a prompt differ from their
    /// first tokens and no server can answer them from a cached prefix.
    public func body(model: String, prefix: String? = nil, stream: Bool = true) -> [UInt8] {
        var fields = self.fields
        if let prefix, let i = fields.firstIndex(where: { $0.key == "prompt" || $0.key == "messages" }) {
            switch fields[i].value {
            case .string(let text):
                fields[i].value = .string(prefix + text)
            case .array(var messages):
                if var first = messages.first?.objectValue, let content = first["content"]?.stringValue,
                   let j = first.members.firstIndex(where: { $0.key == "content" }) {
                    first.members[j].value = .string(prefix + content)
                    messages[0] = .object(first)
                    fields[i].value = .array(messages)
                }
            default:
                break
            }
        }
        let members: [(key: String, value: JSONValue)] = [("model", .string(model))] + fields + (stream ? [
            ("stream", .bool(true)), ("stream_options", .object(JSONObject(members: [("include_usage", .bool(true))]))),
        ] : [("stream", .bool(false))])
        let text = JSONWriter.string(.object(JSONObject(members: members)), format: JSONWriter.Format(itemSeparator: ",", keySeparator: ":"))
        return Array(text.utf8)
    }
}
