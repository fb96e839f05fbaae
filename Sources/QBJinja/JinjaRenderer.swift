import Foundation

/// One render of a template. Holds what values cannot: namespaces' contents, macro
/// closures, loop state; `JinjaValue.callable` refers into these tables by index. Never
/// shared between threads: each `JinjaTemplate.render` makes its own.
final class JinjaRenderer {
    enum Flow { case normal, breakLoop, continueLoop }

    struct MacroClosure {
        let macro: JinjaMacro
        let scope: JinjaScope
    }

    struct LoopRuntime {
        let node: JinjaForLoop
        let scope: JinjaScope
        let depth0: Int
        var lastChanged: [JinjaValue]?
    }

    let templateName: String
    let now: Date
    var namespaces: [JinjaObject] = []
    var macros: [MacroClosure] = []
    var loops: [LoopRuntime] = []
    var cyclers: [(items: [JinjaValue], position: Int)] = []
    var joiners: [(separator: String, used: Bool)] = []
    private var callDepth = 0
    /// Macro recursion deeper than this fails instead of exhausting the stack.
    static let maximumCallDepth = 100
    /// Values assigned with `set` may nest at most this deep.
    static let maximumNesting = 1000
    private let stack = JinjaStackGuard()
    /// What this render has spent of its `JinjaLimits`.
    var budget: JinjaBudget
    static let globalNames: Set<String> = [
        "range", "dict", "namespace", "raise_exception", "strftime_now", "cycler", "joiner", "lipsum",
    ]

    init(templateName: String, now: Date, limits: JinjaLimits = .standard) {
        self.templateName = templateName
        self.now = now
        self.budget = JinjaBudget(limits: limits)
    }

    func render(_ body: [JinjaNode], frame: JinjaFrame, context: JinjaObject) throws -> String {
        var vars = [String: JinjaValue](minimumCapacity: context.count + 4)
        for (k, v) in context { vars[k] = v }
        for n in frame.undefined { vars[n] = .undefined }
        let root = JinjaScope(parent: nil, vars: vars)
        var out = ""
        do {
            _ = try run(body, root, &out)
        } catch let f as JinjaFailure {
            throw f.error(template: templateName, line: f.line ?? 0)
        }
        return out
    }

    // MARK: Statements

    func run(_ nodes: [JinjaNode], _ scope: JinjaScope, _ out: inout String) throws -> Flow {
        for node in nodes {
            let flow = try exec(node, scope, &out)
            if case .normal = flow { continue }
            return flow
        }
        return .normal
    }

    /// Runs `body`, attaching `line` to a failure that has none yet (the innermost
    /// statement knows best where it happened).
    @inline(__always)
    func at<T>(_ line: Int, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var f as JinjaFailure {
            if f.line == nil { f.line = line }
            throw f
        }
    }

