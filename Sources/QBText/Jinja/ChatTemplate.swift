import Foundation
import QBJinja

/// How `ChatTemplate.render` prepares a conversation for a template.
///
/// Real templates disagree on what they accept: some reject a system message, some expect
/// tool-call arguments as objects rather than JSON text, many know nothing of tools. The
/// `llamaCpp` preset makes every template usable the way llama.cpp's server does (the
/// llama.cpp golden prompts are made that way); `transformers` renders exactly what
/// `tokenizer.apply_chat_template` renders, failures included.
public struct ChatTemplateOptions: Sendable, Equatable {
    /// When the template drops or rejects a system message (see
    /// `ChatTemplate.supportsSystemRole`), merge system text into the next user message
    /// ("system\nuser"), or make it a user message of its own when no user message follows.
    public var foldSystemMessages: Bool
    /// When the template reads `tool_call.arguments` as an object, parse arguments given as
    /// JSON text.
    public var parseToolCallArguments: Bool
    /// When the template never mentions tools, write tool calls and tool results into the
    /// message text as JSON (`{"tool_calls": [...]}`, `{"tool_response": {...}}`), as
    /// llama.cpp does.
    public var polyfillTools: Bool
    /// Pass `tools` and `documents` as none when not given (transformers) rather than
    /// leaving them undefined (llama.cpp). Some templates behave differently.
    public var absentToolsAreNone: Bool
    /// What `strftime_now` formats; nil means the time of the render.
    public var now: Date?
    /// The sandbox's limits on one render (see `JinjaTemplate.render`).
    public var limits: JinjaLimits = .standard

    /// Options field by field; see the presets `llamaCpp` and `transformers`.
    public init(
        foldSystemMessages: Bool, parseToolCallArguments: Bool, polyfillTools: Bool, absentToolsAreNone: Bool,
        now: Date? = nil
    ) {
        self.foldSystemMessages = foldSystemMessages
        self.parseToolCallArguments = parseToolCallArguments
        self.polyfillTools = polyfillTools
        self.absentToolsAreNone = absentToolsAreNone
        self.now = now
    }

    /// llama.cpp's `minja::chat_template::apply` (the default).
    public static let llamaCpp = ChatTemplateOptions(
        foldSystemMessages: true, parseToolCallArguments: true, polyfillTools: true, absentToolsAreNone: false)
    /// Hugging Face transformers' `apply_chat_template`: the messages as given.
    public static let transformers = ChatTemplateOptions(
        foldSystemMessages: false, parseToolCallArguments: false, polyfillTools: false, absentToolsAreNone: true)
}

/// A model's chat template: turns a conversation into the prompt text the model was
/// trained on.
///
/// ```swift
/// let template = try ChatTemplate(source: config.chatTemplate ?? "", name: "Llama-3.2-1B")
/// let prompt = try template.render(
///     messages: [.system("Be brief."), .user("Hi!")], addGenerationPrompt: true,
///     bosToken: "<|begin_of_text|>", eosToken: "<|eot_id|>")
/// ```
///
/// Parsing happens once in `init`; `render` is cheap and thread-safe.
public struct ChatTemplate: Sendable {
    /// The parsed template (render it directly for full control of the variables).
    public let template: JinjaTemplate
    /// Whether a system message's text survives rendering. Decided as llama.cpp does: by
    /// rendering a system message and a user message and looking for the system text.
    public let supportsSystemRole: Bool
    /// Whether the template mentions `tools` at all (llama.cpp's test).
    public let supportsTools: Bool
    /// Whether the template reads tool-call arguments as an object (Llama 3.1's template
    /// does `tool_call.arguments | tojson`).
    public let requiresObjectArguments: Bool

    /// The name errors carry, and the template text.
    public var name: String { template.name }
    public var source: String { template.source }

    /// Parses a template. `name` (a file or model) prefixes every error message.
    public init(source: String, name: String = "chat template") throws {
        try self.init(JinjaTemplate(source: source, name: name))
    }

