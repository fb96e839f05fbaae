import Foundation

/// Binds call arguments to parameter names the way Python does, with Python-like messages.
struct JinjaArgumentBinder {
    let function: String
    let positional: [JinjaValue]
    let keyword: [(String, JinjaValue)]

    init(_ function: String, _ positional: [JinjaValue], _ keyword: [(String, JinjaValue)]) {
        self.function = function
        self.positional = positional
        self.keyword = keyword
    }

    /// Values for `parameters` in order (nil where not given); the first `required` must be given.
    func bind(_ parameters: [String], required: Int = 0) throws -> [JinjaValue?] {
        guard positional.count <= parameters.count else {
            throw JinjaFailure(
                .type, "\(function)() takes at most \(parameters.count) argument(s) (\(positional.count) given)")
        }
        var values: [JinjaValue?] = positional.map { $0 } + Array(repeating: nil, count: parameters.count - positional.count)
        for (k, v) in keyword {
            guard let i = parameters.firstIndex(of: k) else {
                throw JinjaFailure(.type, "\(function)() got an unexpected keyword argument '\(k)'")
            }
            if values[i] != nil { throw JinjaFailure(.type, "\(function)() got multiple values for argument '\(k)'") }
            values[i] = v
        }
        for i in 0..<required where values[i] == nil {
            throw JinjaFailure(.type, "\(function)() missing required argument '\(parameters[i])'")
        }
        return values
    }

    func noArguments() throws {
        if !positional.isEmpty || !keyword.isEmpty { throw JinjaFailure(.type, "\(function)() takes no arguments") }
    }
}

extension JinjaValue {
    /// An argument that must be a string (a markup string counts).
    func requireString(_ what: String) throws -> String {
        guard let s = stringValue else { throw JinjaFailure(.type, "\(what) must be a string, not \(typeName)") }
        return s
    }

    func requireInt(_ what: String) throws -> Int {
        guard let i = intValue else {
            throw JinjaFailure(.type, "\(what) must be an integer, not \(typeName)")
        }
        return i
    }
}

extension JinjaRenderer {
    /// Calls `receiver.name(...)`; nil when the receiver has no such method.
    func callMethod(
        _ receiver: JinjaValue, _ name: String, _ args: [JinjaValue], _ kwargs: [(String, JinjaValue)]
    ) throws -> JinjaValue? {
        let binder = JinjaArgumentBinder(name, args, kwargs)
        // Methods walk their receiver (and search it for string arguments): that is work.
        switch receiver {
        case .string(let s), .markup(let s):
            try spendSearching(s, args.lazy.compactMap(\.stringValue).max { $0.utf8.count < $1.utf8.count })
        case .array(let a), .tuple(let a): try budget.spend(a.count)
        default: break
        }
        switch receiver {
        case .string(let s):
            return try stringMethod(s, name, binder, markup: false)
        case .markup(let s):
            return try stringMethod(s, name, binder, markup: true)
        case .object(let o):
            return try dictMethod(receiver, o, name, binder)
        case .array(let a), .tuple(let a):
            return try listMethod(a, name, binder)
        case .callable(let c):
            switch c.kind {
            case .loop(let state):
                switch name {
                case "cycle":
                    guard !args.isEmpty else { throw JinjaFailure(.type, "no items for cycling given") }
                    return args[state.index0 % args.count]
                case "changed":
                    let changed = loops[state.id].lastChanged.map { !($0 == args) } ?? true
                    if changed { loops[state.id].lastChanged = args }
                    return .bool(changed)
                default:
                    return nil
                }
            case .cycler(let id):
                switch name {
                case "next":
                    let cy = cyclers[id]
                    guard !cy.items.isEmpty else { return .undefined }
                    cyclers[id].position = (cy.position + 1) % cy.items.count
                    return cy.items[cy.position]
                case "reset":
                    cyclers[id].position = 0
                    return JinjaValue.none
                default:
                    return nil
                }
            default:
                return nil
            }
        default:
            return nil
        }
    }

    private static func unsafe(_ name: String, _ type: String) -> JinjaFailure {
        // ImmutableSandboxedEnvironment (what transformers uses) refuses methods that
        // modify lists and dicts.
        JinjaFailure(.security, "access to attribute '\(name)' of '\(type)' object is unsafe.")
    }

