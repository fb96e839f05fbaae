/// An error inside the renderer before it knows the line; the statement that was running
/// adds the line and the template name (see `JinjaRenderer`).
package struct JinjaFailure: Error {
    package enum Kind: Equatable {
        /// Python's TypeError/ValueError and friends.
        case type
        /// Use of an undefined value where jinja2's Undefined raises.
        case undefined
        /// raise_exception(...)
        case raised
        /// What jinja2's sandbox refuses (list.append, ...).
        case security
        case unsupported
        /// A limit of the sandbox (`JinjaLimits`).
        case limit(JinjaLimit)
    }

    package let kind: Kind
    package let message: String
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
        case .limit(let limit): return .limitExceeded(template: template, line: l, limit: limit, message: message)
        }
    }
}