    private func exec(_ node: JinjaNode, _ scope: JinjaScope, _ out: inout String) throws -> Flow {
        switch node {
        case .text(let s):
            try emit(s, to: &out)
        case .output(let e, let line):
            try at(line) { try emit(try str(try eval(e, scope)), to: &out) }
        case .if(let branches, let otherwise, let line):
            for b in branches {
                let taken = try at(line) { try eval(b.test, scope).isTruthy }
                if taken { return try run(b.body, scope, &out) }
            }
            return try run(otherwise, scope, &out)
        case .for(let loop):
            let iterable = try at(loop.line) { try eval(loop.iterable, scope) }
            try runLoop(loop, iterable: iterable, scope: scope, depth0: 0, &out)
        case .set(let target, let e, let line):
            try at(line) {
                let v = try eval(e, scope)
                // Only set can feed a value back into itself; check that it stays shallow.
                switch v {
                case .array, .tuple, .object:
                    if v.nestsDeeperThan(Self.maximumNesting) {
                        throw JinjaFailure(.type, "value nested more than \(Self.maximumNesting) levels deep")
                    }
                default: break
                }
                try assign(target, v, scope)
            }
        case .setBlock(let target, let body, let filters, let frame, let line):
            var captured = ""
            _ = try run(body, JinjaScope(parent: scope, frame: frame), &captured)
            try at(line) {
                var v = JinjaValue.string(captured)
                for (f, args) in filters { v = try applyFilter(f, v, args, scope) }
                try assign(target, v, scope)
            }
        case .macro(let m):
            macros.append(MacroClosure(macro: m, scope: scope))
            scope.vars[m.name] = .callable(JinjaCallable(.macro(id: macros.count - 1, name: m.name)))
        case .callBlock(let call, let callerMacro, let line):
            try at(line) {
                guard case .call(let callee, let args) = call else { return }
                macros.append(MacroClosure(macro: callerMacro, scope: scope))
                let caller = JinjaValue.callable(JinjaCallable(.macro(id: macros.count - 1, name: "caller")))
                let f = try eval(callee, scope)
                let (positional, keyword) = try evalArguments(args, scope)
                guard case .callable(let c) = f, case .macro(let id, _) = c.kind else {
                    throw JinjaFailure(.type, "'{% call %}' needs a macro, got \(f.typeName)")
                }
                let v = try callMacro(id, positional, keyword, caller: caller)
                try emit(try str(v), to: &out)
            }
        case .filterBlock(let body, let filters, let frame, let line):
            var captured = ""
            _ = try run(body, JinjaScope(parent: scope, frame: frame), &captured)
            try at(line) {
                var v = JinjaValue.string(captured)
                for (f, args) in filters { v = try applyFilter(f, v, args, scope) }
                try emit(try str(v), to: &out)
            }
        case .with(let assignments, let body, let frame, let line):
            let inner = JinjaScope(parent: scope, frame: frame)
            try at(line) {
                let values = try assignments.map { try eval($0.1, scope) }
                for (a, v) in zip(assignments, values) { try assign(a.0, v, inner) }
            }
            // A with block is not a loop: break/continue inside it belong to the loop around it.
            return try run(body, inner, &out)
        case .break:
            return .breakLoop
        case .continue:
            return .continueLoop
        }
        return .normal
    }

    /// Runs a for loop over `iterable` (also used by `loop(...)` in recursive loops).
    func runLoop(_ loop: JinjaForLoop, iterable: JinjaValue, scope: JinjaScope, depth0: Int, _ out: inout String) throws {
        if stack.exceeded { throw JinjaFailure(.type, "maximum recursion depth exceeded (the template nests too deeply)", line: loop.line) }
        var items = try at(loop.line) { () throws -> [JinjaValue] in
            let items = try iterate(iterable)
            // Iterating a string makes a list of its characters.
            if iterable.stringValue != nil { try budget.make(items.count &* 24) }
            return items
        }
        if let filter = loop.filter {
            items = try at(loop.line) {
                try items.filter { item in
                    let s = JinjaScope(parent: scope)
                    try assign(loop.target, item, s)
                    return try eval(filter, s).isTruthy
                }
            }
        }
        if items.isEmpty {
            // The else block is a scope of its own too.
            _ = try run(loop.otherwise, JinjaScope(parent: scope, frame: loop.elseFrame), &out)
            return
        }
        loops.append(LoopRuntime(node: loop, scope: scope, depth0: depth0, lastChanged: nil))
        let id = loops.count - 1
        let n = items.count
        for (i, item) in items.enumerated() {
            try at(loop.line) { try budget.spend() }
            let s = JinjaScope(parent: scope, frame: loop.bodyFrame)
            try at(loop.line) { try assign(loop.target, item, s) }
            let state = JinjaLoopState(
                index0: i, length: n, depth0: depth0, previous: i > 0 ? items[i - 1] : .undefined,
                next: i + 1 < n ? items[i + 1] : .undefined, id: id)
            s.vars["loop"] = .callable(JinjaCallable(.loop(state)))
            let flow = try run(loop.body, s, &out)
            if case .breakLoop = flow { break }
        }
    }