    private func dictMethod(_ receiver: JinjaValue, _ o: JinjaObject, _ name: String, _ b: JinjaArgumentBinder) throws -> JinjaValue? {
        switch name {
        case "get":
            let v = try b.bind(["key", "default"], required: 1)
            guard let key = v[0]?.stringValue else { return v[1] ?? JinjaValue.none }
            return o[key] ?? v[1] ?? JinjaValue.none
        case "items":
            try b.noArguments()
            return .callable(JinjaCallable(.view("dict_items", o.map { .tuple([.string($0.0), $0.1]) })))
        case "keys":
            try b.noArguments()
            return .callable(JinjaCallable(.view("dict_keys", o.keys.map { .string($0) })))
        case "values":
            try b.noArguments()
            return .callable(JinjaCallable(.view("dict_values", o.values)))
        case "copy":
            try b.noArguments()
            return receiver
        case "pop", "popitem", "setdefault", "update", "clear":
            throw Self.unsafe(name, "dict")
        default:
            return nil
        }
    }

    private func listMethod(_ a: [JinjaValue], _ name: String, _ b: JinjaArgumentBinder) throws -> JinjaValue? {
        switch name {
        case "index":
            let v = try b.bind(["value"], required: 1)
            guard let i = a.firstIndex(where: { $0 == v[0] ?? .undefined }) else {
                throw JinjaFailure(.type, "\((v[0] ?? .undefined).pythonRepr) is not in list")
            }
            return .int(i)
        case "count":
            let v = try b.bind(["value"], required: 1)
            return .int(a.filter { $0 == v[0] ?? .undefined }.count)
        case "copy":
            try b.noArguments()
            return .array(a)
        case "append", "extend", "insert", "pop", "remove", "reverse", "sort", "clear":
            throw Self.unsafe(name, "list")
        default:
            return nil
        }
    }

