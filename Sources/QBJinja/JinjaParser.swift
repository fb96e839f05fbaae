import Foundation

/// Builds the AST from tokens with jinja2's grammar and operator precedence (lowest first):
/// `x if c else y`, `or`, `and`, `not`, comparisons and `in`, `+ -`, `~`, `* / // %`,
/// `**`, unary `- +`, then postfix `.attr`, `[key]`, calls, `|filter` and `is test`.
struct JinjaParser {
    let name: String
    private let tokens: [JinjaToken]
    private var pos = 0
    /// Open block tags, innermost last, for "unexpected end of template" messages.
    private var openBlocks: [(tag: String, line: Int)] = []
    /// How many for loops enclose the current point (inside the current macro), so that a
    /// stray `{% break %}` is a syntax error as in jinja2.
    private var loopDepth = 0
    /// Expression nesting; deeper templates are refused rather than overflowing the stack
    /// (jinja2 itself runs out of Python recursion around the same depth).
    private var depth = 0
    private static let maximumDepth = 100
    /// Block nesting (if/for/macro/... inside each other), refused beyond this.
    private static let maximumBlockDepth = 100
    /// Operators (binary, and/or, comparisons, attributes, subscripts, calls, filters,
    /// tests, conditionals) one tag may hold. Chains of them (`1 + 1 + ...`, `x|f|f|...`)
    /// are built by loops, not recursion, but make trees as deep as they are long, which
    /// evaluating and freeing then walk recursively: capping them per tag bounds every
    /// tree's depth. Real chat templates have a few dozen at most.
    static let maximumOperatorsPerTag = 1000
    private var operatorsInTag = 0
    private let stack = JinjaStackGuard()

    /// Tags jinja2 has that chat templates do not get here (there is no loader to include
    /// or import from, and no template inheritance).
    private static let unsupportedTags: Set<String> = [
        "include", "import", "from", "extends", "block", "autoescape", "trans", "pluralize",
    ]

    init(name: String, tokens: [JinjaToken]) {
        self.name = name
        self.tokens = tokens
    }

    static func parse(_ source: String, name: String, whitespace: JinjaWhitespace) throws -> [JinjaNode] {
        var lexer = JinjaLexer(name: name, options: whitespace)
        let tokens = try lexer.tokenize(source)
        var parser = JinjaParser(name: name, tokens: tokens)
        return try parser.template()
    }

    // MARK: Token stream

    private var current: JinjaToken { tokens[pos] }
    private var line: Int { tokens[pos].line }

    private func peek(_ offset: Int = 1) -> JinjaToken {
        tokens[min(pos + offset, tokens.count - 1)]
    }

    private mutating func advance() -> JinjaToken {
        let t = tokens[pos]
        if pos < tokens.count - 1 { pos += 1 }
        return t
    }

    private func fail(_ message: String, line: Int? = nil) -> ChatTemplateError {
        .syntax(template: name, line: line ?? self.line, message: message)
    }

    private func isOp(_ op: String, _ t: JinjaToken? = nil) -> Bool {
        if case .op(let o) = (t ?? current).kind { return o == op }
        return false
    }

    private func isName(_ n: String, _ t: JinjaToken? = nil) -> Bool {
        if case .name(let v) = (t ?? current).kind { return v == n }
        return false
    }

    private mutating func skipOp(_ op: String) -> Bool {
        if isOp(op) {
            _ = advance()
            return true
        }
        return false
    }

    private mutating func skipName(_ n: String) -> Bool {
        if isName(n) {
            _ = advance()
            return true
        }
        return false
    }

    private func describe(_ t: JinjaToken) -> String {
        switch t.kind {
        case .data: return "template data"
        case .variableBegin: return "'{{'"
        case .variableEnd: return "'}}'"
        case .blockBegin: return "'{%'"
        case .blockEnd: return "'%}'"
        case .name(let n): return "'\(n)'"
        case .string(let s): return "string " + PyText.repr(s)
        case .integer(let i): return "integer \(i)"
        case .float(let d): return "float \(PyText.floatRepr(d))"
        case .op(let o): return "'\(o)'"
        case .eof: return "end of template"
        }
    }

