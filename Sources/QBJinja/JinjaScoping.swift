import Foundation

/// jinja2 decides variable scoping when it compiles a template, and one consequence is
/// visible in output: in a frame (the template, a loop body, a macro, a with block, ...)
/// a name whose first mention is an assignment starts out *undefined* there, hiding the
/// context's value even in loops and macros that run before the assignment:
///
///     {% for m in messages %}{{ tools }}{% endfor %}{% set tools = [] %}
///
/// prints nothing for `tools` even when the caller passed tools. This pass reproduces
/// jinja2's symbol analysis (jinja2/idtracking.py) to find those names for every frame;
/// everything else about scoping falls out of the renderer's scope chain.
enum JinjaScoping {
    /// How a frame's variable gets its value on entry (idtracking's VAR_LOAD_*).
    private enum Load { case parameter, resolve, alias, undefined }

    private final class Symbols {
        var refs: [String: Load] = [:]
        var stores: Set<String> = []
        let parent: Symbols?

        init(parent: Symbols?) { self.parent = parent }

        func copy() -> Symbols {
            let s = Symbols(parent: parent)
            s.refs = refs
            s.stores = stores
            return s
        }

        func hasRef(_ name: String) -> Bool { refs[name] != nil || (parent?.hasRef(name) ?? false) }

        func load(_ name: String) {
            if !hasRef(name) { refs[name] = .resolve }
        }

        func store(_ name: String) {
            stores.insert(name)
            if refs[name] == nil { refs[name] = (parent?.hasRef(name) ?? false) ? .alias : .undefined }
        }

        func parameter(_ name: String) {
            stores.insert(name)
            refs[name] = .parameter
        }

        /// After an if: names stored in some branch but not before are looked up outside
        /// (not undefined), since the branch may not run.
        func branchUpdate(_ branches: [Symbols]) {
            var newStores = Set<String>()
            for b in branches { newStores.formUnion(b.stores) }
            newStores.subtract(stores)
            for b in branches {
                refs.merge(b.refs) { $1 }
                stores.formUnion(b.stores)
            }
            for n in newStores { refs[n] = (parent?.hasRef(n) ?? false) ? .alias : .resolve }
        }

        var frame: JinjaFrame {
            JinjaFrame(undefined: refs.filter { $0.value == .undefined }.map(\.key).sorted())
        }
    }

    /// The template with every nested frame annotated, and the root frame.
    static func annotate(_ body: [JinjaNode]) -> ([JinjaNode], JinjaFrame) {
        let root = Symbols(parent: nil)
        for n in body { visit(n, root) }
        return (body.map { annotate($0, root) }, root.frame)
    }

    // MARK: Symbol collection within one frame (FrameSymbolVisitor)

    private static func visit(_ node: JinjaNode, _ s: Symbols) {
        switch node {
        case .text, .break, .continue: break
        case .output(let e, _): visit(e, s)
        case .if(let branches, let otherwise, _): visitIf(branches[...], otherwise, s)
        case .for(let loop): visit(loop.iterable, s)
        case .set(let target, let e, _):
            visit(e, s)
            visit(target, s)
        case .setBlock(let target, _, _, _, _): visit(target, s)
        case .macro(let m): s.store(m.name)
        case .callBlock(let call, _, _): visit(call, s)
        case .filterBlock(_, let filters, _, _):
            for (_, args) in filters { visit(args, s) }
        case .with(let assignments, _, _, _):
            for (_, e) in assignments { visit(e, s) }
        }
    }

    /// jinja2 nests elifs as ifs inside the first if's elif list; the else belongs to the first.
    private static func visitIf(_ branches: ArraySlice<(test: JinjaExpr, body: [JinjaNode])>, _ otherwise: [JinjaNode], _ s: Symbols) {
        guard let first = branches.first else { return }
        visit(first.test, s)
        let body = s.copy()
        for n in first.body { visit(n, body) }
        let elifs = s.copy()
        for b in branches.dropFirst() { visitIf([b][...], [], elifs) }
        let other = s.copy()
        for n in otherwise { visit(n, other) }
        s.branchUpdate([body, elifs, other])
    }

