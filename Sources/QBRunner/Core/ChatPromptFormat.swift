import QBGeneration
import QBText

/// How a conversation becomes the text, then the ids, the model reads.
///
/// `render(messages:)` is the one function that turns messages into prompt text; every
/// chat path (the terminal chat, the smoke run, history trimming) and the bench's chat
/// cases go through it, so the bench measures the very prompts the chat sends.
///
/// - With a chat template (the tokenizer's, or one given with `--chat-template`), the
///   conversation is rendered by the template with the assistant generation prompt at the
///   end, and the text is encoded with special-token text parsed (`encode(rendered:)`).
/// - Without one (llama2.c checkpoints such as stories260K) the model gets plain
///   continuation: the system prompt and a newline, then each user message directly
///   followed by the reply that continued it, turns separated by newlines. The text is
///   encoded as ordinary text with the tokenizer's BOS.
///
/// Each turn re-renders the whole history, so a follow-up's ids start with the ids already
/// in the session's cache (up to where the tokenizer merges differently across the old
/// reply's end) and only the new part is prefilled.
public struct ChatPromptFormat: Sendable {
    public enum Kind: Sendable {
        case template(ChatTemplate)
        case plainContinuation
    }

    public let kind: Kind
    /// The special-token text templates print as `bos_token` and `eos_token`.
    public let bosToken: String
    public let eosToken: String
    /// Where the template came from, for the banner ("tokenizer", a file), or nil.
    public let origin: String?

    public init(kind: Kind, bosToken: String = "", eosToken: String = "", origin: String? = nil) {
        self.kind = kind
        self.bosToken = bosToken
        self.eosToken = eosToken
        self.origin = origin
    }

    /// The format for a tokenizer: `override` (a chat template file) if given, else the
    /// tokenizer's own template, else plain continuation. A template that does not parse
    /// throws `ChatTemplateError` naming it and the line.
    public static func forTokenizer(_ tokenizer: any Tokenizer, templateFile override: String? = nil) throws -> ChatPromptFormat {
        let (bos, eos) = specialTokenText(tokenizer)
        if let path = override {
            return ChatPromptFormat(kind: .template(try ChatTemplate.load(templateFile: path)), bosToken: bos, eosToken: eos, origin: path)
        }
        guard let source = tokenizer.chatTemplate, !source.isEmpty else {
            return ChatPromptFormat(kind: .plainContinuation)
        }
        // Errors name the tokenizer's file; its template came from the config beside it.
        let path = (tokenizer as? BPETokenizer)?.path
        let name = path.map { "\($0) (chat_template)" } ?? "the tokenizer's chat template"
        return ChatPromptFormat(
            kind: .template(try ChatTemplate(source: source, name: name)), bosToken: bos, eosToken: eos,
            origin: "the tokenizer" + (path.map { " (\($0))" } ?? ""))
    }

    /// BOS and EOS as text: tokenizer_config.json's when there is one, else the
    /// vocabulary's spelling of the ids (the lowest EOS id when there are several).
    static func specialTokenText(_ tokenizer: any Tokenizer) -> (bos: String, eos: String) {
        let config = (tokenizer as? BPETokenizer)?.config
        let bos = config?.bosToken ?? tokenizer.bosTokenID.flatMap { tokenizer.tokenText(for: $0) } ?? ""
        let eos = config?.eosToken ?? tokenizer.eosTokenIDs.min().flatMap { tokenizer.tokenText(for: $0) } ?? ""
        return (bos, eos)
    }

    /// Whether the model gets plain continuation rather than a chat template.
    public var isPlainContinuation: Bool {
        if case .plainContinuation = kind { return true }
        return false
    }

    /// What results record as `settings.chat_format`.
    public var name: String {
        switch kind {
        case .template: return "chat-template"
        case .plainContinuation: return "plain-continuation"
        }
    }

    /// One line for the banner.
    public var summary: String {
        switch kind {
        case .template(let t): return "chat template from \(origin ?? t.name)"
        case .plainContinuation: return "no chat template: plain continuation"
        }
    }

    /// The prompt text for answering `pendingUser` after the conversation so far.
    /// Throws `ChatTemplateError` when the template rejects the conversation.
    public func render(_ conversation: ChatConversation, pendingUser: String) throws -> String {
        try render(messages: conversation.messages(pendingUser: pendingUser))
    }

    /// The prompt text for `messages` (oldest first), ending where the assistant's reply
    /// begins. Throws `ChatTemplateError` when the template rejects the conversation.
    public func render(messages: [(role: ChatRole, content: String)]) throws -> String {
        switch kind {
        case .template(let template):
            return try template.render(
                messages: messages.map { ChatMessage(role: $0.role.rawValue, content: $0.content) },
                addGenerationPrompt: true, bosToken: bosToken, eosToken: eosToken)
        case .plainContinuation:
            var text = ""
            for (role, content) in messages {
                switch role {
                case .system, .assistant:
                    // A reply continues its user message; what comes after it starts a new line.
                    text += content + "\n"
                case .user:
                    text += content
                }
            }
            return text
        }
    }

    /// The ids for answering `pendingUser` after the conversation so far.
    public func tokens(_ conversation: ChatConversation, pendingUser: String, tokenizer: any Tokenizer) throws -> [TokenID] {
        try tokens(messages: conversation.messages(pendingUser: pendingUser), tokenizer: tokenizer)
    }

    /// The ids for `messages` (see `render(messages:)`): a template's text with its
    /// special-token text parsed, plain continuation with the tokenizer's BOS.
    public func tokens(messages: [(role: ChatRole, content: String)], tokenizer: any Tokenizer) throws -> [TokenID] {
        let text = try render(messages: messages)
        switch kind {
        case .template: return tokenizer.encode(rendered: text)
        case .plainContinuation: return tokenizer.encode(text, addSpecialTokens: true, parseSpecialTokens: false)
        }
    }
}
