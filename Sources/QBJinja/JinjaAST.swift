import Foundation

/// The parsed form of a template: statements (`JinjaNode`) holding expressions
/// (`JinjaExpr`). Everything is immutable and Sendable, so a parsed template can be shared
/// by any number of concurrent renders.
indirect enum JinjaExpr: Sendable {
    case literal(JinjaValue)
    case name(String)
    case list([JinjaExpr])
    /// Tuples behave as lists here (they are rare in chat templates and print the same
    /// way apart from the brackets).
    case tuple([JinjaExpr])
    case dict([(JinjaExpr, JinjaExpr)])
    case getattr(JinjaExpr, String)
    case getitem(JinjaExpr, JinjaExpr)
    case slice(JinjaExpr, start: JinjaExpr?, stop: JinjaExpr?, step: JinjaExpr?)
    case call(JinjaExpr, JinjaArguments)
    case filter(JinjaExpr, JinjaFilter, JinjaArguments)
    case test(JinjaExpr, JinjaTest, JinjaArguments, negated: Bool)
    case not(JinjaExpr)
    case negate(JinjaExpr)
    case plus(JinjaExpr)
    case binary(JinjaBinaryOp, JinjaExpr, JinjaExpr)
    case and(JinjaExpr, JinjaExpr)
    case or(JinjaExpr, JinjaExpr)
    /// `a ~ b ~ c`: string concatenation.
    case concat([JinjaExpr])
    /// `a < b <= c`: Python's chained comparison.
    case compare(JinjaExpr, [(JinjaCompareOp, JinjaExpr)])
    /// `a if cond else b` (no else: undefined).
    case conditional(then: JinjaExpr, test: JinjaExpr, otherwise: JinjaExpr?)
}

/// Call arguments: positional, then keyword, in source order.
struct JinjaArguments: Sendable {
    var positional: [JinjaExpr] = []
    var keyword: [(String, JinjaExpr)] = []
    static let none = JinjaArguments()
}

enum JinjaBinaryOp: String, Sendable {
    case add = "+", subtract = "-", multiply = "*", divide = "/", floorDivide = "//", modulo = "%", power = "**"
}

enum JinjaCompareOp: String, Sendable {
    case eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">=", `in` = "in", notIn = "not in"
}

/// Assignment targets of `set` and `for`.
enum JinjaTarget: Sendable {
    case name(String)
    /// `set ns.attr = ...` (only namespaces accept it).
    case attribute(String, String)
    case tuple([JinjaTarget])
}

/// A statement. Line numbers are where the tag starts, for error messages.
indirect enum JinjaNode: Sendable {
    case text(String)
    case output(JinjaExpr, line: Int)
    case `if`([(test: JinjaExpr, body: [JinjaNode])], otherwise: [JinjaNode], line: Int)
    case `for`(JinjaForLoop)
    case set(JinjaTarget, JinjaExpr, line: Int)
    /// `{% set x %}...{% endset %}`, optionally with filters applied to the captured text.
    case setBlock(JinjaTarget, body: [JinjaNode], filters: [(JinjaFilter, JinjaArguments)], frame: JinjaFrame = JinjaFrame(), line: Int)
    case macro(JinjaMacro)
    /// `{% call(args) m(...) %}body{% endcall %}`: calls `m` with `caller` bound to the body.
    case callBlock(call: JinjaExpr, caller: JinjaMacro, line: Int)
    case filterBlock(body: [JinjaNode], filters: [(JinjaFilter, JinjaArguments)], frame: JinjaFrame = JinjaFrame(), line: Int)
    case with(assignments: [(JinjaTarget, JinjaExpr)], body: [JinjaNode], frame: JinjaFrame = JinjaFrame(), line: Int)
    case `break`(line: Int)
    case `continue`(line: Int)
}

/// What a frame (a for-loop body, a macro body, a with block, ...) starts with: names
/// that are undefined on entry even if an outer scope or the context has them. Filled in
/// by `JinjaScoping` to reproduce jinja2's compile-time scoping.
struct JinjaFrame: Sendable {
    var undefined: [String] = []
}

/// A for loop. A class so that `loop(...)` in a recursive loop can point back at it.
final class JinjaForLoop: Sendable {
    let target: JinjaTarget
    let iterable: JinjaExpr
    let filter: JinjaExpr?
    let body: [JinjaNode]
    let otherwise: [JinjaNode]
    let recursive: Bool
    let line: Int
    let bodyFrame: JinjaFrame
    let elseFrame: JinjaFrame

    init(
        target: JinjaTarget, iterable: JinjaExpr, filter: JinjaExpr?, body: [JinjaNode], otherwise: [JinjaNode],
        recursive: Bool, line: Int, bodyFrame: JinjaFrame = JinjaFrame(), elseFrame: JinjaFrame = JinjaFrame()
    ) {
        self.target = target
        self.iterable = iterable
        self.filter = filter
        self.body = body
        self.otherwise = otherwise
        self.recursive = recursive
        self.line = line
        self.bodyFrame = bodyFrame
        self.elseFrame = elseFrame
    }
}

/// A macro definition (also the body of a call block, which is an anonymous macro).
final class JinjaMacro: Sendable {
    let name: String
    let parameters: [(name: String, defaultValue: JinjaExpr?)]
    let body: [JinjaNode]
    /// Whether the body mentions `varargs`, `kwargs` or `caller`: as in jinja2, only then
    /// does a call accept extra arguments or a call block.
    let usesVarargs: Bool
    let usesKwargs: Bool
    let usesCaller: Bool
    let line: Int
    let frame: JinjaFrame

    init(
        name: String, parameters: [(name: String, defaultValue: JinjaExpr?)], body: [JinjaNode], usesVarargs: Bool,
        usesKwargs: Bool, usesCaller: Bool, line: Int, frame: JinjaFrame = JinjaFrame()
    ) {
        self.name = name
        self.parameters = parameters
        self.body = body
        self.usesVarargs = usesVarargs
        self.usesKwargs = usesKwargs
        self.usesCaller = usesCaller
        self.line = line
        self.frame = frame
    }
}

/// jinja2's built-in filters that this engine implements. Resolving names at parse time
/// makes an unknown filter a syntax error (as in jinja2) and rendering skip a string lookup.
enum JinjaFilter: String, Sendable, CaseIterable {
    case abs, attr, batch, capitalize, center, count, d, `default`, dictsort, e, escape, first, float,
        forceescape, format, indent, int, items, join, last, length, list, lower, map, max, min, reject,
        rejectattr, replace, reverse, round, safe, select, selectattr, sort, string, sum, title, tojson, trim,
        unique, upper, wordcount

    /// jinja2 filters that exist there but not here: using one is reported as unsupported
    /// rather than unknown.
    static let unsupported: Set<String> = [
        "filesizeformat", "groupby", "pprint", "random", "slice", "striptags", "truncate", "urlencode", "urlize",
        "wordwrap", "xmlattr",
    ]
}

/// jinja2's built-in tests (`x is defined`, ...).
enum JinjaTest: String, Sendable, CaseIterable {
    case boolean, callable, defined, divisibleby, eq, equalto, escaped, even, `false`, filter, float, ge, gt,
        greaterthan, `in`, integer, iterable, le, lessthan, lower, lt, mapping, ne, none, number, odd, sameas,
        sequence, string, test, `true`, undefined, upper
    case symbolEq = "=="
    case symbolNe = "!="
    case symbolLt = "<"
    case symbolLe = "<="
    case symbolGt = ">"
    case symbolGe = ">="
}
