import QBGeneration
import QBText

/// Turns a suite's chat messages into the prompt a session runs.
///
/// The seam: `prompt(for:tokenizer:)` is the one function that decides how a conversation
/// becomes model input. Until QBGeneration offers a `Prompt` case for messages rendered
/// by the model's own chat template, it renders the documented fallback below as plain
/// text; switching to the template changes this function's body only.
///
/// Fallback format (plain text, BOS added by the tokenizer as it declares):
///
///     System: <system content>\n
///     User: <content>\n
///     Assistant: <content>\n
///     ...
///     Assistant:
///
/// one line per message with its role capitalised (the space after the colon is left out
/// when the content starts with whitespace), then the `Assistant:` generation prompt. A follow-up turn renders the earlier text unchanged, so the session reuses the
/// cached prefix (up to where the tokenizer merges across the boundary).
public enum ChatPromptRenderer {
    /// Which renderer produced a prompt; results record it.
    public static let format = "fallback-plain-v1"

    public static func prompt(for messages: [SuiteMessage], tokenizer: any Tokenizer) -> Prompt {
        .text(render(messages))
    }

    /// The fallback rendering, as text.
    public static func render(_ messages: [SuiteMessage]) -> String {
        var out = ""
        for m in messages {
            let role = m.role.rawValue.prefix(1).uppercased() + m.role.rawValue.dropFirst()
            // A reply the model produced after "Assistant:" usually starts with its own
            // space; keeping it as is makes the follow-up's prefix the very text the model
            // saw and wrote.
            let separator = m.content.first?.isWhitespace == true ? "" : " "
            out += "\(role):\(separator)\(m.content)\n"
        }
        return out + "Assistant:"
    }

    /// The conversation a case starts from: the system message (if any) first.
    public static func conversation(system: String?, _ messages: [SuiteMessage]) -> [SuiteMessage] {
        (system.map { [SuiteMessage(role: .system, content: $0)] } ?? []) + messages
    }
}
