import Foundation

/// jinja2's built-in filters (3.1), with transformers' `tojson` (json.dumps with
/// ensure_ascii=False and indent/separators/sort_keys). Filters that return generators in
/// jinja2 (map, select, reject, selectattr, rejectattr, unique, items, batch, reverse)
/// return one here too, so `|length` on them fails and they are always true, as there.
extension JinjaRenderer {
    func applyFilter(
        _ f: JinjaFilter, _ value: JinjaValue, _ args: JinjaArguments, _ scope: JinjaScope, source: JinjaExpr? = nil
    ) throws -> JinjaValue {
        let (positional, keyword) = try evalArguments(args, scope)
        return try filter(f, value, positional, keyword, source: source)
    }

    /// Applies filter `f` to `value`; also used by `map('name')`.
    func filter(
        _ f: JinjaFilter, _ value: JinjaValue, _ positional: [JinjaValue], _ keyword: [(String, JinjaValue)],
        source: JinjaExpr? = nil
    ) throws -> JinjaValue {
        let b = JinjaArgumentBinder(f.rawValue, positional, keyword)
        switch f {
        case .safe:
            try b.noArguments()
            switch value {
            case .markup: return value
            case .string(let s): return .markup(s)
            default: return .markup(try str(value))
            }
        case .e, .escape:
            try b.noArguments()
            if case .markup = value { return value }
            return .markup(try escaped(try str(value)))
        case .forceescape:
            try b.noArguments()
            return .markup(try escaped(try str(value)))
        case .string:
            try b.noArguments()
            switch value {
            case .string, .markup: return value
            default: return .string(try str(value))
            }
        case .trim:
            let v = try b.bind(["chars"])
            let chars: String? = try v[0].flatMap { $0.isNone ? nil : try $0.requireString("trim chars") }
            return softString(value) { PyText.strip($0, chars, left: true, right: true) }
        case .upper:
            try b.noArguments()
            return softString(value, PyText.upper)
        case .lower:
            try b.noArguments()
            return softString(value, PyText.lower)
        case .capitalize:
            try b.noArguments()
            return softString(value, PyText.capitalize)
        case .title:
            try b.noArguments()
            return .string(Self.jinjaTitle(value.pythonString))
        case .replace:
            let v = try b.bind(["old", "new", "count"], required: 2)
            let count = try v[2].flatMap { $0.isNone ? nil : try $0.requireInt("count") } ?? -1
            let (text, old, new) = (try str(value), try str(v[0] ?? .none), try str(v[1] ?? .none))
            try admitReplace(text, old, new, count: count)
            return .string(PyText.replace(text, old, new, count: count))
        case .indent:
            let v = try b.bind(["width", "first", "blank"])
            return try indent(value, width: v[0] ?? .int(4), first: v[1]?.isTruthy ?? false, blank: v[2]?.isTruthy ?? false)
        case .center:
            let v = try b.bind(["width"])
            let width = try v[0].map { try $0.requireInt("width") } ?? 80
            try admitRepeat(1, width)
            return .string(PyText.center(try str(value), width, " "))
        case .wordcount:
            try b.noArguments()
            var count = 0, inWord = false
            for c in value.pythonString.unicodeScalars {
                let word = c == "_" || PyText.isAlpha(c) || PyText.isNumeric(c)
                if word && !inWord { count += 1 }
                inWord = word
            }
            return .int(count)
        case .format:
            // jinja2: soft_str(value) % (kwargs or args)
            let args: JinjaValue = keyword.isEmpty ? .tuple(positional) : .object(JinjaObject(keyword))
            return .string(try JinjaOperators.printf(try str(value), args, limit: budget.limits.valueBytes))
        case .tojson:
            return try tojson(value, b)
        case .length, .count:
            try b.noArguments()
            return .int(try length(value))
        case .list:
            try b.noArguments()
            return .array(try iterate(value))
        case .first:
            try b.noArguments()
            if case .none = value { throw JinjaFailure(.type, "'NoneType' object is not iterable") }
            return try iterate(value).first ?? .undefined
        case .last:
            try b.noArguments()
            if case .callable(let c) = value, case .generator = c.kind {
                throw JinjaFailure(.type, "'generator' object is not reversible")
            }
            return try iterate(value).last ?? .undefined
        case .items:
            try b.noArguments()
            switch value {
            case .undefined: return generator([])
            case .object(let o): return generator(o.map { .tuple([.string($0.0), $0.1]) })
            default: throw JinjaFailure(.type, "Can only get item pairs from a mapping.")
            }
        case .join:
            let v = try b.bind(["d", "attribute"])
            var items = try iterate(value)
            if let attribute = v[1], !attribute.isNone { items = try items.map { try attributeOf($0, attribute) } }
            let separator = try str(v[0] ?? .string(""))
            let parts = try items.map { try str($0) }
            try admitJoin(parts, separator: separator)
            return .string(parts.joined(separator: separator))
        case .d, .default:
            let v = try b.bind(["default_value", "boolean"])
            let fallback = v[0] ?? .string("")
            if value.isUndefined || ((v[1]?.isTruthy ?? false) && !value.isTruthy) { return fallback }
            return value
        case .map:
            return try map(value, positional, keyword)
        case .select, .reject, .selectattr, .rejectattr:
            return try selectOrReject(
                value, positional, keyword, select: f == .select || f == .selectattr,
                byAttribute: f == .selectattr || f == .rejectattr)
        case .unique:
            let v = try b.bind(["case_sensitive", "attribute"])
            let caseSensitive = v[0]?.isTruthy ?? false
            var seen: [JinjaValue] = []
            var out: [JinjaValue] = []
            for item in try iterate(value) {
                try budget.spend(1 &+ seen.count)
                var key = try v[1].map { $0.isNone ? item : try attributeOf(item, $0) } ?? item
                if !caseSensitive { key = Self.ignoreCase(key) }
                switch key {
                case .array, .object: throw JinjaFailure(.type, "unhashable type: '\(key.typeName)'")
                default: break
                }
                if !seen.contains(where: { $0 == key }) {
                    seen.append(key)
                    out.append(item)
                }
            }
            return generator(out)
        case .reverse:
            try b.noArguments()
            switch value {
            case .string(let s): return .string(PyText.scalarsString(s.unicodeScalars.reversed()))
            case .markup(let s): return .markup(PyText.scalarsString(s.unicodeScalars.reversed()))
            case .callable(let c):
                if case .generator(let items) = c.kind { return .array(items.reversed()) }
                if case .view(_, let items) = c.kind { return generator(items.reversed()) }
                throw JinjaFailure(.type, "argument to reversed() must be a sequence")
            case .array, .tuple, .object: return generator(try iterate(value).reversed())
            case .undefined: return .array([])
            default: throw JinjaFailure(.type, "argument to reversed() must be a sequence")
            }
        case .sort:
            let v = try b.bind(["reverse", "case_sensitive", "attribute"])
            return .array(
                try sorted(
                    try iterate(value), reverse: v[0]?.isTruthy ?? false, caseSensitive: v[1]?.isTruthy ?? false,
                    attribute: v[2]))
        case .dictsort:
            let v = try b.bind(["case_sensitive", "by", "reverse"])
            guard case .object(let o) = value else { throw JinjaFailure(.type, "You can only sort by either 'key' or 'value'") }
            let by = (v[1] ?? .string("key")).pythonString
            guard by == "key" || by == "value" else { throw JinjaFailure(.type, "You can only sort by either 'key' or 'value'") }
            let pairs: [JinjaValue] = o.map { .tuple([.string($0.0), $0.1]) }
            return .array(
                try sorted(
                    pairs, reverse: v[2]?.isTruthy ?? false, caseSensitive: v[0]?.isTruthy ?? false,
                    attribute: .int(by == "key" ? 0 : 1)))
        case .min, .max:
            let v = try b.bind(["case_sensitive", "attribute"])
            let items = try iterate(value)
            guard var best = items.first else { return .undefined }
            let caseSensitive = v[0]?.isTruthy ?? false
            func key(_ x: JinjaValue) throws -> JinjaValue {
                let k = try v[1].map { $0.isNone ? x : try attributeOf(x, $0) } ?? x
                return caseSensitive ? k : Self.ignoreCase(k)
            }
            var bestKey = try key(best)
            for item in items.dropFirst() {
                let k = try key(item)
                guard let c = JinjaValue.compare(k, bestKey) else {
                    throw JinjaFailure(.type, "'<' not supported between instances of '\(k.typeName)' and '\(bestKey.typeName)'")
                }
                if (f == .max && c > 0) || (f == .min && c < 0) {
                    best = item
                    bestKey = k
                }
            }
            return best
        case .sum:
            let v = try b.bind(["attribute", "start"])
            var total = v[1] ?? .int(0)
            for item in try iterate(value) {
                let x = try v[0].map { $0.isNone ? item : try attributeOf(item, $0) } ?? item
                if x.stringValue != nil && total.stringValue == nil {
                    throw JinjaFailure(.type, "unsupported operand type(s) for +: '\(total.typeName)' and 'str'")
                }
                try admitBinary(.add, total, x)
                total = try JinjaOperators.add(total, x)
            }
            return total
        case .abs:
            try b.noArguments()
            switch value {
            case .int(let i): return i == Int.min ? .double(-Double(i)) : .int(Swift.abs(i))
            case .double(let d): return .double(Swift.abs(d))
            case .bool(let x): return .int(x ? 1 : 0)
            default: throw JinjaFailure(.type, "bad operand type for abs(): '\(value.typeName)'")
            }
        case .round:
            let v = try b.bind(["precision", "method"])
            let precision = try v[0].map { try $0.requireInt("precision") } ?? 0
            let method = (v[1] ?? .string("common")).pythonString
            guard ["common", "ceil", "floor"].contains(method) else {
                throw JinjaFailure(.type, "method must be common, ceil or floor")
            }
            guard let x = value.numberValue else { throw JinjaFailure(.type, "type \(value.typeName) doesn't define __round__ method") }
            if method != "common" {
                let scale = pow(10.0, Double(precision))
                return .double((method == "ceil" ? (x * scale).rounded(.up) : (x * scale).rounded(.down)) / scale)
            }
            if let i = value.intValue, precision >= 0 { return .int(i) }
            return .double(Self.pythonRound(x, precision))
        case .int:
            // int(Undefined) raises in jinja2 rather than giving the default.
            if case .undefined = value { throw source.map(undefinedFailure) ?? JinjaFailure(.undefined, "undefined value given to int") }
            let v = try b.bind(["default", "base"])
            return Self.toInt(value, default: v[0] ?? .int(0), base: try v[1].map { try $0.requireInt("base") } ?? 10)
        case .float:
            if case .undefined = value { throw source.map(undefinedFailure) ?? JinjaFailure(.undefined, "undefined value given to float") }
            let v = try b.bind(["default"])
            return Self.toFloat(value, default: v[0] ?? .double(0))
        case .attr:
            let v = try b.bind(["name"], required: 1)
            // Python attributes only (methods, namespace and loop attributes), not dict keys.
            let name = (v[0] ?? .none).pythonString
            if case .object = value, !Self.dictMethods.contains(name) { return .undefined }
            return getattr(value, name)
        case .batch:
            let v = try b.bind(["linecount", "fill_with"], required: 1)
            let n = try (v[0] ?? .none).requireInt("linecount")
            guard n > 0 else { throw JinjaFailure(.type, "batch size must be positive") }
            if let fill = v[1], !fill.isNone { try admitRepeat(16, min(n, Int.max / 16)) }
            var rows: [JinjaValue] = []
            var row: [JinjaValue] = []
            for item in try iterate(value) {
                row.append(item)
                if row.count == n {
                    rows.append(.array(row))
                    row = []
                }
            }
            if !row.isEmpty {
                if let fill = v[1], !fill.isNone { row += Array(repeating: fill, count: n - row.count) }
                rows.append(.array(row))
            }
            return generator(rows)
        }
    }