    func assign(_ target: JinjaTarget, _ value: JinjaValue, _ scope: JinjaScope) throws {
        switch target {
        case .name(let n):
            scope.vars[n] = value
        case .attribute(let object, let attr):
            guard case .callable(let c)? = scope.lookup(object), case .namespace(let id) = c.kind else {
                throw JinjaFailure(.type, "cannot assign attribute '\(attr)' on '\(object)': it is not a namespace()")
            }
            namespaces[id][attr] = value
        case .tuple(let targets):
            let items = try iterate(value)
            guard items.count == targets.count else {
                if items.count > targets.count {
                    throw JinjaFailure(.type, "too many values to unpack (expected \(targets.count))")
                }
                throw JinjaFailure(.type, "not enough values to unpack (expected \(targets.count), got \(items.count))")
            }
            for (t, v) in zip(targets, items) { try assign(t, v, scope) }
        }
    }

    // MARK: Expressions

    func eval(_ e: JinjaExpr, _ scope: JinjaScope) throws -> JinjaValue {
        try budget.spend()
        if stack.exceeded { throw JinjaFailure(.type, "maximum recursion depth exceeded (the template nests too deeply)") }
        switch e {
        case .list, .tuple, .dict, .slice, .call, .filter, .binary, .concat:
            // Expressions that make a value: it counts against the budget.
            let v = try evalMaking(e, scope)
            try charge(v)
            return v
        default:
            return try evalMaking(e, scope)
        }
    }

    /// Counts a value an expression made.
    func charge(_ v: JinjaValue) throws {
        switch v {
        case .string(let s), .markup(let s): try budget.make(16 &+ s.utf8.count)
        case .array, .tuple, .object, .callable: try budget.make(v.weight(limit: budget.limits.valueBytes))
        default: break
        }
    }