    private mutating func expectOp(_ op: String) throws {
        guard skipOp(op) else { throw fail("expected '\(op)', got \(describe(current))") }
    }

    private mutating func expectName() throws -> String {
        guard case .name(let n) = current.kind else { throw fail("expected a name, got \(describe(current))") }
        _ = advance()
        return n
    }

    private mutating func expectBlockEnd() throws {
        guard case .blockEnd = current.kind else {
            throw fail("expected '%}' to end the tag, got \(describe(current))")
        }
        _ = advance()
    }

    // MARK: Statements

    mutating func template() throws -> [JinjaNode] {
        let (body, _) = try statements(until: [])
        return body
    }

    /// Parses statements up to a block tag whose name is in `endTags` (consumed, with the
    /// name returned) or the end of the template (only allowed when `endTags` is empty).
    private mutating func statements(until endTags: Set<String>) throws -> ([JinjaNode], String?) {
        var body: [JinjaNode] = []
        while true {
            let t = current
            switch t.kind {
            case .eof:
                if endTags.isEmpty { return (body, nil) }
                let wanted = endTags.sorted().map { "'\($0)'" }.joined(separator: " or ")
                let innermost = openBlocks.last.map { " The innermost block that needs to be closed is '\($0.tag)' (line \($0.line))." } ?? ""
                throw fail("unexpected end of template; looking for \(wanted).\(innermost)", line: t.line)
            case .data(let text):
                _ = advance()
                body.append(.text(text))
            case .variableBegin:
                _ = advance()
                operatorsInTag = 0
                let e = try tuple()
                guard case .variableEnd = current.kind else {
                    throw fail("expected '}}' to end the expression, got \(describe(current))")
                }
                _ = advance()
                body.append(.output(e, line: t.line))
            case .blockBegin:
                _ = advance()
                operatorsInTag = 0
                guard case .name(let tag) = current.kind else {
                    throw fail("expected a tag name after '{%', got \(describe(current))")
                }
                if endTags.contains(tag) {
                    _ = advance()
                    return (body, tag)
                }
                body.append(try statement(tag, line: t.line))
            case .variableEnd, .blockEnd, .name, .string, .integer, .float, .op:
                throw fail("unexpected \(describe(t))", line: t.line)
            }
        }
    }

    private mutating func block<T>(_ tag: String, _ line: Int, _ parse: (inout JinjaParser) throws -> T) throws -> T {
        if openBlocks.count >= Self.maximumBlockDepth || stack.exceeded { throw fail("blocks nested too deeply", line: line) }
        openBlocks.append((tag, line))
        defer { openBlocks.removeLast() }
        return try parse(&self)
    }

    private mutating func statement(_ tag: String, line: Int) throws -> JinjaNode {
        switch tag {
        case "if": return try block("if", line) { try $0.ifStatement(line) }
        case "for": return try block("for", line) { try $0.forStatement(line) }
        case "set": return try block("set", line) { try $0.setStatement(line) }
        case "macro": return try block("macro", line) { try $0.macroStatement(line) }
        case "call": return try block("call", line) { try $0.callStatement(line) }
        case "filter": return try block("filter", line) { try $0.filterStatement(line) }
        case "with": return try block("with", line) { try $0.withStatement(line) }
        case "generation":
            // transformers' {% generation %} marks assistant text for its token masks; the
            // text itself renders as is.
            return try block("generation", line) { p in
                _ = p.advance()
                try p.expectBlockEnd()
                let (body, _) = try p.statements(until: ["endgeneration"])
                try p.expectBlockEnd()
                return .with(assignments: [], body: body, line: line)
            }
        case "break", "continue":
            _ = advance()
            guard loopDepth > 0 else { throw fail("'\(tag)' outside of a for loop", line: line) }
            try expectBlockEnd()
            return tag == "break" ? .break(line: line) : .continue(line: line)
        default:
            if Self.unsupportedTags.contains(tag) {
                throw ChatTemplateError.unsupported(template: name, line: line, construct: "the '{% \(tag) %}' tag")
            }
            if let open = openBlocks.last {
                throw fail("unexpected tag '\(tag)'; the innermost open block is '\(open.tag)' (line \(open.line))", line: line)
            }
            throw fail("unknown tag '\(tag)'", line: line)
        }
    }