    func generator(_ items: [JinjaValue]) -> JinjaValue { .callable(JinjaCallable(.generator(items))) }

    /// jinja2's soft_str: strings (and Markup, which stays Markup) are transformed as they
    /// are; anything else goes through str() first.
    private func softString(_ v: JinjaValue, _ f: (String) -> String) -> JinjaValue {
        switch v {
        case .markup(let s): return .markup(f(s))
        case .string(let s): return .string(f(s))
        default: return .string(f(v.pythonString))
        }
    }

    /// Python's len().
    func length(_ v: JinjaValue) throws -> Int {
        switch v {
        case .string(let s), .markup(let s): return s.unicodeScalars.count
        case .array(let a), .tuple(let a): return a.count
        case .object(let o): return o.count
        case .undefined: return 0
        case .callable(let c):
            if case .view(_, let items) = c.kind { return items.count }
            throw JinjaFailure(.type, "object of type '\(v.typeName)' has no len()")
        default: throw JinjaFailure(.type, "object of type '\(v.typeName)' has no len()")
        }
    }

    /// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then index 0.
    func attributeOf(_ item: JinjaValue, _ attribute: JinjaValue) throws -> JinjaValue {
        if let i = attribute.intValue { return getitem(item, .int(i)) }
        var v = item
        for part in attribute.pythonString.split(separator: ".", omittingEmptySubsequences: false) {
            if case .undefined = v { throw JinjaFailure(.undefined, "'\(attribute.pythonString)' is undefined on an item") }
            let key: JinjaValue = Int(part).map { .int($0) } ?? .string(String(part))
            v = getitem(v, key)
        }
        return v
    }

