import Foundation
import QBSupport
import Yams

/// Typed, located reads from a parsed YAML document. Every failure is a `LocatedError`
/// naming the file and the line of the offending node, and unknown or repeated keys are
/// errors rather than silently ignored (a typo in a suite must not quietly change what is
/// measured).
struct YAMLObject {
    let path: String
    let node: Node
    /// The pairs in file order, keys as strings.
    let pairs: [(key: String, keyNode: Node, value: Node)]
    /// What this mapping is, for messages ("case 'greedy'", "sampling").
    let what: String

    init(_ node: Node, path: String, what: String) throws {
        guard case .mapping(let mapping) = node else {
            throw YAMLObject.error(path, node, "\(what) must be a mapping (key: value lines), got \(YAMLObject.kind(node))")
        }
        var pairs: [(String, Node, Node)] = []
        var seen: [String: Int] = [:]
        for (k, v) in mapping {
            guard case .scalar(let s) = k else {
                throw YAMLObject.error(path, k, "\(what): keys must be plain names")
            }
            if let first = seen[s.string] {
                throw YAMLObject.error(path, k, "\(what): key '\(s.string)' appears twice (first on line \(first))")
            }
            seen[s.string] = k.mark?.line ?? 0
            pairs.append((s.string, k, v))
        }
        self.path = path
        self.node = node
        self.pairs = pairs.map { (key: $0.0, keyNode: $0.1, value: $0.2) }
        self.what = what
    }

    var line: Int? { node.mark?.line }

    func error(_ message: String) -> LocatedError { YAMLObject.error(path, node, message) }

    static func error(_ path: String, _ node: Node?, _ message: String) -> LocatedError {
        LocatedError(path: path, line: node?.mark?.line, column: node?.mark?.column, message)
    }

    static func kind(_ node: Node) -> String {
        switch node {
        case .scalar(let s): return s.string.isEmpty ? "nothing" : "'\(s.string)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        }
    }

    /// Rejects keys outside `allowed`, suggesting the closest allowed one.
    func allowOnly(_ allowed: [String]) throws {
        for p in pairs where !allowed.contains(p.key) {
            let hint = YAMLObject.closest(p.key, in: allowed).map { " (did you mean '\($0)'?)" } ?? ""
            throw YAMLObject.error(
                path, p.keyNode,
                "\(what): unknown key '\(p.key)'\(hint); allowed: \(allowed.joined(separator: ", "))")
        }
    }

    func has(_ key: String) -> Bool { pairs.contains { $0.key == key } }

    func value(_ key: String) -> Node? {
        guard let p = pairs.first(where: { $0.key == key }) else { return nil }
        if case .scalar = p.value, p.value.tag == Tag(.null) { return nil }
        return p.value
    }

    func required(_ key: String) throws -> Node {
        guard let v = value(key) else { throw error("\(what): '\(key)' is required") }
        return v
    }

    func string(_ key: String) throws -> String? {
        guard let v = value(key) else { return nil }
        return try YAMLObject.string(v, path: path, what: "\(what): '\(key)'")
    }

    static func string(_ v: Node, path: String, what: String) throws -> String {
        guard case .scalar(let s) = v else { throw error(path, v, "\(what) must be text, got \(kind(v))") }
        return s.string
    }

    func int(_ key: String, min lower: Int? = nil, max upper: Int? = nil) throws -> Int? {
        guard let v = value(key) else { return nil }
        guard case .scalar(let s) = v, let n = Int(s.string.replacingOccurrences(of: "_", with: "")) else {
            throw YAMLObject.error(path, v, "\(what): '\(key)' must be a whole number, got \(YAMLObject.kind(v))")
        }
        if let l = lower, n < l { throw YAMLObject.error(path, v, "\(what): '\(key)' must be at least \(l), got \(n)") }
        if let u = upper, n > u { throw YAMLObject.error(path, v, "\(what): '\(key)' must be at most \(u), got \(n)") }
        return n
    }

    func uint64(_ key: String) throws -> UInt64? {
        guard let v = value(key) else { return nil }
        guard case .scalar(let s) = v, let n = UInt64(s.string.replacingOccurrences(of: "_", with: "")) else {
            throw YAMLObject.error(path, v, "\(what): '\(key)' must be a whole number from 0 to 2^64-1, got \(YAMLObject.kind(v))")
        }
        return n
    }

    func double(_ key: String) throws -> Double? {
        guard let v = value(key) else { return nil }
        guard case .scalar(let s) = v, let d = Double(s.string), d.isFinite else {
            throw YAMLObject.error(path, v, "\(what): '\(key)' must be a number, got \(YAMLObject.kind(v))")
        }
        return d
    }

    func bool(_ key: String) throws -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .scalar(let s) = v, let b = ["true": true, "false": false][s.string.lowercased()] else {
            throw YAMLObject.error(path, v, "\(what): '\(key)' must be true or false, got \(YAMLObject.kind(v))")
        }
        return b
    }

    /// A list; a single scalar counts as a list of one (`stop: "\n"`).
    func list(_ key: String) throws -> [Node]? {
        guard let v = value(key) else { return nil }
        switch v {
        case .sequence(let s): return Array(s)
        case .scalar: return [v]
        case .mapping: throw YAMLObject.error(path, v, "\(what): '\(key)' must be a list, got a mapping")
        }
    }

    func strings(_ key: String) throws -> [String]? {
        try list(key)?.map { try YAMLObject.string($0, path: path, what: "\(what): an item of '\(key)'") }
    }

    func object(_ key: String, what name: String? = nil) throws -> YAMLObject? {
        guard let v = value(key) else { return nil }
        return try YAMLObject(v, path: path, what: name ?? "\(what): '\(key)'")
    }

    /// The allowed word nearest to `word` by edit distance, if it is close enough to be a typo.
    static func closest(_ word: String, in words: [String]) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var row = Array(0...b.count)
            for i in 1...max(a.count, 1) where !a.isEmpty {
                var previous = row[0]
                row[0] = i
                for j in 1...max(b.count, 1) where !b.isEmpty {
                    let old = row[j]
                    row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                    previous = old
                }
            }
            return row[b.count]
        }
        let a = Array(word)
        let best = words.map { ($0, distance(a, Array($0))) }.min { $0.1 < $1.1 }
        guard let (w, d) = best, d <= max(2, word.count / 3) else { return nil }
        return w
    }
}

extension YAMLObject {
    /// Parses `text` into its root node, turning Yams' syntax errors into located errors.
    static func parse(_ text: String, path: String) throws -> Node {
        // libyaml and Yams recurse once per level: refuse deep nesting before they see it.
        do {
            try NestingDepth.checkYAML(text)
        } catch {
            throw LocatedError(path: path, line: error.line, "not valid YAML: nesting deeper than \(error.limit) levels")
        }
        do {
            guard let root = try Yams.compose(yaml: text) else {
                throw LocatedError(path: path, line: 1, "the file is empty")
            }
            return root
        } catch let e as YamlError {
            switch e {
            case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
                 .composer(let context, let problem, let mark, _):
                let ctx = context.map { "\($0.text) (line \($0.mark.line)): " } ?? ""
                throw LocatedError(path: path, line: mark.line, column: mark.column, "not valid YAML: \(ctx)\(problem)")
            case .reader(let problem, let offset, _, _):
                let line = offset.map { o in text.utf8.prefix(o).filter { $0 == UInt8(ascii: "\n") }.count + 1 }
                throw LocatedError(path: path, line: line, "not valid YAML: \(problem)")
            default:
                throw LocatedError(path: path, "not valid YAML: \(e)")
            }
        }
    }
}