    private mutating func ifStatement(_ line: Int) throws -> JinjaNode {
        _ = advance()
        var branches: [(test: JinjaExpr, body: [JinjaNode])] = []
        var test = try tuple(withCondition: false)
        while true {
            try expectBlockEnd()
            let (body, end) = try statements(until: ["elif", "else", "endif"])
            branches.append((test, body))
            switch end {
            case "elif":
                test = try tuple(withCondition: false)
            case "else":
                try expectBlockEnd()
                let (otherwise, _) = try statements(until: ["endif"])
                try expectBlockEnd()
                return .if(branches, otherwise: otherwise, line: line)
            default:
                try expectBlockEnd()
                return .if(branches, otherwise: [], line: line)
            }
        }
    }

    private mutating func forStatement(_ line: Int) throws -> JinjaNode {
        _ = advance()
        let target = try assignTarget(endNames: ["in"])
        guard skipName("in") else { throw fail("expected 'in' in the for loop, got \(describe(current))") }
        let iterable = try tuple(withCondition: false, endNames: ["recursive"])
        var filter: JinjaExpr?
        if skipName("if") { filter = try expression() }
        let recursive = skipName("recursive")
        try expectBlockEnd()
        loopDepth += 1
        let (body, end) = try statements(until: ["endfor", "else"])
        loopDepth -= 1
        var otherwise: [JinjaNode] = []
        try expectBlockEnd()
        if end == "else" {
            (otherwise, _) = try statements(until: ["endfor"])
            try expectBlockEnd()
        }
        return .for(
            JinjaForLoop(
                target: target, iterable: iterable, filter: filter, body: body, otherwise: otherwise,
                recursive: recursive, line: line))
    }

    private mutating func setStatement(_ line: Int) throws -> JinjaNode {
        _ = advance()
        let target: JinjaTarget
        if case .name(let n) = current.kind, isOp(".", peek()) {
            _ = advance()
            _ = advance()
            target = .attribute(n, try expectName())
        } else {
            target = try assignTarget(endNames: [])
        }
        if skipOp("=") {
            let value = try tuple()
            try expectBlockEnd()
            return .set(target, value, line: line)
        }
        // Block set: {% set x %}...{% endset %}, optionally {% set x | filter %}.
        var filters: [(JinjaFilter, JinjaArguments)] = []
        while skipOp("|") { filters.append(try filterCall()) }
        try expectBlockEnd()
        let (body, _) = try statements(until: ["endset"])
        try expectBlockEnd()
        return .setBlock(target, body: body, filters: filters, line: line)
    }

    /// Names, or a tuple of them (`for k, v in ...`, `set a, b = ...`).
    private mutating func assignTarget(endNames: Set<String>) throws -> JinjaTarget {
        var targets: [JinjaTarget] = []
        var isTuple = false
        while true {
            if !targets.isEmpty { try expectOp(",") }
            if case .name(let n) = current.kind, endNames.contains(n) { break }
            if case .blockEnd = current.kind { break }
            if isOp("=") { break }
            if skipOp("(") {
                let inner = try assignTarget(endNames: [])
                try expectOp(")")
                targets.append(inner)
            } else {
                let n = try expectName()
                if ["true", "false", "none", "True", "False", "None"].contains(n) {
                    throw fail("cannot assign to '\(n)'")
                }
                targets.append(.name(n))
            }
            if isOp(",") {
                isTuple = true
            } else {
                break
            }
        }
        if targets.isEmpty { throw fail("expected an assignment target, got \(describe(current))") }
        return isTuple ? .tuple(targets) : targets[0]
    }

    private mutating func signature() throws -> [(name: String, defaultValue: JinjaExpr?)] {
        var params: [(name: String, defaultValue: JinjaExpr?)] = []
        try expectOp("(")
        while !isOp(")") {
            if !params.isEmpty { try expectOp(",") }
            if isOp(")") { break }
            let n = try expectName()
            if skipOp("=") {
                params.append((n, try expression()))
            } else {
                if params.contains(where: { $0.defaultValue != nil }) {
                    throw fail("non-default argument '\(n)' follows default argument")
                }
                params.append((n, nil))
            }
        }
        try expectOp(")")
        return params
    }