    private static func ignoreCase(_ v: JinjaValue) -> JinjaValue {
        switch v {
        case .string(let s): return .string(PyText.lower(s))
        case .markup(let s): return .markup(PyText.lower(s))
        default: return v
        }
    }

    private func sorted(_ items: [JinjaValue], reverse: Bool, caseSensitive: Bool, attribute: JinjaValue?) throws -> [JinjaValue] {
        // n log n comparisons.
        try budget.spend(items.count &* (Int.bitWidth - items.count.leadingZeroBitCount))
        let keys: [JinjaValue] = try items.map { item in
            let k = try attribute.map { $0.isNone ? item : try attributeOf(item, $0) } ?? item
            return caseSensitive ? k : Self.ignoreCase(k)
        }
        var failure: JinjaFailure?
        // Sort indices with the index as tie-breaker: Python's sort is stable, also reversed.
        let order = Array(items.indices).sorted { i, j in
            guard let c = JinjaValue.compare(keys[i], keys[j]) else {
                failure = failure ?? JinjaFailure(.type, "'<' not supported between instances of '\(keys[i].typeName)' and '\(keys[j].typeName)'")
                return i < j
            }
            if c == 0 { return i < j }
            return reverse ? c > 0 : c < 0
        }
        if let failure { throw failure }
        return order.map { items[$0] }
    }