    private func evalMaking(_ e: JinjaExpr, _ scope: JinjaScope) throws -> JinjaValue {
        switch e {
        case .literal(let v):
            return v
        case .name(let n):
            if let v = scope.lookup(n) { return v }
            if Self.globalNames.contains(n) { return .callable(JinjaCallable(.builtin(n))) }
            return .undefined
        case .list(let items):
            return .array(try items.map { try eval($0, scope) })
        case .tuple(let items):
            return .tuple(try items.map { try eval($0, scope) })
        case .dict(let pairs):
            var o = JinjaObject()
            for (k, v) in pairs {
                let key = try eval(k, scope)
                o[key.stringValue ?? key.pythonString] = try eval(v, scope)
            }
            return .object(o)
        case .getattr(let base, let name):
            let b = try eval(base, scope)
            if case .undefined = b { throw undefinedFailure(base) }
            return getattr(b, name)
        case .getitem(let base, let key):
            let b = try eval(base, scope)
            if case .undefined = b { throw undefinedFailure(base) }
            return getitem(b, try eval(key, scope))
        case .slice(let base, let start, let stop, let step):
            let b = try eval(base, scope)
            if case .undefined = b { throw undefinedFailure(base) }
            return try slice(b, start.map { try eval($0, scope) }, stop.map { try eval($0, scope) }, step.map { try eval($0, scope) })
        case .call(let callee, let args):
            return try evalCall(callee, args, scope)
        case .filter(let base, let f, let args):
            return try applyFilter(f, try eval(base, scope), args, scope, source: base)
        case .test(let base, let t, let args, let negated):
            let r = try applyTest(t, try eval(base, scope), try evalArguments(args, scope).0, scope)
            return .bool(negated ? !r : r)
        case .not(let x):
            return .bool(!(try eval(x, scope).isTruthy))
        case .negate(let x):
            let v = try eval(x, scope)
            switch v {
            case .int(let i):
                let (r, o) = (0).subtractingReportingOverflow(i)
                return o ? .double(-Double(i)) : .int(r)
            case .double(let d): return .double(-d)
            case .bool(let b): return .int(b ? -1 : 0)
            case .undefined: throw undefinedFailure(x)
            default: throw JinjaFailure(.type, "bad operand type for unary -: '\(v.typeName)'")
            }
        case .plus(let x):
            let v = try eval(x, scope)
            switch v {
            case .int, .double: return v
            case .bool(let b): return .int(b ? 1 : 0)
            case .undefined: throw undefinedFailure(x)
            default: throw JinjaFailure(.type, "bad operand type for unary +: '\(v.typeName)'")
            }
        case .binary(let op, let a, let b):
            let l = try eval(a, scope)
            if case .undefined = l { throw undefinedFailure(a) }
            let r = try eval(b, scope)
            // str % x is Python's str.__mod__, which accepts undefined (it only raises
            // when Undefined's own operator methods are used).
            if case .undefined = r, !(op == .modulo && l.stringValue != nil) { throw undefinedFailure(b) }
            try admitBinary(op, l, r)
            return try JinjaOperators.binary(op, l, r, limit: budget.limits.valueBytes)
        case .and(let a, let b):
            let l = try eval(a, scope)
            return l.isTruthy ? try eval(b, scope) : l
        case .or(let a, let b):
            let l = try eval(a, scope)
            return l.isTruthy ? l : try eval(b, scope)
        case .concat(let parts):
            let texts = try parts.map { try str(try eval($0, scope)) }
            try budget.admit(texts.reduce(0) { $0 &+ $1.utf8.count })
            return .string(texts.joined())
        case .compare(let first, let ops):
            var left = try eval(first, scope)
            var leftExpr = first
            for (op, rightExpr) in ops {
                let right = try eval(rightExpr, scope)
                let ok: Bool
                do {
                    try spendComparing(op, left, right)
                    ok = try JinjaOperators.compare(op, left, right, renderer: self)
                } catch let f as JinjaFailure where f.kind == .undefined {
                    throw undefinedFailure(left.isUndefined ? leftExpr : rightExpr)
                }
                if !ok { return .bool(false) }
                left = right
                leftExpr = rightExpr
            }
            return .bool(true)
        case .conditional(let then, let test, let otherwise):
            if try eval(test, scope).isTruthy { return try eval(then, scope) }
            return try otherwise.map { try eval($0, scope) } ?? .undefined
        }
    }

    /// jinja2's "'x' is undefined", naming the expression as written.
    func undefinedFailure(_ e: JinjaExpr) -> JinjaFailure {
        JinjaFailure(.undefined, "'\(Self.describe(e))' is undefined")
    }

    static func describe(_ e: JinjaExpr) -> String {
        switch e {
        case .name(let n): return n
        case .getattr(let b, let n): return describe(b) + "." + n
        case .getitem(let b, .literal(let k)): return describe(b) + "[" + k.pythonRepr + "]"
        case .getitem(let b, _): return describe(b) + "[...]"
        case .call(let f, _): return describe(f) + "(...)"
        case .literal(let v): return v.pythonRepr
        case .filter(let b, let f, _): return describe(b) + "|" + f.rawValue
        default: return "expression"
        }
    }

    func evalArguments(_ args: JinjaArguments, _ scope: JinjaScope) throws -> ([JinjaValue], [(String, JinjaValue)]) {
        let positional = try args.positional.map { try eval($0, scope) }
        let keyword = try args.keyword.map { ($0.0, try eval($0.1, scope)) }
        return (positional, keyword)
    }

    private func evalCall(_ callee: JinjaExpr, _ args: JinjaArguments, _ scope: JinjaScope) throws -> JinjaValue {
        // `x.method(...)` dispatches directly, without making a bound-method value.
        if case .getattr(let base, let name) = callee {
            let receiver = try eval(base, scope)
            if case .undefined = receiver { throw undefinedFailure(base) }
            let (positional, keyword) = try evalArguments(args, scope)
            if let result = try callMethod(receiver, name, positional, keyword) { return result }
            let f = getattr(receiver, name)
            if case .undefined = f { throw JinjaFailure(.undefined, "'\(Self.describe(callee))' is undefined") }
            return try call(f, positional, keyword, describing: callee)
        }
        let f = try eval(callee, scope)
        let (positional, keyword) = try evalArguments(args, scope)
        return try call(f, positional, keyword, describing: callee)
    }