    /// str methods. On a Markup receiver, those markupsafe wraps return Markup and escape
    /// their string arguments.
    private func stringMethod(_ s: String, _ name: String, _ b: JinjaArgumentBinder, markup: Bool) throws -> JinjaValue? {
        func wrap(_ r: String) -> JinjaValue { markup ? .markup(r) : .string(r) }
        func arg(_ v: JinjaValue?) -> String? {
            guard let v, let t = v.stringValue else { return nil }
            if markup, case .string = v { return PyText.htmlEscape(t) }
            return t
        }
        func chars(_ v: JinjaValue?, _ what: String) throws -> String? {
            guard let v, !v.isNone else { return nil }
            guard let t = v.stringValue else { throw JinjaFailure(.type, "\(what) arg must be None or str") }
            return t
        }
        switch name {
        case "strip", "lstrip", "rstrip":
            let v = try b.bind(["chars"])
            let c = try chars(v[0], name)
            return wrap(PyText.strip(s, c, left: name != "rstrip", right: name != "lstrip"))
        case "split", "rsplit":
            let v = try b.bind(["sep", "maxsplit"])
            let sep = try chars(v[0], "sep")
            if sep == "" { throw JinjaFailure(.type, "empty separator") }
            let maxSplit = try v[1].map { try $0.requireInt("maxsplit") } ?? -1
            try admitSplit(s, sep)
            let parts = name == "split" ? PyText.split(s, sep, maxSplit: maxSplit) : PyText.rsplit(s, sep, maxSplit: maxSplit)
            return .array(parts.map(wrap))
        case "splitlines":
            let v = try b.bind(["keepends"])
            try admitSplit(s, "\n")
            return .array(PyText.splitLines(s, keepEnds: v[0]?.isTruthy ?? false).map(wrap))
        case "replace":
            let v = try b.bind(["old", "new", "count"], required: 2)
            guard let old = arg(v[0]), let new = arg(v[1]) else {
                throw JinjaFailure(.type, "replace() arguments must be str")
            }
            let count = try v[2].map { try $0.requireInt("count") } ?? -1
            try admitReplace(s, old, new, count: count)
            return wrap(PyText.replace(s, old, new, count: count))
        case "startswith", "endswith":
            let v = try b.bind(["prefix", "start", "end"], required: 1)
            var text = s
            if v[1] != nil || v[2] != nil {
                let scalars = Array(s.unicodeScalars)
                let start = try v[1].flatMap { $0.isNone ? nil : try $0.requireInt("start") }
                let end = try v[2].flatMap { $0.isNone ? nil : try $0.requireInt("end") }
                let idx = PyText.sliceIndices(count: scalars.count, start: start, stop: end, step: 1) ?? []
                text = PyText.scalarsString(idx.map { scalars[$0] })
            }
            let candidates: [JinjaValue]
            switch v[0] ?? .none {
            case .array(let a), .tuple(let a): candidates = a
            case let p: candidates = [p]
            }
            for c in candidates {
                guard let p = c.stringValue else {
                    throw JinjaFailure(.type, "\(name) first arg must be str or a tuple of str, not \(c.typeName)")
                }
                if name == "startswith" ? PyText.hasPrefix(text, p) : PyText.hasSuffix(text, p) { return .bool(true) }
            }
            return .bool(false)
        case "lower":
            try b.noArguments()
            return wrap(PyText.lower(s))
        case "upper":
            try b.noArguments()
            return wrap(PyText.upper(s))
        case "casefold":
            try b.noArguments()
            return .string(PyText.lower(s))
        case "title":
            try b.noArguments()
            return wrap(PyText.title(s))
        case "capitalize":
            try b.noArguments()
            return wrap(PyText.capitalize(s))
        case "swapcase":
            try b.noArguments()
            return wrap(PyText.swapcase(s))
        case "find", "rfind", "index", "rindex":
            let v = try b.bind(["sub", "start", "end"], required: 1)
            let sub = try (v[0] ?? .none).requireString("substring")
            let scalars = Array(s.unicodeScalars)
            let start = try v[1].flatMap { $0.isNone ? nil : try $0.requireInt("start") }
            let end = try v[2].flatMap { $0.isNone ? nil : try $0.requireInt("end") }
            let idx = PyText.sliceIndices(count: scalars.count, start: start, stop: end, step: 1) ?? []
            let offset = idx.first ?? 0
            var r = PyText.find(PyText.scalarsString(idx.map { scalars[$0] }), sub, reverse: name.hasPrefix("r"))
            if r >= 0 { r += offset }
            if r < 0 && name.hasSuffix("index") { throw JinjaFailure(.type, "substring not found") }
            return .int(r)
        case "count":
            let v = try b.bind(["sub"], required: 1)
            return .int(PyText.count(s, try (v[0] ?? .none).requireString("substring")))
        case "join":
            let v = try b.bind(["iterable"], required: 1)
            var parts: [String] = []
            for (i, item) in try iterate(v[0] ?? .none).enumerated() {
                guard let t = item.stringValue else {
                    throw JinjaFailure(.type, "sequence item \(i): expected str instance, \(item.typeName) found")
                }
                parts.append(markup && item.isPlainString ? try escaped(t) : t)
            }
            try admitJoin(parts, separator: s)
            return wrap(parts.joined(separator: s))
        case "center", "ljust", "rjust":
            let v = try b.bind(["width", "fillchar"], required: 1)
            let width = try (v[0] ?? .none).requireInt("width")
            let fill = try v[1].map { try $0.requireString("fillchar") } ?? " "
            guard fill.unicodeScalars.count == 1, let f = fill.unicodeScalars.first else {
                throw JinjaFailure(.type, "The fill character must be exactly one character long")
            }
            let n = s.unicodeScalars.count
            guard width > n else { return wrap(s) }
            try admitRepeat(f.utf8.count, width)
            let pad = String(repeating: String(Character(f)), count: width - n)
            switch name {
            case "ljust": return wrap(s + pad)
            case "rjust": return wrap(pad + s)
            default: return wrap(PyText.center(s, width, f))
            }
        case "zfill":
            let v = try b.bind(["width"], required: 1)
            let width = try (v[0] ?? .none).requireInt("width")
            let scalars = Array(s.unicodeScalars)
            guard width > scalars.count else { return wrap(s) }
            try admitRepeat(1, width)
            let zeros = String(repeating: "0", count: width - scalars.count)
            if let first = scalars.first, first == "+" || first == "-" {
                return wrap(String(Character(first)) + zeros + PyText.scalarsString(scalars.dropFirst()))
            }
            return wrap(zeros + s)
        case "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric", "isdecimal", "istitle":
            try b.noArguments()
            let scalars = Array(s.unicodeScalars)
            switch name {
            case "islower": return .bool(PyText.isLower(s))
            case "isupper": return .bool(PyText.isUpper(s))
            case "istitle": return .bool(!scalars.isEmpty && PyText.title(s) == s && scalars.contains(where: PyText.isCased))
            default: break
            }
            guard !scalars.isEmpty else { return .bool(false) }
            let test: (Unicode.Scalar) -> Bool
            switch name {
            case "isdigit": test = PyText.isDigit
            case "isalpha": test = PyText.isAlpha
            case "isalnum": test = { PyText.isAlpha($0) || PyText.isNumeric($0) }
            case "isspace": test = PyText.isSpace
            case "isnumeric": test = PyText.isNumeric
            default: test = PyText.isDecimal
            }
            return .bool(scalars.allSatisfy(test))
        case "removeprefix", "removesuffix":
            let v = try b.bind(["affix"], required: 1)
            let a = try (v[0] ?? .none).requireString(name)
            if name == "removeprefix" {
                guard PyText.hasPrefix(s, a), !a.isEmpty else { return wrap(s) }
                return wrap(PyText.string(Array(s.utf8)[a.utf8.count...]))
            }
            guard PyText.hasSuffix(s, a), !a.isEmpty else { return wrap(s) }
            let bytes = Array(s.utf8)
            return wrap(PyText.string(bytes[0..<(bytes.count - a.utf8.count)]))
        case "partition", "rpartition":
            let v = try b.bind(["sep"], required: 1)
            let sep = try (v[0] ?? .none).requireString("sep")
            if sep.isEmpty { throw JinjaFailure(.type, "empty separator") }
            let parts = name == "partition" ? PyText.split(s, sep, maxSplit: 1) : PyText.rsplit(s, sep, maxSplit: 1)
            if parts.count == 2 { return .tuple([wrap(parts[0]), wrap(sep), wrap(parts[1])]) }
            return name == "partition" ? .tuple([wrap(s), wrap(""), wrap("")]) : .tuple([wrap(""), wrap(""), wrap(s)])
        case "expandtabs":
            let v = try b.bind(["tabsize"])
            let size = try v[0].map { try $0.requireInt("tabsize") } ?? 8
            let tabs = s.utf8.reduce(0) { $0 &+ ($1 == 9 ? 1 : 0) }
            try admitRepeat(max(1, size), tabs)
            try budget.admit(s.utf8.count &+ max(0, size) &* tabs)
            var out = "", column = 0
            for c in s.unicodeScalars {
                if c == "\t" {
                    let n = size > 0 ? size - column % size : 0
                    out += String(repeating: " ", count: n)
                    column += n
                } else {
                    out.unicodeScalars.append(c)
                    column = (c == "\n" || c == "\r") ? 0 : column + 1
                }
            }
            return wrap(out)
        case "format":
            return try wrap(format(s, b.positional, b.keyword, escape: markup))
        case "encode":
            throw JinjaFailure(.unsupported, "str.encode() (templates here have no bytes type)")
        default:
            return nil
        }
    }