    private func map(_ value: JinjaValue, _ positional: [JinjaValue], _ keyword: [(String, JinjaValue)]) throws -> JinjaValue {
        // jinja2 skips a false value (none included) before looking at it or the arguments.
        guard value.isTruthy else { return generator([]) }
        let items = try iterate(value)
        if positional.isEmpty, let attribute = keyword.first(where: { $0.0 == "attribute" })?.1 {
            let fallback = keyword.first(where: { $0.0 == "default" })?.1
            if let extra = keyword.first(where: { $0.0 != "attribute" && $0.0 != "default" }) {
                throw JinjaFailure(.type, "Unexpected keyword argument '\(extra.0)'")
            }
            return generator(
                try items.map { item in
                    let v = try attributeOf(item, attribute)
                    if let fallback, !fallback.isNone, v.isUndefined { return fallback }
                    return v
                })
        }
        guard let name = positional.first?.stringValue else { throw JinjaFailure(.type, "map requires a filter argument") }
        guard let f = JinjaFilter(rawValue: name) else { throw JinjaFailure(.type, "No filter named '\(name)'.") }
        let rest = Array(positional.dropFirst())
        try budget.spend(items.count)
        return generator(try items.map { try filter(f, $0, rest, keyword) })
    }

    private func selectOrReject(
        _ value: JinjaValue, _ positional: [JinjaValue], _ keyword: [(String, JinjaValue)], select: Bool, byAttribute: Bool
    ) throws -> JinjaValue {
        // As map: a false value (none included) selects nothing, unexamined.
        guard value.isTruthy else { return generator([]) }
        var args = positional[...]
        var attribute: JinjaValue?
        if byAttribute {
            guard let a = args.popFirst() else { throw JinjaFailure(.type, "Missing parameter for attribute name") }
            attribute = a
        }
        var test: JinjaTest?
        if let name = args.popFirst() {
            guard let t = JinjaTest(rawValue: name.pythonString) else {
                throw JinjaFailure(.type, "No test named '\(name.pythonString)'.")
            }
            test = t
        }
        let testArgs = Array(args)
        var out: [JinjaValue] = []
        for item in try iterate(value) {
            let subject = try attribute.map { try attributeOf(item, $0) } ?? item
            let passed = try test.map { try applyTest($0, subject, testArgs, nil) } ?? subject.isTruthy
            if passed == select { out.append(item) }
        }
        _ = keyword
        return generator(out)
    }

