/// Variables visible at one point of a render. jinja2's scoping rules, which templates
/// rely on: every for-loop iteration, macro call and `with` block gets a fresh child scope
/// (so `set` inside a loop is gone after it — the reason templates use `namespace()`),
/// while `if` blocks share their parent's. Macros see the scope they were defined in, as
/// it is when they are called.
final class JinjaScope {
    var vars: [String: JinjaValue]
    let parent: JinjaScope?

    init(parent: JinjaScope?, vars: [String: JinjaValue] = [:]) {
        self.parent = parent
        self.vars = vars
    }

    /// A scope for entering `frame`: the names jinja2 starts as undefined there hide outer ones.
    convenience init(parent: JinjaScope?, frame: JinjaFrame) {
        self.init(parent: parent)
        for n in frame.undefined { vars[n] = .undefined }
    }

    func lookup(_ name: String) -> JinjaValue? {
        var s: JinjaScope? = self
        while let scope = s {
            if let v = scope.vars[name] { return v }
            s = scope.parent
        }
        return nil
    }
}