    /// Wraps an already parsed template (probing it for system-role support).
    public init(_ template: JinjaTemplate) {
        self.template = template
        let source = template.source
        // Byte searches: Foundation's String.contains is far slower on templates this size.
        supportsTools = PyText.contains(source, "tools")
        requiresObjectArguments =
            PyText.contains(source, "tool_call.arguments | items") || PyText.contains(source, "tool_call.arguments | tojson")
        let needle = "<System Needle>"
        let probe = try? template.render([
            "messages": [["role": "system", "content": .string(needle)], ["role": "user", "content": "Hey"]],
            "add_generation_prompt": false, "bos_token": "", "eos_token": "",
        ])
        supportsSystemRole = probe.map { PyText.contains($0, needle) } ?? false
    }

    /// Renders the conversation.
    ///
    /// - Parameters:
    ///   - addGenerationPrompt: end with the header of an assistant turn, for generation.
    ///   - bosToken, eosToken: the model's special-token text (templates print them).
    ///   - tools: tool definitions (JSON schema objects), or nil for none.
    ///   - extraContext: more template variables (e.g. `enable_thinking`, `builtin_tools`,
    ///     `date_string`); they override the others.
    ///   - options: how to adapt the messages to the template (default: llama.cpp's way).
    /// - Throws: `ChatTemplateError.raised` when the template rejects the conversation
    ///   (with its message), `.render` for template errors.
    public func render(
        messages: [ChatMessage], addGenerationPrompt: Bool = false, bosToken: String = "", eosToken: String = "",
        tools: [JinjaValue]? = nil, extraContext: JinjaObject = [:], options: ChatTemplateOptions = .llamaCpp
    ) throws -> String {
        let now = options.now ?? Date()
        func context(_ list: [JinjaObject]) -> JinjaObject {
            var c: JinjaObject = [
                "messages": .array(list.map { .object($0) }), "add_generation_prompt": .bool(addGenerationPrompt),
                "bos_token": .string(bosToken), "eos_token": .string(eosToken),
            ]
            if let tools {
                c["tools"] = .array(tools)
            } else if options.absentToolsAreNone {
                c["tools"] = JinjaValue.none
            }
            if options.absentToolsAreNone { c["documents"] = JinjaValue.none }
            for (k, v) in extraContext { c[k] = v }
            return c
        }
        let fold = options.foldSystemMessages && !supportsSystemRole
        let prepared = try prepareChecked(messages, foldSystem: fold, options: options)
        do {
            return try template.render(context(prepared), now: now, limits: options.limits)
        } catch let error as ChatTemplateError where error.limit == nil {
            // A template can accept a system message in the probe yet reject this one
            // (e.g. not first): try once more with system text folded into user turns.
            guard options.foldSystemMessages, !fold, messages.contains(where: { $0.role == "system" }) else { throw error }
            let folded = try prepareChecked(messages, foldSystem: true, options: options)
            guard let output = try? template.render(context(folded), now: now, limits: options.limits) else { throw error }
            return output
        }
    }

    /// `prepare` with its (JSON-writing) failures as typed errors.
    private func prepareChecked(_ messages: [ChatMessage], foldSystem: Bool, options: ChatTemplateOptions) throws -> [JinjaObject] {
        do {
            return try prepare(messages, foldSystem: foldSystem, options: options)
        } catch let f as JinjaFailure {
            throw ChatTemplateError.invalidMessages(source: name, reason: f.message)
        }
    }