    private func indent(_ value: JinjaValue, width: JinjaValue, first: Bool, blank: Bool) throws -> JinjaValue {
        let indention: String
        if let w = width.stringValue {
            indention = w
        } else {
            let n = try width.requireInt("width")
            try admitRepeat(1, n)
            indention = String(repeating: " ", count: max(0, n))
        }
        let text: String
        switch value {
        case .string(let s), .markup(let s): text = s
        case .undefined: throw JinjaFailure(.undefined, "undefined value given to indent")
        default: throw JinjaFailure(.type, "unsupported operand type(s) for +=: '\(value.typeName)' and 'str'")
        }
        // jinja2 appends a newline first so that splitlines keeps a trailing empty line.
        let lines = PyText.splitLines(text + "\n")
        try admitRepeat(max(1, indention.utf8.count), lines.count)
        try budget.admit(text.utf8.count &+ indention.utf8.count &* lines.count)
        var rv: String
        if blank {
            rv = lines.joined(separator: "\n" + indention)
        } else {
            rv = lines.first ?? ""
            let rest = lines.dropFirst()
            if !rest.isEmpty {
                rv += "\n" + rest.map { $0.isEmpty ? $0 : indention + $0 }.joined(separator: "\n")
            }
        }
        if first { rv = indention + rv }
        if case .markup = value { return .markup(rv) }
        return .string(rv)
    }

    private func tojson(_ value: JinjaValue, _ b: JinjaArgumentBinder) throws -> JinjaValue {
        let v = try b.bind(["ensure_ascii", "indent", "separators", "sort_keys"])
        var indent: String?
        switch v[1] {
        case nil, .none?: indent = nil
        case .string(let s)?, .markup(let s)?: indent = s
        case let x?:
            let n = try x.requireInt("indent")
            try admitRepeat(1, n)
            indent = String(repeating: " ", count: max(0, n))
        }
        var separators: (String, String)?
        if let s = v[2], !s.isNone {
            let parts = try iterate(s)
            guard parts.count == 2, let a = parts[0].stringValue, let c = parts[1].stringValue else {
                throw JinjaFailure(.type, "separators must be a pair of strings")
            }
            separators = (a, c)
        }
        try admitJSON(value, indent: indent?.utf8.count ?? 0, ensureASCII: v[0]?.isTruthy ?? false)
        return .string(
            try JinjaJSON.dumps(
                value, ensureASCII: v[0]?.isTruthy ?? false, indent: indent, separators: separators,
                sortKeys: v[3]?.isTruthy ?? false))
    }