    private mutating func macroStatement(_ line: Int) throws -> JinjaNode {
        _ = advance()
        let macroName = try expectName()
        let params = try signature()
        try expectBlockEnd()
        let savedLoops = loopDepth
        loopDepth = 0
        let (body, _) = try statements(until: ["endmacro"])
        loopDepth = savedLoops
        try expectBlockEnd()
        return .macro(Self.makeMacro(name: macroName, params: params, body: body, line: line))
    }

    private static func makeMacro(
        name: String, params: [(name: String, defaultValue: JinjaExpr?)], body: [JinjaNode], line: Int
    ) -> JinjaMacro {
        var used = Set<String>()
        JinjaNames.collect(body, into: &used)
        let declared = Set(params.map(\.name))
        return JinjaMacro(
            name: name, parameters: params, body: body,
            usesVarargs: used.contains("varargs") && !declared.contains("varargs"),
            usesKwargs: used.contains("kwargs") && !declared.contains("kwargs"),
            usesCaller: used.contains("caller") && !declared.contains("caller"), line: line)
    }

    private mutating func callStatement(_ line: Int) throws -> JinjaNode {
        _ = advance()
        let params = isOp("(") ? try signature() : []
        let call = try expression()
        guard case .call = call else { throw fail("expected a macro call after '{% call %}'") }
        try expectBlockEnd()
        let savedLoops = loopDepth
        loopDepth = 0
        let (body, _) = try statements(until: ["endcall"])
        loopDepth = savedLoops
        try expectBlockEnd()
        let caller = Self.makeMacro(name: "caller", params: params, body: body, line: line)
        return .callBlock(call: call, caller: caller, line: line)
    }

    private mutating func filterStatement(_ line: Int) throws -> JinjaNode {
        _ = advance()
        var filters = [try filterCall()]
        while skipOp("|") { filters.append(try filterCall()) }
        try expectBlockEnd()
        let (body, _) = try statements(until: ["endfilter"])
        try expectBlockEnd()
        return .filterBlock(body: body, filters: filters, line: line)
    }

    private mutating func withStatement(_ line: Int) throws -> JinjaNode {
        _ = advance()
        var assignments: [(JinjaTarget, JinjaExpr)] = []
        while true {
            if case .blockEnd = current.kind { break }
            if !assignments.isEmpty { try expectOp(",") }
            let target = try assignTarget(endNames: [])
            try expectOp("=")
            assignments.append((target, try expression()))
        }
        try expectBlockEnd()
        let (body, _) = try statements(until: ["endwith"])
        try expectBlockEnd()
        return .with(assignments: assignments, body: body, line: line)
    }

    // MARK: Expressions

    private func isTupleEnd(_ endNames: Set<String>) -> Bool {
        switch current.kind {
        case .variableEnd, .blockEnd: return true
        case .op(")"): return true
        case .name(let n): return endNames.contains(n)
        default: return false
        }
    }

    /// jinja2's parse_tuple: `a, b` is a tuple, a single expression is itself.
    private mutating func tuple(
        withCondition: Bool = true, endNames: Set<String> = [], explicitParentheses: Bool = false
    ) throws -> JinjaExpr {
        var items: [JinjaExpr] = []
        var isTuple = false
        while true {
            if !items.isEmpty { try expectOp(",") }
            if isTupleEnd(endNames) { break }
            items.append(withCondition ? try expression() : try orExpression())
            if isOp(",") {
                isTuple = true
            } else {
                break
            }
        }
        if !isTuple {
            if let first = items.first { return first }
            if !explicitParentheses { throw fail("expected an expression, got \(describe(current))") }
        }
        return .tuple(items)
    }

    /// Counts one operator node of the current tag.
    private mutating func op() throws {
        operatorsInTag += 1
        if operatorsInTag > Self.maximumOperatorsPerTag {
            throw fail("expression too long: more than \(Self.maximumOperatorsPerTag) operators in one tag")
        }
    }

