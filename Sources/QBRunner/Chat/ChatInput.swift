import Foundation

/// One line typed into the chat: a message for the model, a command, or nothing.
public enum ChatInput: Sendable, Equatable {
    case message(String)
    case command(ChatCommand)
    /// A blank line: ignored (sending nothing would only make the model ramble).
    case empty

    /// Lines starting with `/` are commands; `//` sends a message that starts with `/`.
    public static func parse(_ line: String) -> ChatInput {
        // readLine keeps a "\r" when the input has Windows line ends.
        let text = line.hasSuffix("\r") ? String(line.dropLast()) : line
        if text.trimmingCharacters(in: .whitespaces).isEmpty { return .empty }
        if text.hasPrefix("//") { return .message(String(text.dropFirst())) }
        guard text.hasPrefix("/") else { return .message(text) }
        let body = text.dropFirst()
        let name = body.prefix { !$0.isWhitespace }
        let argument = body.dropFirst(name.count).trimmingCharacters(in: .whitespaces)
        let arg: String? = argument.isEmpty ? nil : argument
        switch name.lowercased() {
        case "help", "?": return .command(.help)
        case "clear": return .command(.clear)
        case "stats": return .command(.stats)
        case "save": return .command(.save(path: arg))
        case "system": return .command(.system(arg))
        case "exit", "quit": return .command(.exit)
        default: return .command(.unknown(String(name)))
        }
    }
}

/// The chat's commands.
public enum ChatCommand: Sendable, Equatable {
    case help
    /// Forget the turns (the system prompt stays).
    case clear
    /// Figures of the last reply.
    case stats
    /// Save the history as JSONL; nil when no file was named.
    case save(path: String?)
    /// Set the system prompt; nil removes it.
    case system(String?)
    case exit
    case unknown(String)

    /// The `/help` text.
    public static let helpText = """
        /system TEXT  set the system prompt (kept when old turns are dropped); /system alone removes it
        /clear        forget the conversation (the system prompt stays)
        /stats        time to first token, tokens/s and memory of the last reply
        /save FILE    save the conversation as JSONL (resume it with --resume FILE)
        /help         this list
        /exit         leave (as does Ctrl-D); Ctrl-C stops a reply without leaving
        A line starting with // sends a message starting with /.

        """
}