    func call(
        _ f: JinjaValue, _ args: [JinjaValue], _ kwargs: [(String, JinjaValue)], describing: JinjaExpr? = nil
    ) throws -> JinjaValue {
        guard case .callable(let c) = f else {
            if case .undefined = f, let describing { throw undefinedFailure(describing) }
            throw JinjaFailure(.type, "'\(f.typeName)' object is not callable")
        }
        switch c.kind {
        case .macro(let id, _):
            return try callMacro(id, args, kwargs, caller: nil)
        case .builtin(let name):
            return try callBuiltin(name, args, kwargs)
        case .method(let receiver, let name):
            if let r = try callMethod(receiver, name, args, kwargs) { return r }
            throw JinjaFailure(.type, "'\(receiver.typeName)' object has no method '\(name)'")
        case .loop(let state):
            // loop(children) in a `recursive` for loop renders the loop body again one level down.
            let rt = loops[state.id]
            guard rt.node.recursive else {
                throw JinjaFailure(.type, "the loop is not recursive: add 'recursive' to the for tag to call loop()")
            }
            guard args.count == 1 else { throw JinjaFailure(.type, "loop() takes exactly one argument") }
            callDepth += 1
            defer { callDepth -= 1 }
            if callDepth > Self.maximumCallDepth { throw JinjaFailure(.type, "maximum recursion depth exceeded") }
            var out = ""
            try runLoop(rt.node, iterable: args[0], scope: rt.scope, depth0: state.depth0 + 1, &out)
            return .string(out)
        case .joiner(let id):
            if joiners[id].used { return .string(joiners[id].separator) }
            joiners[id].used = true
            return .string("")
        case .namespace, .cycler, .generator, .view:
            throw JinjaFailure(.type, "'\(c.typeName)' object is not callable")
        }
    }

    func callMacro(_ id: Int, _ args: [JinjaValue], _ kwargs: [(String, JinjaValue)], caller: JinjaValue?) throws -> JinjaValue {
        let closure = macros[id]
        let m = closure.macro
        callDepth += 1
        defer { callDepth -= 1 }
        if callDepth > Self.maximumCallDepth || stack.exceeded {
            throw JinjaFailure(.type, "maximum recursion depth exceeded in macro '\(m.name)'")
        }
        let scope = JinjaScope(parent: closure.scope, frame: m.frame)
        var remaining = kwargs
        for (i, p) in m.parameters.enumerated() {
            let kw = remaining.firstIndex { $0.0 == p.name }
            if i < args.count {
                if kw != nil { throw JinjaFailure(.type, "macro '\(m.name)' got multiple values for argument '\(p.name)'") }
                scope.vars[p.name] = args[i]
            } else if let kw {
                scope.vars[p.name] = remaining[kw].1
                remaining.remove(at: kw)
            } else if let d = p.defaultValue {
                scope.vars[p.name] = try eval(d, scope)
            } else {
                // jinja2 passes undefined for a missing argument rather than failing.
                scope.vars[p.name] = .undefined
            }
        }
        if args.count > m.parameters.count {
            guard m.usesVarargs else {
                throw JinjaFailure(.type, "macro '\(m.name)' takes not more than \(m.parameters.count) argument(s)")
            }
        }
        if m.usesVarargs { scope.vars["varargs"] = .tuple(Array(args.dropFirst(m.parameters.count))) }
        if let caller {
            if let i = remaining.firstIndex(where: { $0.0 == "caller" }) { remaining.remove(at: i) }
            guard m.usesCaller else { throw JinjaFailure(.type, "macro '\(m.name)' was invoked with a call block but does not use caller()") }
            scope.vars["caller"] = caller
        }
        if m.usesKwargs {
            scope.vars["kwargs"] = .object(JinjaObject(remaining))
        } else if let (k, _) = remaining.first {
            throw JinjaFailure(.type, "macro '\(m.name)' takes no keyword argument '\(k)'")
        }
        var out = ""
        do {
            _ = try run(m.body, scope, &out)
        } catch var f as JinjaFailure {
            if f.line == nil { f.line = m.line }
            throw f
        }
        return .string(out)
    }

