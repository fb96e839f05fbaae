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
        case .invalidJSON(let s, let r): return "\(s): invalid JSON: \(r)"
        case .invalidMessages(let s, let r): return "\(s): invalid chat messages: \(r)"
        case .unreadable(let p, let r): return "\(p): cannot read chat template: \(r)"
        }
    }

    /// The message given to `raise_exception`, when that is what failed.
    public var raisedMessage: String? {
        if case .raised(_, _, let m) = self { return m }
        return nil
    }
}

/// An error inside the renderer before it knows the line; the statement that was running
/// adds the line and the template name (see `JinjaRenderer`).
struct JinjaFailure: Error {
    enum Kind {
        /// Python's TypeError/ValueError and friends.
        case type
        /// Use of an undefined value where jinja2's Undefined raises.
        case undefined
        /// raise_exception(...)
        case raised
        /// What jinja2's sandbox refuses (list.append, ...).
        case security
        case unsupported
    }

    let kind: Kind
    let message: String
    var line: Int?

    init(_ kind: Kind, _ message: String, line: Int? = nil) {
        self.kind = kind
        self.message = message
        self.line = line
    }

    func error(template: String, line fallback: Int) -> ChatTemplateError {
        let l = line ?? fallback
        switch kind {
        case .raised: return .raised(template: template, line: l, message: message)
        case .unsupported: return .unsupported(template: template, line: l, construct: message)
        case .type: return .render(template: template, line: l, message: message)
        case .undefined: return .render(template: template, line: l, message: message)
        case .security: return .render(template: template, line: l, message: "security: " + message)
        }
    }
}
