import Foundation

/// Everything that can go wrong reading or rendering a chat template. Each case names the
/// template (its file or model) and, for template errors, the line and what is wrong.
public enum ChatTemplateError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The template text is malformed (an unclosed tag, a bad expression, an unknown
    /// filter or test). Found when the template is parsed, before any render.
    case syntax(template: String, line: Int, message: String)
    /// The template uses a Jinja feature this engine does not implement (`include`,
    /// `extends`, some filters); `construct` names it.
    case unsupported(template: String, line: Int, construct: String)
    /// Rendering failed: a type error, an undefined value used, a bad argument.
    case render(template: String, line: Int, message: String)
    /// The template called `raise_exception(message)` (templates do this to reject a
    /// conversation, e.g. "Conversation roles must alternate user/assistant/...").
    case raised(template: String, line: Int, message: String)
    /// The render ran into a limit of the sandbox templates run in (`JinjaLimits`):
    /// too many operations, too much output, a value or total memory too large, too long.
    case limitExceeded(template: String, line: Int, limit: JinjaLimit, message: String)
    /// JSON input (messages, tools, a context file) is malformed.
    case invalidJSON(source: String, reason: String)
    /// The messages are not what a chat template can take (e.g. a message without a role).
    case invalidMessages(source: String, reason: String)
    /// A file could not be read, or holds no template.
    case unreadable(path: String, reason: String)

    public var description: String {
        switch self {
        case .syntax(let t, let line, let m): return "\(t):\(line): template syntax error: \(m)"
        case .unsupported(let t, let line, let c): return "\(t):\(line): unsupported in chat templates: \(c)"
        case .render(let t, let line, let m): return "\(t):\(line): template error: \(m)"
        case .raised(let t, let line, let m): return "\(t):\(line): the template raised an exception: \(m)"
        case .limitExceeded(let t, let line, let limit, let m): return "\(t):\(line): template stopped at its \(limit.rawValue) limit: \(m)"
        case .invalidJSON(let s, let r): return "\(s): invalid JSON: \(r)"
        case .invalidMessages(let s, let r): return "\(s): invalid chat messages: \(r)"
        case .unreadable(let p, let r): return "\(p): cannot read chat template: \(r)"
        }
    }

    /// The limit the render ran into, when that is what failed.
    public var limit: JinjaLimit? {
        if case .limitExceeded(_, _, let l, _) = self { return l }
        return nil
    }

    /// The message given to `raise_exception`, when that is what failed.
    public var raisedMessage: String? {
        if case .raised(_, _, let m) = self { return m }
        return nil
    }
}