    mutating func expression() throws -> JinjaExpr {
        depth += 1
        defer { depth -= 1 }
        if depth > Self.maximumDepth || stack.exceeded { throw fail("expression nested too deeply") }
        var e = try orExpression()
        while skipName("if") {
            try op()
            let test = try orExpression()
            var otherwise: JinjaExpr?
            if skipName("else") { otherwise = try expression() }
            e = .conditional(then: e, test: test, otherwise: otherwise)
        }
        return e
    }

    private mutating func orExpression() throws -> JinjaExpr {
        var e = try andExpression()
        while skipName("or") {
            try op()
            e = .or(e, try andExpression())
        }
        return e
    }

    private mutating func andExpression() throws -> JinjaExpr {
        var e = try notExpression()
        while skipName("and") {
            try op()
            e = .and(e, try notExpression())
        }
        return e
    }

    private mutating func notExpression() throws -> JinjaExpr {
        if isName("not") {
            _ = advance()
            depth += 1
            defer { depth -= 1 }
            if depth > Self.maximumDepth || stack.exceeded { throw fail("expression nested too deeply") }
            return .not(try notExpression())
        }
        return try comparison()
    }

    private mutating func comparison() throws -> JinjaExpr {
        let first = try additive()
        var ops: [(JinjaCompareOp, JinjaExpr)] = []
        while true {
            if case .op(let o) = current.kind, let op = JinjaCompareOp(rawValue: o), op != .in, op != .notIn {
                _ = advance()
                ops.append((op, try additive()))
            } else if skipName("in") {
                ops.append((.in, try additive()))
            } else if isName("not") && isName("in", peek()) {
                _ = advance()
                _ = advance()
                ops.append((.notIn, try additive()))
            } else {
                break
            }
        }
        return ops.isEmpty ? first : .compare(first, ops)
    }

    private mutating func additive() throws -> JinjaExpr {
        var e = try concatenation()
        while true {
            if skipOp("+") {
                try op()
                e = .binary(.add, e, try concatenation())
            } else if skipOp("-") {
                try op()
                e = .binary(.subtract, e, try concatenation())
            } else {
                return e
            }
        }
    }

    private mutating func concatenation() throws -> JinjaExpr {
        var parts = [try multiplicative()]
        while skipOp("~") {
            try op()
            parts.append(try multiplicative())
        }
        return parts.count == 1 ? parts[0] : .concat(parts)
    }

    private mutating func multiplicative() throws -> JinjaExpr {
        var e = try power()
        while true {
            guard case .op(let o) = current.kind, ["*", "/", "//", "%"].contains(o),
                let op = JinjaBinaryOp(rawValue: o)
            else { return e }
            _ = advance()
            try self.op()
            e = .binary(op, e, try power())
        }
    }

    private mutating func power() throws -> JinjaExpr {
        var e = try unary(withFilter: true)
        while skipOp("**") {
            try op()
            e = .binary(.power, e, try unary(withFilter: true))
        }
        return e
    }

    private mutating func unary(withFilter: Bool) throws -> JinjaExpr {
        depth += 1
        defer { depth -= 1 }
        if depth > Self.maximumDepth || stack.exceeded { throw fail("expression nested too deeply") }
        var e: JinjaExpr
        if skipOp("-") {
            e = .negate(try unary(withFilter: false))
        } else if skipOp("+") {
            e = .plus(try unary(withFilter: false))
        } else {
            e = try primary()
        }
        e = try postfix(e)
        if withFilter { e = try filterExpression(e) }
        return e
    }

    private mutating func primary() throws -> JinjaExpr {
        let t = current
        switch t.kind {
        case .name(let n):
            _ = advance()
            switch n {
            case "true", "True": return .literal(.bool(true))
            case "false", "False": return .literal(.bool(false))
            case "none", "None": return .literal(.none)
            default: return .name(n)
            }
        case .string(let s):
            _ = advance()
            // Adjacent string literals concatenate, as in Python.
            var text = s
            while case .string(let more) = current.kind {
                text += more
                _ = advance()
            }
            return .literal(.string(text))
        case .integer(let i):
            _ = advance()
            return .literal(.int(i))
        case .float(let d):
            _ = advance()
            return .literal(.double(d))
        case .op("("):
            _ = advance()
            let e = try tuple(explicitParentheses: true)
            try expectOp(")")
            return e
        case .op("["):
            _ = advance()
            var items: [JinjaExpr] = []
            while !isOp("]") {
                if !items.isEmpty { try expectOp(",") }
                if isOp("]") { break }
                items.append(try expression())
            }
            try expectOp("]")
            return .list(items)
        case .op("{"):
            _ = advance()
            var items: [(JinjaExpr, JinjaExpr)] = []
            while !isOp("}") {
                if !items.isEmpty { try expectOp(",") }
                if isOp("}") { break }
                let key = try expression()
                try expectOp(":")
                items.append((key, try expression()))
            }
            try expectOp("}")
            return .dict(items)
        default:
            throw fail("unexpected \(describe(t))")
        }
    }

