/// What a chat refuses to do. Each message is one line a person can act on.
public enum ChatError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The new message (with the system prompt, which is never dropped) does not fit in the
    /// context even with every earlier turn dropped.
    case messageTooLong(tokens: Int, budget: Int, hasSystemPrompt: Bool)
    /// A message was sent while a reply was still being generated.
    case busy
    /// A smoke file has nothing to send.
    case noTurns(path: String)
    /// The context asked for is outside what the model allows.
    case invalidContext(requested: Int, modelMaximum: Int)

    public var description: String {
        switch self {
        case .messageTooLong(let tokens, let budget, let hasSystem):
            let what = hasSystem ? "the message and the system prompt are" : "the message is"
            return "\(what) \(tokens) tokens; at most \(budget) fit in the context with room for the reply (try a larger --ctx or a smaller --max-tokens)"
        case .busy:
            return "a reply is still being generated"
        case .noTurns(let path):
            return "\(path): no user turns in the file"
        case .invalidContext(let requested, let maximum):
            return "--ctx must be between 2 and the model's context (\(maximum)), got \(requested)"
        }
    }
}