    private static func visit(_ target: JinjaTarget, _ s: Symbols) {
        switch target {
        case .name(let n): s.store(n)
        case .attribute(let ns, _): s.load(ns)
        case .tuple(let ts): for t in ts { visit(t, s) }
        }
    }

    private static func parameters(_ target: JinjaTarget, _ s: Symbols) {
        switch target {
        case .name(let n): s.parameter(n)
        case .attribute(let ns, _): s.load(ns)
        case .tuple(let ts): for t in ts { parameters(t, s) }
        }
    }

    private static func visit(_ args: JinjaArguments, _ s: Symbols) {
        for e in args.positional { visit(e, s) }
        for (_, e) in args.keyword { visit(e, s) }
    }

    private static func visit(_ e: JinjaExpr, _ s: Symbols) {
        var names = Set<String>()
        JinjaNames.collect(e, into: &names)
        for n in names.sorted() { s.load(n) }
    }

    // MARK: Child frames (RootVisitor), analysed once their parent is complete

    private static func annotate(_ node: JinjaNode, _ s: Symbols) -> JinjaNode {
        switch node {
        case .text, .output, .set, .break, .continue:
            return node
        case .if(let branches, let otherwise, let line):
            // If branches are part of the enclosing frame.
            return .if(branches.map { ($0.test, $0.body.map { annotate($0, s) }) }, otherwise: otherwise.map { annotate($0, s) }, line: line)
        case .for(let loop):
            let bodySymbols = Symbols(parent: s)
            parameters(loop.target, bodySymbols)
            for n in loop.body { visit(n, bodySymbols) }
            let elseSymbols = Symbols(parent: s)
            for n in loop.otherwise { visit(n, elseSymbols) }
            return .for(
                JinjaForLoop(
                    target: loop.target, iterable: loop.iterable, filter: loop.filter,
                    body: loop.body.map { annotate($0, bodySymbols) }, otherwise: loop.otherwise.map { annotate($0, elseSymbols) },
                    recursive: loop.recursive, line: loop.line, bodyFrame: bodySymbols.frame, elseFrame: elseSymbols.frame))
        case .setBlock(let target, let body, let filters, _, let line):
            let inner = Symbols(parent: s)
            for n in body { visit(n, inner) }
            return .setBlock(target, body: body.map { annotate($0, inner) }, filters: filters, frame: inner.frame, line: line)
        case .macro(let m):
            return .macro(annotate(m, s))
        case .callBlock(let call, let caller, let line):
            return .callBlock(call: call, caller: annotate(caller, s), line: line)
        case .filterBlock(let body, let filters, _, let line):
            let inner = Symbols(parent: s)
            for n in body { visit(n, inner) }
            for (_, args) in filters { visit(args, inner) }
            return .filterBlock(body: body.map { annotate($0, inner) }, filters: filters, frame: inner.frame, line: line)
        case .with(let assignments, let body, _, let line):
            let inner = Symbols(parent: s)
            for (t, _) in assignments { parameters(t, inner) }
            for n in body { visit(n, inner) }
            return .with(assignments: assignments, body: body.map { annotate($0, inner) }, frame: inner.frame, line: line)
        }
    }

    private static func annotate(_ m: JinjaMacro, _ s: Symbols) -> JinjaMacro {
        let inner = Symbols(parent: s)
        for p in m.parameters { inner.parameter(p.name) }
        for p in m.parameters { if let d = p.defaultValue { visit(d, inner) } }
        if m.usesCaller { inner.parameter("caller") }
        if m.usesKwargs { inner.parameter("kwargs") }
        if m.usesVarargs { inner.parameter("varargs") }
        for n in m.body { visit(n, inner) }
        return JinjaMacro(
            name: m.name, parameters: m.parameters, body: m.body.map { annotate($0, inner) }, usesVarargs: m.usesVarargs,
            usesKwargs: m.usesKwargs, usesCaller: m.usesCaller, line: m.line, frame: inner.frame)
    }
}