    // MARK: Attribute and item access (jinja2's sandboxed getattr/getitem)

    static let dictMethods: Set<String> = [
        "get", "items", "keys", "values", "copy", "pop", "popitem", "setdefault", "update", "clear", "fromkeys",
    ]
    static let listMethods: Set<String> = [
        "index", "count", "copy", "append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear",
    ]
    static let stringMethods: Set<String> = [
        "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "replace", "startswith", "endswith", "lower",
        "upper", "title", "capitalize", "swapcase", "casefold", "find", "rfind", "index", "rindex", "count", "join",
        "center", "ljust", "rjust", "zfill", "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper",
        "isnumeric", "isdecimal", "istitle", "removeprefix", "removesuffix", "format", "partition", "rpartition",
        "expandtabs", "encode",
    ]

    /// `obj.name`: Python attributes first (so `dict.items` is the method even when the
    /// dict has an "items" key, as in jinja2), then keys. Missing means undefined.
    func getattr(_ v: JinjaValue, _ name: String) -> JinjaValue {
        switch v {
        case .object(let o):
            if Self.dictMethods.contains(name) { return .callable(JinjaCallable(.method(receiver: v, name: name))) }
            return o[name] ?? .undefined
        case .string, .markup:
            if Self.stringMethods.contains(name) { return .callable(JinjaCallable(.method(receiver: v, name: name))) }
            return .undefined
        case .array, .tuple:
            if Self.listMethods.contains(name) { return .callable(JinjaCallable(.method(receiver: v, name: name))) }
            return .undefined
        case .callable(let c):
            switch c.kind {
            case .namespace(let id): return namespaces[id][name] ?? .undefined
            case .loop(let state): return loopAttribute(state, name)
            case .cycler(let id):
                switch name {
                case "current":
                    let cy = cyclers[id]
                    return cy.items.isEmpty ? .undefined : cy.items[cy.position]
                case "next", "reset": return .callable(JinjaCallable(.method(receiver: v, name: name)))
                default: return .undefined
                }
            default: return .undefined
            }
        default:
            return .undefined
        }
    }

    /// `obj[key]`: item first, then (for string keys) attribute.
    func getitem(_ v: JinjaValue, _ key: JinjaValue) -> JinjaValue {
        switch (v, key) {
        case (.array(let a), _), (.tuple(let a), _):
            if let i = key.intValue {
                let j = i < 0 ? i + a.count : i
                return j >= 0 && j < a.count ? a[j] : .undefined
            }
        case (.string(let s), _), (.markup(let s), _):
            if let i = key.intValue {
                let scalars = s.unicodeScalars
                let n = scalars.count
                let j = i < 0 ? i + n : i
                guard j >= 0 && j < n else { return .undefined }
                let c = String(scalars[scalars.index(scalars.startIndex, offsetBy: j)])
                if case .markup = v { return .markup(c) }
                return .string(c)
            }
        case (.object(let o), .string(let k)), (.object(let o), .markup(let k)):
            if let x = o[k] { return x }
        default:
            break
        }
        if let name = key.stringValue { return getattr(v, name) }
        return .undefined
    }