    private mutating func postfix(_ start: JinjaExpr) throws -> JinjaExpr {
        var e = start
        while true {
            if isOp(".") || isOp("[") || isOp("(") { try op() }
            if skipOp(".") {
                switch current.kind {
                case .name(let n):
                    _ = advance()
                    e = .getattr(e, n)
                case .integer(let i):
                    _ = advance()
                    e = .getitem(e, .literal(.int(i)))
                default:
                    throw fail("expected a name or number after '.', got \(describe(current))")
                }
            } else if skipOp("[") {
                e = try subscription(e)
            } else if isOp("(") {
                e = .call(e, try callArguments())
            } else {
                return e
            }
        }
    }

    private mutating func subscription(_ base: JinjaExpr) throws -> JinjaExpr {
        var parts: [JinjaExpr?] = []
        var isSlice = false
        // start
        if isOp(":") {
            parts.append(nil)
        } else {
            parts.append(try expression())
        }
        if skipOp(":") {
            isSlice = true
            if isOp(":") || isOp("]") {
                parts.append(nil)
            } else {
                parts.append(try expression())
            }
            if skipOp(":") {
                if isOp("]") {
                    parts.append(nil)
                } else {
                    parts.append(try expression())
                }
            }
        }
        if isOp(",") {
            throw ChatTemplateError.unsupported(template: name, line: line, construct: "subscripts with several keys (a[x, y])")
        }
        try expectOp("]")
        guard isSlice else {
            guard let key = parts[0] else { throw fail("expected a subscript") }
            return .getitem(base, key)
        }
        while parts.count < 3 { parts.append(nil) }
        return .slice(base, start: parts[0], stop: parts[1], step: parts[2])
    }

    private mutating func callArguments() throws -> JinjaArguments {
        try expectOp("(")
        var args = JinjaArguments()
        var first = true
        while !isOp(")") {
            if !first {
                try expectOp(",")
                if isOp(")") { break }
            }
            first = false
            if isOp("*") || isOp("**") {
                throw ChatTemplateError.unsupported(template: name, line: line, construct: "*args / **kwargs in calls")
            }
            if case .name(let key) = current.kind, isOp("=", peek()) {
                _ = advance()
                _ = advance()
                args.keyword.append((key, try expression()))
            } else {
                if !args.keyword.isEmpty { throw fail("positional argument follows keyword argument") }
                args.positional.append(try expression())
            }
        }
        try expectOp(")")
        return args
    }

    /// A filter name and its arguments, after the `|`.
    private mutating func filterCall() throws -> (JinjaFilter, JinjaArguments) {
        let filterLine = line
        var n = try expectName()
        while skipOp(".") { n += "." + (try expectName()) }
        guard let filter = JinjaFilter(rawValue: n) else {
            if JinjaFilter.unsupported.contains(n) {
                throw ChatTemplateError.unsupported(template: name, line: filterLine, construct: "the '\(n)' filter")
            }
            throw fail("no filter named '\(n)'", line: filterLine)
        }
        let args = isOp("(") ? try callArguments() : .none
        return (filter, args)
    }

