import QBGeneration
import QBText

/// Turns a suite's chat messages into the prompt a session runs.
///
/// A chat case is rendered by the model's `ChatPromptFormat`, the renderer `quantbench
/// chat` uses: the model's chat template when it has one, plain continuation when it has
/// none. The bench therefore measures the prompts a chat sends, markup and all. A
/// follow-up turn renders the earlier conversation unchanged, so the session reuses the
/// cached prefix (up to where the tokenizer merges across the old reply's end).
public enum ChatPromptRenderer {
    /// The prompt for `messages` as the chat would send it.
    static func prompt(for messages: [SuiteMessage], format: ChatPromptFormat, tokenizer: any Tokenizer) throws -> Prompt {
        .tokens(try format.tokens(messages: messages.map { (role: $0.role, content: $0.content) }, tokenizer: tokenizer))
    }

    /// What results record as `settings.chat_format` for a run on a model with `format`;
    /// a template that does not parse fails the chat cases and is recorded as such.
    static func name(of format: Result<ChatPromptFormat, any Error>) -> String {
        (try? format.get())?.name ?? "unusable-chat-template"
    }

    /// The conversation a case starts from: the system message (if any) first.
    public static func conversation(system: String?, _ messages: [SuiteMessage]) -> [SuiteMessage] {
        (system.map { [SuiteMessage(role: .system, content: $0)] } ?? []) + messages
    }
}