    /// `obj[a:b:c]`. jinja2 compiles slices to plain Python slicing (not its getitem), so
    /// slicing something that is not a sequence is an error rather than undefined.
    func slice(_ v: JinjaValue, _ start: JinjaValue?, _ stop: JinjaValue?, _ step: JinjaValue?) throws -> JinjaValue {
        func bound(_ x: JinjaValue?) throws -> Int? {
            guard let x else { return nil }
            if case .none = x { return nil }
            guard let i = x.intValue else {
                throw JinjaFailure(.type, "slice indices must be integers or None or have an __index__ method")
            }
            return i
        }
        switch v {
        case .array, .tuple, .string, .markup: break
        case .object: throw JinjaFailure(.type, "unhashable type: 'slice'")
        default: throw JinjaFailure(.type, "'\(v.typeName)' object is not subscriptable")
        }
        let a = try bound(start), b = try bound(stop), c = try bound(step)
        switch v {
        case .array(let arr), .tuple(let arr):
            guard let idx = PyText.sliceIndices(count: arr.count, start: a, stop: b, step: c) else {
                throw JinjaFailure(.type, "slice step cannot be zero")
            }
            if case .tuple = v { return .tuple(idx.map { arr[$0] }) }
            return .array(idx.map { arr[$0] })
        case .string(let s), .markup(let s):
            if c == nil || c == 1 {
                // A plain substring: no index list (the string may be long).
                let view = s.unicodeScalars
                let n = view.count
                func clamp(_ x: Int?, _ dflt: Int) -> Int {
                    guard var x else { return dflt }
                    if x < 0 { x += n }
                    return min(max(x, 0), n)
                }
                let lo = clamp(a, 0), hi = max(lo, clamp(b, n))
                let from = view.index(view.startIndex, offsetBy: lo), to = view.index(from, offsetBy: hi - lo)
                let r = String(view[from..<to])
                if case .markup = v { return .markup(r) }
                return .string(r)
            }
            // Stepped slices list the positions first: 12 bytes a character.
            try budget.make(s.utf8.count &* 12)
            let scalars = Array(s.unicodeScalars)
            guard let idx = PyText.sliceIndices(count: scalars.count, start: a, stop: b, step: c) else {
                throw JinjaFailure(.type, "slice step cannot be zero")
            }
            let r = PyText.scalarsString(idx.map { scalars[$0] })
            if case .markup = v { return .markup(r) }
            return .string(r)
        default:
            return .undefined
        }
    }

    private func loopAttribute(_ s: JinjaLoopState, _ name: String) -> JinjaValue {
        switch name {
        case "index": return .int(s.index0 + 1)
        case "index0": return .int(s.index0)
        case "revindex": return .int(s.length - s.index0)
        case "revindex0": return .int(s.length - s.index0 - 1)
        case "first": return .bool(s.index0 == 0)
        case "last": return .bool(s.index0 == s.length - 1)
        case "length": return .int(s.length)
        case "depth": return .int(s.depth0 + 1)
        case "depth0": return .int(s.depth0)
        case "previtem": return s.previous
        case "nextitem": return s.next
        case "cycle", "changed":
            return .callable(JinjaCallable(.method(receiver: .callable(JinjaCallable(.loop(s))), name: name)))
        default: return .undefined
        }
    }

    // MARK: Iteration

    /// What `for x in value` walks: list items, dict keys, string characters; undefined is
    /// empty (as jinja2's Undefined); anything else is Python's TypeError.
    func iterate(_ v: JinjaValue) throws -> [JinjaValue] {
        switch v {
        case .array(let a), .tuple(let a): return a
        case .object(let o): return o.keys.map { .string($0) }
        case .string(let s), .markup(let s):
            // One string per character: refused before it is made when that is too big.
            try budget.admit(s.utf8.count &* 24)
            return s.unicodeScalars.map { .string(String($0)) }
        case .undefined: return []
        case .callable(let c):
            if case .generator(let items) = c.kind { return items }
            if case .view(_, let items) = c.kind { return items }
            throw JinjaFailure(.type, "'\(c.typeName)' object is not iterable")
        default:
            throw JinjaFailure(.type, "'\(v.typeName)' object is not iterable")
        }
    }
}