    /// llama.cpp's message rewriting (common/chat-template.hpp at the commit of the goldens).
    private func prepare(_ messages: [ChatMessage], foldSystem: Bool, options: ChatTemplateOptions) throws -> [JinjaObject] {
        let parseArguments =
            (options.parseToolCallArguments && requiresObjectArguments) || (options.polyfillTools && !supportsTools)
        let polyfill = options.polyfillTools && !supportsTools
        guard foldSystem || parseArguments || polyfill else { return messages.map(\.fields) }

        var out: [JinjaObject] = []
        var pendingSystem = ""
        func flushSystem() {
            if !pendingSystem.isEmpty {
                out.append(["role": "user", "content": .string(pendingSystem)])
                pendingSystem = ""
            }
        }
        for message in messages {
            var m = message.fields
            let role = message.role
            if case .array(var calls)? = m["tool_calls"] {
                if parseArguments {
                    for i in calls.indices { calls[i] = Self.parsingArguments(calls[i]) }
                    m["tool_calls"] = .array(calls)
                }
                if polyfill {
                    var summary: [JinjaValue] = []
                    for call in calls {
                        guard case .object(let c) = call, c["type"]?.stringValue == "function",
                            case .object(let function)? = c["function"]
                        else { continue }
                        var tc: JinjaObject = ["name": function["name"] ?? .none, "arguments": function["arguments"] ?? .none]
                        if let id = c["id"] { tc["id"] = id }
                        summary.append(.object(tc))
                    }
                    var obj: JinjaObject = ["tool_calls": .array(summary)]
                    let content = m["content"] ?? .none
                    if !content.isNone && !(content == .string("")) { obj["content"] = content }
                    m["content"] = .string(try JinjaJSON.dumps(.object(obj), indent: "  "))
                    m["tool_calls"] = nil
                }
            }
            if polyfill && role == "tool" {
                m["role"] = "user"
                var response: JinjaObject = ["tool": m["name"] ?? .none, "content": m["content"] ?? .none]
                if let id = m["tool_call_id"] { response["tool_call_id"] = id }
                m["content"] = .string(try JinjaJSON.dumps(.object(["tool_response": .object(response)]), indent: "  "))
                m["name"] = nil
            }
            if foldSystem, case .string(let content)? = m["content"] {
                if role == "system" {
                    if !pendingSystem.isEmpty { pendingSystem += "\n" }
                    pendingSystem += content
                    continue
                }
                if role == "user" {
                    if !pendingSystem.isEmpty {
                        m["content"] = .string(pendingSystem + (content.isEmpty ? "" : "\n" + content))
                        pendingSystem = ""
                    }
                } else {
                    flushSystem()
                }
            }
            out.append(m)
        }
        flushSystem()
        return out
    }

    /// A tool call whose `function.arguments` JSON text is replaced by the parsed object
    /// (text that is not JSON is left as it is).
    private static func parsingArguments(_ call: JinjaValue) -> JinjaValue {
        guard case .object(var c) = call, c["type"]?.stringValue == "function", case .object(var function)? = c["function"],
            case .string(let text)? = function["arguments"], let parsed = try? JinjaJSON.parse(text)
        else { return call }
        function["arguments"] = parsed
        c["function"] = .object(function)
        return .object(c)
    }
}

extension ChatTemplate {
    /// The template used for models that carry none: ChatML (`<|im_start|>role\ncontent
    /// <|im_end|>` turns), which is what llama.cpp falls back to and what the old
    /// transformers default was.
    public static let chatMLSource =
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"

    /// A plain-text fallback for models without chat special tokens: "role: content" lines
    /// and "assistant:" as the generation prompt.
    public static let plainSource =
        "{{ bos_token }}{% for message in messages %}{{ message['role'] + ': ' + (message['content'] if message['content'] is string else '') + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ 'assistant:' }}{% endif %}"

    /// The ChatML fallback (see `chatMLSource`).
    public static let chatML = builtIn(chatMLSource, "fallback template (ChatML)")

    /// The plain-text fallback (see `plainSource`).
    public static let plain = builtIn(plainSource, "fallback template (plain)")

    private static func builtIn(_ source: String, _ name: String) -> ChatTemplate {
        do {
            return try ChatTemplate(source: source, name: name)
        } catch {
            // The sources above are constants checked by the tests; this cannot happen.
            preconditionFailure("built-in chat template does not parse: \(error)")
        }
    }
}