    private mutating func filterExpression(_ start: JinjaExpr) throws -> JinjaExpr {
        var e = start
        while true {
            if isOp("|") || isOp("(") || isName("is") { try op() }
            if skipOp("|") {
                let (f, args) = try filterCall()
                e = .filter(e, f, args)
            } else if isName("is") {
                _ = advance()
                let negated = skipName("not")
                let testLine = line
                var n = try expectName()
                while skipOp(".") { n += "." + (try expectName()) }
                guard let test = JinjaTest(rawValue: n) else { throw fail("no test named '\(n)'", line: testLine) }
                var args = JinjaArguments.none
                if isOp("(") {
                    args = try callArguments()
                } else if startsTestArgument() {
                    if isName("is") { throw fail("you cannot chain multiple tests with 'is'") }
                    let arg = try postfix(try primary())
                    args = JinjaArguments(positional: [arg], keyword: [])
                }
                e = .test(e, test, args, negated: negated)
            } else if isOp("(") {
                e = .call(e, try callArguments())
            } else {
                return e
            }
        }
    }

    /// `x is divisibleby 3`: a test takes one argument without parentheses when a name,
    /// literal or bracket follows (but not `else`/`or`/`and`).
    private func startsTestArgument() -> Bool {
        switch current.kind {
        case .name(let n): return !["else", "or", "and"].contains(n)
        case .string, .integer, .float: return true
        case .op(let o): return o == "(" || o == "[" || o == "{"
        default: return false
        }
    }
}

/// Names an AST mentions, for deciding whether a macro takes `varargs`/`kwargs`/`caller`.
enum JinjaNames {
    static func collect(_ nodes: [JinjaNode], into names: inout Set<String>) {
        for n in nodes { collect(n, into: &names) }
    }

    static func collect(_ node: JinjaNode, into names: inout Set<String>) {
        switch node {
        case .text, .break, .continue: break
        case .output(let e, _): collect(e, into: &names)
        case .if(let branches, let otherwise, _):
            for b in branches {
                collect(b.test, into: &names)
                collect(b.body, into: &names)
            }
            collect(otherwise, into: &names)
        case .for(let loop):
            collect(loop.iterable, into: &names)
            if let f = loop.filter { collect(f, into: &names) }
            collect(loop.body, into: &names)
            collect(loop.otherwise, into: &names)
        case .set(_, let e, _): collect(e, into: &names)
        case .setBlock(_, let body, let filters, _, _):
            collect(body, into: &names)
            for (_, a) in filters { collect(a, into: &names) }
        case .macro:
            // A nested macro's own varargs/kwargs/caller are its own.
            break
        case .callBlock(let call, let caller, _):
            collect(call, into: &names)
            collect(caller.body, into: &names)
        case .filterBlock(let body, let filters, _, _):
            collect(body, into: &names)
            for (_, a) in filters { collect(a, into: &names) }
        case .with(let assignments, let body, _, _):
            for (_, e) in assignments { collect(e, into: &names) }
            collect(body, into: &names)
        }
    }

    static func collect(_ args: JinjaArguments, into names: inout Set<String>) {
        for e in args.positional { collect(e, into: &names) }
        for (_, e) in args.keyword { collect(e, into: &names) }
    }

    static func collect(_ e: JinjaExpr, into names: inout Set<String>) {
        switch e {
        case .literal: break
        case .name(let n): names.insert(n)
        case .list(let items), .tuple(let items), .concat(let items):
            for i in items { collect(i, into: &names) }
        case .dict(let pairs):
            for (k, v) in pairs {
                collect(k, into: &names)
                collect(v, into: &names)
            }
        case .getattr(let b, _): collect(b, into: &names)
        case .getitem(let b, let k):
            collect(b, into: &names)
            collect(k, into: &names)
        case .slice(let b, let s, let t, let p):
            collect(b, into: &names)
            for x in [s, t, p] { if let x { collect(x, into: &names) } }
        case .call(let f, let a):
            collect(f, into: &names)
            collect(a, into: &names)
        case .filter(let b, _, let a), .test(let b, _, let a, _):
            collect(b, into: &names)
            collect(a, into: &names)
        case .not(let x), .negate(let x), .plus(let x): collect(x, into: &names)
        case .binary(_, let a, let b), .and(let a, let b), .or(let a, let b):
            collect(a, into: &names)
            collect(b, into: &names)
        case .compare(let a, let ops):
            collect(a, into: &names)
            for (_, b) in ops { collect(b, into: &names) }
        case .conditional(let t, let c, let o):
            collect(t, into: &names)
            collect(c, into: &names)
            if let o { collect(o, into: &names) }
        }
    }
}