    /// jinja2's title filter: capitalizes runs split at whitespace and `-([{<`.
    static func jinjaTitle(_ s: String) -> String {
        var out = ""
        var run = String.UnicodeScalarView()
        var runIsSeparator: Bool?
        func flush() {
            guard let first = run.first else { return }
            out += String(first).uppercased() + PyText.lower(PyText.scalarsString(run.dropFirst()))
            run = String.UnicodeScalarView()
        }
        for c in s.unicodeScalars {
            let sep = PyText.isSpace(c) || "-({[<".unicodeScalars.contains(c)
            if sep != runIsSeparator { flush() }
            runIsSeparator = sep
            run.append(c)
        }
        flush()
        return out
    }

    /// Python's round(x, n): correctly rounded, ties to even.
    static func pythonRound(_ x: Double, _ n: Int) -> Double {
        if !x.isFinite { return x }
        if n == 0 { return x.rounded(.toNearestOrEven) }
        if n > 0 {
            // printf's %.nf rounds the exact binary value correctly, as Python does.
            return Double(String(format: "%.\(min(n, 300))f", x)) ?? x
        }
        let scale = pow(10.0, Double(-n))
        return (x / scale).rounded(.toNearestOrEven) * scale
    }

    /// jinja2's int filter: int(x), or int(float(x)) for "42.23", else the default.
    static func toInt(_ v: JinjaValue, default fallback: JinjaValue, base: Int) -> JinjaValue {
        switch v {
        case .int: return v
        case .bool(let b): return .int(b ? 1 : 0)
        case .double(let d):
            guard d.isFinite, let i = Int(exactly: d.rounded(.towardZero)) else { return fallback }
            return .int(i)
        case .string(let s), .markup(let s):
            var t = PyText.strip(s, nil, left: true, right: true).replacingOccurrences(of: "_", with: "")
            var negative = false
            if t.hasPrefix("-") || t.hasPrefix("+") {
                negative = t.hasPrefix("-")
                t.removeFirst()
            }
            var radix = base
            let lower = t.lowercased()
            if base == 16 && lower.hasPrefix("0x") || base == 8 && lower.hasPrefix("0o") || base == 2 && lower.hasPrefix("0b") {
                t.removeFirst(2)
            } else if base == 0 {
                radix = lower.hasPrefix("0x") ? 16 : lower.hasPrefix("0o") ? 8 : lower.hasPrefix("0b") ? 2 : 10
                if radix != 10 { t.removeFirst(2) }
            }
            if (2...36).contains(radix), !t.isEmpty, let i = Int(t, radix: radix) { return .int(negative ? -i : i) }
            if case .double(let d) = toFloat(v, default: .none), d.isFinite, let i = Int(exactly: d.rounded(.towardZero)) {
                return .int(i)
            }
            return fallback
        default:
            return fallback
        }
    }

    /// jinja2's float filter: float(x), else the default.
    static func toFloat(_ v: JinjaValue, default fallback: JinjaValue) -> JinjaValue {
        switch v {
        case .int(let i): return .double(Double(i))
        case .bool(let b): return .double(b ? 1 : 0)
        case .double: return v
        case .string(let s), .markup(let s):
            let t = PyText.strip(s, nil, left: true, right: true).replacingOccurrences(of: "_", with: "").lowercased()
            switch t {
            case "inf", "+inf", "infinity", "+infinity": return .double(.infinity)
            case "-inf", "-infinity": return .double(-.infinity)
            case "nan", "+nan", "-nan": return .double(.nan)
            default: break
            }
            guard !t.isEmpty, t.allSatisfy({ "0123456789.e+-".contains($0) }), let d = Double(t) else { return fallback }
            return .double(d)
        default:
            return fallback
        }
    }
}