    /// `str.format` with automatic (`{}`), positional (`{0}`) and named (`{name}`) fields,
    /// attribute/index lookups in fields and `!r`/`!s` conversions; format specs are not
    /// supported (no chat template in the wild uses them).
    private func format(_ s: String, _ args: [JinjaValue], _ kwargs: [(String, JinjaValue)], escape: Bool) throws -> String {
        var out = ""
        let scalars = Array(s.unicodeScalars)
        var i = 0, auto = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == "}" {
                guard i + 1 < scalars.count, scalars[i + 1] == "}" else {
                    throw JinjaFailure(.type, "Single '}' encountered in format string")
                }
                out += "}"
                i += 2
                continue
            }
            guard c == "{" else {
                out.unicodeScalars.append(c)
                i += 1
                continue
            }
            if i + 1 < scalars.count && scalars[i + 1] == "{" {
                out += "{"
                i += 2
                continue
            }
            guard let close = scalars[(i + 1)...].firstIndex(of: "}") else {
                throw JinjaFailure(.type, "Single '{' encountered in format string")
            }
            var field = PyText.scalarsString(scalars[(i + 1)..<close])
            i = close + 1
            var conversion: Character?
            if let bang = field.firstIndex(of: "!") {
                conversion = field[field.index(after: bang)...].first
                field = String(field[..<bang])
            }
            if field.contains(":") { throw JinjaFailure(.unsupported, "format specs in str.format ('{x:...}')") }
            // field_name: arg_name ("." attribute | "[" index "]")*
            var head = field
            var rest = ""
            if let cut = field.firstIndex(where: { $0 == "." || $0 == "[" }) {
                head = String(field[..<cut])
                rest = String(field[cut...])
            }
            var value: JinjaValue
            if head.isEmpty {
                guard auto < args.count else { throw JinjaFailure(.type, "Replacement index \(auto) out of range") }
                value = args[auto]
                auto += 1
            } else if let n = Int(head) {
                guard n < args.count else { throw JinjaFailure(.type, "Replacement index \(n) out of range") }
                value = args[n]
            } else {
                guard let v = kwargs.first(where: { $0.0 == head })?.1 else { throw JinjaFailure(.type, "KeyError: '\(head)'") }
                value = v
            }
            while !rest.isEmpty {
                if rest.hasPrefix(".") {
                    rest.removeFirst()
                    let end = rest.firstIndex(where: { $0 == "." || $0 == "[" }) ?? rest.endIndex
                    value = getattr(value, String(rest[..<end]))
                    rest = String(rest[end...])
                } else if rest.hasPrefix("["), let end = rest.firstIndex(of: "]") {
                    let key = String(rest[rest.index(after: rest.startIndex)..<end])
                    value = getitem(value, Int(key).map { .int($0) } ?? .string(key))
                    rest = String(rest[rest.index(after: end)...])
                } else {
                    throw JinjaFailure(.type, "invalid format field '\(field)'")
                }
            }
            if conversion == "r" { try budget.admit(value.printedBound(limit: budget.limits.valueBytes)) }
            let text = conversion == "r" ? value.pythonRepr : try str(value)
            out += escape && !value.isMarkup ? try escaped(text) : text
            try budget.admit(out.utf8.count)
        }
        return out
    }

    // MARK: Global functions

    func callBuiltin(_ name: String, _ args: [JinjaValue], _ kwargs: [(String, JinjaValue)]) throws -> JinjaValue {
        let b = JinjaArgumentBinder(name, args, kwargs)
        switch name {
        case "raise_exception":
            let v = try b.bind(["message"])
            throw JinjaFailure(.raised, (v[0] ?? .none).pythonString)
        case "strftime_now":
            let v = try b.bind(["format"], required: 1)
            return .string(JinjaStrftime.format(try (v[0] ?? .none).requireString("format"), now))
        case "range":
            guard kwargs.isEmpty else { throw JinjaFailure(.type, "range() takes no keyword arguments") }
            let ints = try args.map { try $0.requireInt("range() argument") }
            let (start, stop, step): (Int, Int, Int)
            switch ints.count {
            case 1: (start, stop, step) = (0, ints[0], 1)
            case 2: (start, stop, step) = (ints[0], ints[1], 1)
            case 3: (start, stop, step) = (ints[0], ints[1], ints[2])
            default: throw JinjaFailure(.type, "range expected 1 to 3 arguments, got \(ints.count)")
            }
            if step == 0 { throw JinjaFailure(.type, "range() arg 3 must not be zero") }
            // Overflow-checked: `range(-2**63, 2**63 - 1)` is simply too big.
            let (span, spanOverflow) = step > 0 ? stop.subtractingReportingOverflow(start) : start.subtractingReportingOverflow(stop)
            let stride = step.magnitude
            let count: Int
            if spanOverflow {
                count = Int.max
            } else if span <= 0 {
                count = 0
            } else {
                count = Int((UInt(span) + stride - 1) / stride)
            }
            // jinja2's sandbox refuses ranges this long.
            if count > 100_000 { throw JinjaFailure(.security, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).") }
            return .array((0..<count).map { .int(start + $0 * step) })
        case "dict", "namespace":
            var o = JinjaObject()
            if args.count > 1 { throw JinjaFailure(.type, "\(name) expected at most 1 argument, got \(args.count)") }
            if let first = args.first {
                switch first {
                case .object(let src): o = src
                default:
                    for pair in try iterate(first) {
                        let kv = try iterate(pair)
                        guard kv.count == 2, let k = kv[0].stringValue else {
                            throw JinjaFailure(.type, "\(name)() needs a mapping or key/value pairs")
                        }
                        o[k] = kv[1]
                    }
                }
            }
            for (k, v) in kwargs { o[k] = v }
            if name == "dict" { return .object(o) }
            namespaces.append(o)
            return .callable(JinjaCallable(.namespace(id: namespaces.count - 1)))
        case "cycler":
            cyclers.append((args, 0))
            return .callable(JinjaCallable(.cycler(id: cyclers.count - 1)))
        case "joiner":
            let v = try b.bind(["sep"])
            joiners.append(((v[0] ?? .string(", ")).pythonString, false))
            return .callable(JinjaCallable(.joiner(id: joiners.count - 1)))
        default:
            throw JinjaFailure(.unsupported, "the '\(name)' function")
        }
    }
}

extension JinjaValue {
    var isMarkup: Bool { if case .markup = self { return true } else { return false } }
    var isPlainString: Bool { if case .string = self { return true } else { return false } }
}

/// Python's `datetime.strftime` (glibc flavour, C locale) for `strftime_now`.
enum JinjaStrftime {
    static let days = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let months = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
        "December",
    ]

    static func format(_ fmt: String, _ date: Date, timeZone: TimeZone = .current) -> String {
        var cal = Calendar(identifier: .gregorian)
        cal.timeZone = timeZone
        let c = cal.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday, .nanosecond], from: date)
        let year = c.year ?? 1970, month = c.month ?? 1, day = c.day ?? 1
        let hour = c.hour ?? 0, minute = c.minute ?? 0, second = c.second ?? 0
        // Calendar: 1 = Sunday; Python: Monday = 0.
        let weekday0 = ((c.weekday ?? 1) + 5) % 7
        let dayOfYear = cal.ordinality(of: .day, in: .year, for: date) ?? 1
        func pad(_ v: Int, _ width: Int, _ fill: Character = "0") -> String {
            let s = String(v)
            return String(repeating: fill, count: max(0, width - s.count)) + s
        }
        var out = ""
        var chars = Array(fmt)[...]
        while let ch = chars.popFirst() {
            guard ch == "%", let next = chars.first else {
                out.append(ch)
                continue
            }
            chars.removeFirst()
            var d = next
            // glibc's "%-d" means no padding.
            var noPad = false
            if d == "-", let n2 = chars.first {
                noPad = true
                d = n2
                chars.removeFirst()
            }
            func num(_ v: Int, _ width: Int) -> String { noPad ? String(v) : pad(v, width) }
            let hour12 = hour % 12 == 0 ? 12 : hour % 12
            switch d {
            case "Y": out += String(year)
            case "y": out += num(year % 100, 2)
            case "C": out += num(year / 100, 2)
            case "m": out += num(month, 2)
            case "d": out += num(day, 2)
            case "e": out += noPad ? String(day) : pad(day, 2, " ")
            case "H": out += num(hour, 2)
            case "I": out += num(hour12, 2)
            case "k": out += pad(hour, 2, " ")
            case "l": out += pad(hour12, 2, " ")
            case "M": out += num(minute, 2)
            case "S": out += num(second, 2)
            case "f": out += pad((c.nanosecond ?? 0) / 1000, 6)
            case "p": out += hour < 12 ? "AM" : "PM"
            case "j": out += num(dayOfYear, 3)
            case "a": out += String(days[weekday0].prefix(3))
            case "A": out += days[weekday0]
            case "b", "h": out += String(months[month - 1].prefix(3))
            case "B": out += months[month - 1]
            case "w": out += String((weekday0 + 1) % 7)
            case "u": out += String(weekday0 + 1)
            case "F": out += "\(year)-\(pad(month, 2))-\(pad(day, 2))"
            case "D": out += "\(pad(month, 2))/\(pad(day, 2))/\(pad(year % 100, 2))"
            case "T": out += "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
            case "R": out += "\(pad(hour, 2)):\(pad(minute, 2))"
            case "x": out += "\(pad(month, 2))/\(pad(day, 2))/\(pad(year % 100, 2))"
            case "X": out += "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2))"
            case "c":
                out += "\(days[weekday0].prefix(3)) \(months[month - 1].prefix(3)) \(pad(day, 2, " ")) "
                out += "\(pad(hour, 2)):\(pad(minute, 2)):\(pad(second, 2)) \(year)"
            case "n": out += "\n"
            case "t": out += "\t"
            case "%": out += "%"
            case "Z": out += "" // naive datetimes have no zone name
            case "z": out += ""
            default:
                out.append("%")
                if noPad { out.append("-") }
                out.append(d)
            }
        }
        return out
    }
}
