import Foundation

/// Python's arithmetic, comparison and `in`, with Python's error messages.
enum JinjaOperators {
    static func typeError(_ op: String, _ a: JinjaValue, _ b: JinjaValue) -> JinjaFailure {
        JinjaFailure(.type, "unsupported operand type(s) for \(op): '\(a.typeName)' and '\(b.typeName)'")
    }

    /// `limit` bounds what a printf width or precision may ask for (the sandbox's value size).
    static func binary(_ op: JinjaBinaryOp, _ a: JinjaValue, _ b: JinjaValue, limit: Int = .max) throws -> JinjaValue {
        switch op {
        case .add: return try add(a, b)
        case .subtract:
            if let r = integer(a, b, { $0.subtractingReportingOverflow($1) }) { return r }
            if let x = a.numberValue, let y = b.numberValue { return .double(x - y) }
            throw typeError("-", a, b)
        case .multiply: return try multiply(a, b)
        case .divide:
            guard let x = a.numberValue, let y = b.numberValue else { throw typeError("/", a, b) }
            if y == 0 { throw JinjaFailure(.type, "division by zero") }
            return .double(x / y)
        case .floorDivide:
            if let x = a.intValue, let y = b.intValue {
                if y == 0 { throw JinjaFailure(.type, "integer division or modulo by zero") }
                if x == Int.min && y == -1 { return .double(-Double(Int.min)) }
                let q = x / y
                return .int((x % y != 0 && (x < 0) != (y < 0)) ? q - 1 : q)
            }
            guard let x = a.numberValue, let y = b.numberValue else { throw typeError("//", a, b) }
            if y == 0 { throw JinjaFailure(.type, "float floor division by zero") }
            return .double((x / y).rounded(.down))
        case .modulo:
            if let format = a.stringValue { return .string(try JinjaOperators.printf(format, b, limit: limit)) }
            if let x = a.intValue, let y = b.intValue {
                if y == 0 { throw JinjaFailure(.type, "integer division or modulo by zero") }
                if y == -1 { return .int(0) }
                let r = x % y
                return .int(r != 0 && (r < 0) != (y < 0) ? r + y : r)
            }
            guard let x = a.numberValue, let y = b.numberValue else { throw typeError("%", a, b) }
            if y == 0 { throw JinjaFailure(.type, "float modulo") }
            var r = fmod(x, y)
            if r != 0 && (r < 0) != (y < 0) { r += y }
            // Python gives a zero remainder the sign of the divisor.
            if r == 0 { r = copysign(0, y) }
            return .double(r)
        case .power:
            if let x = a.intValue, let y = b.intValue, y >= 0 {
                var result = 1, base = x, e = y
                var overflow = false
                while e > 0 && !overflow {
                    if e & 1 == 1 {
                        let (r, o) = result.multipliedReportingOverflow(by: base)
                        result = r
                        overflow = overflow || o
                    }
                    e >>= 1
                    if e > 0 {
                        let (sq, o) = base.multipliedReportingOverflow(by: base)
                        base = sq
                        overflow = overflow || o
                    }
                }
                if overflow { throw JinjaFailure(.type, "integer result of ** is too large") }
                return .int(result)
            }
            guard let x = a.numberValue, let y = b.numberValue else { throw typeError("** or pow()", a, b) }
            if x == 0 && y < 0 { throw JinjaFailure(.type, "0.0 cannot be raised to a negative power") }
            let r = pow(x, y)
            if r.isInfinite && x.isFinite && y.isFinite { throw JinjaFailure(.type, "(34, 'Numerical result out of range')") }
            if r.isNaN && !x.isNaN && !y.isNaN {
                throw JinjaFailure(.unsupported, "complex results of ** (a negative number to a fractional power)")
            }
            return .double(r)
        }
    }

    /// Integer arithmetic when both sides are ints (or bools); overflow falls back to
    /// floating point rather than trapping (Python would grow the integer).
    private static func integer(_ a: JinjaValue, _ b: JinjaValue, _ f: (Int, Int) -> (Int, Bool)) -> JinjaValue? {
        guard let x = a.intValue, let y = b.intValue else { return nil }
        let (r, overflow) = f(x, y)
        return overflow ? nil : .int(r)
    }

    static func add(_ a: JinjaValue, _ b: JinjaValue) throws -> JinjaValue {
        switch (a, b) {
        case (.string(let x), .string(let y)): return .string(x + y)
        // markupsafe: Markup + str escapes the str, and so does str + Markup.
        case (.markup(let x), .markup(let y)): return .markup(x + y)
        case (.markup(let x), .string(let y)): return .markup(x + PyText.htmlEscape(y))
        case (.string(let x), .markup(let y)): return .markup(PyText.htmlEscape(x) + y)
        case (.array(let x), .array(let y)): return .array(x + y)
        case (.tuple(let x), .tuple(let y)): return .tuple(x + y)
        case (.string, _), (.markup, _):
            throw JinjaFailure(.type, "can only concatenate str (not \"\(b.typeName)\") to str")
        case (.array, _), (.tuple, _):
            throw JinjaFailure(.type, "can only concatenate \(a.typeName) (not \"\(b.typeName)\") to \(a.typeName)")
        default:
            if let r = integer(a, b, { $0.addingReportingOverflow($1) }) { return r }
            if let x = a.numberValue, let y = b.numberValue { return .double(x + y) }
            throw typeError("+", a, b)
        }
    }

    static func multiply(_ a: JinjaValue, _ b: JinjaValue) throws -> JinjaValue {
        func repeated(_ n: Int, _ v: JinjaValue) -> JinjaValue? {
            let count = max(0, n)
            switch v {
            case .string(let s): return .string(String(repeating: s, count: count))
            case .markup(let s): return .markup(String(repeating: s, count: count))
            case .array(let arr): return .array(Array([[JinjaValue]](repeating: arr, count: count).joined()))
            case .tuple(let arr): return .tuple(Array([[JinjaValue]](repeating: arr, count: count).joined()))
            default: return nil
            }
        }
        if let n = b.intValue, let r = repeated(n, a) { return r }
        if let n = a.intValue, let r = repeated(n, b) { return r }
        if let r = integer(a, b, { $0.multipliedReportingOverflow(by: $1) }) { return r }
        if let x = a.numberValue, let y = b.numberValue { return .double(x * y) }
        if case .string = a { throw JinjaFailure(.type, "can't multiply sequence by non-int of type '\(b.typeName)'") }
        throw typeError("*", a, b)
    }

    static func compare(_ op: JinjaCompareOp, _ a: JinjaValue, _ b: JinjaValue, renderer: JinjaRenderer) throws -> Bool {
        switch op {
        case .eq: return a == b
        case .ne: return !(a == b)
        case .in: return try contains(b, a, renderer: renderer)
        case .notIn: return !(try contains(b, a, renderer: renderer))
        case .lt, .le, .gt, .ge:
            if a.isUndefined || b.isUndefined { throw JinjaFailure(.undefined, "undefined value in a comparison") }
            guard let c = JinjaValue.compare(a, b) else {
                throw JinjaFailure(
                    .type, "'\(op.rawValue)' not supported between instances of '\(a.typeName)' and '\(b.typeName)'")
            }
            switch op {
            case .lt: return c < 0
            case .le: return c <= 0
            case .gt: return c > 0
            default: return c >= 0
            }
        }
    }

    /// Python's `item in container`.
    static func contains(_ container: JinjaValue, _ item: JinjaValue, renderer: JinjaRenderer) throws -> Bool {
        switch container {
        case .string(let s), .markup(let s):
            guard let needle = item.stringValue else {
                throw JinjaFailure(.type, "'in <string>' requires string as left operand, not \(item.typeName)")
            }
            return PyText.contains(s, needle)
        case .array(let a), .tuple(let a):
            return a.contains { $0 == item }
        case .object(let o):
            switch item {
            case .array, .object: throw JinjaFailure(.type, "unhashable type: '\(item.typeName)'")
            default: break
            }
            guard let k = item.stringValue else { return false }
            return o[k] != nil
        case .undefined:
            return false
        case .callable(let c):
            switch c.kind {
            case .generator(let items), .view(_, let items): return items.contains { $0 == item }
            default: throw JinjaFailure(.type, "argument of type '\(c.typeName)' is not iterable")
            }
        default:
            throw JinjaFailure(.type, "argument of type '\(container.typeName)' is not iterable")
        }
    }

    /// Python's `format % args` (printf-style): %s %r %d %i %f %e %g %x %o %c and %%, with
    /// flags, width and precision, and %(name)s with a mapping. As in Python, a tuple gives
    /// the arguments, anything else is the one argument, and leftover arguments are an
    /// error unless the argument is a mapping or a list.
    static func printf(_ format: String, _ args: JinjaValue, limit: Int = .max) throws -> String {
        let values: [JinjaValue]
        var mapping: JinjaObject?
        var leftoverAllowed = false
        switch args {
        case .tuple(let t): values = t
        case .object(let o):
            mapping = o
            values = [args]
            leftoverAllowed = true
        case .array, .undefined:
            // Python lets a single argument with __getitem__ go unused.
            values = [args]
            leftoverAllowed = true
        default: values = [args]
        }
        var out = ""
        var chars = Array(format)[...]
        var next = 0
        func take() throws -> JinjaValue {
            guard next < values.count else { throw JinjaFailure(.type, "not enough arguments for format string") }
            next += 1
            return values[next - 1]
        }
        while let c = chars.popFirst() {
            guard c == "%" else {
                out.append(c)
                continue
            }
            var key: String?
            if chars.first == "(" {
                chars.removeFirst()
                var k = ""
                while let d = chars.popFirst(), d != ")" { k.append(d) }
                key = k
            }
            var flags = ""
            while let d = chars.first, "-+ #0".contains(d) {
                flags.append(d)
                chars.removeFirst()
            }
            var width = ""
            while let d = chars.first, d.isASCII, d.isNumber {
                width.append(d)
                chars.removeFirst()
            }
            var precision: Int?
            if chars.first == "." {
                chars.removeFirst()
                var p = ""
                while let d = chars.first, d.isASCII, d.isNumber {
                    p.append(d)
                    chars.removeFirst()
                }
                precision = Int(p) ?? 0
            }
            // A width or precision beyond what one value may hold is refused before padding.
            if (Int(width) ?? (width.isEmpty ? 0 : .max)) > limit || (precision ?? 0) > limit {
                throw JinjaFailure(.limit(.valueBytes), "a format width or precision of \(width.isEmpty ? String(precision ?? 0) : width) is larger than the \(JinjaBudget.describe(bytes: limit)) one value may take")
            }

            guard let conv = chars.popFirst() else { throw JinjaFailure(.type, "incomplete format") }
            if conv == "%" {
                out += "%"
                continue
            }
            let v: JinjaValue
            if let key {
                guard let m = mapping else { throw JinjaFailure(.type, "format requires a mapping") }
                guard let x = m[key] else { throw JinjaFailure(.type, "KeyError: '\(key)'") }
                v = x
            } else {
                v = try take()
            }
            var body: String
            switch conv {
            case "s", "r", "a":
                body = conv == "s" ? v.pythonString : v.pythonRepr
                if let precision { body = String(body.unicodeScalars.prefix(precision).map(Character.init)) }
            case "d", "i", "u":
                guard let x = v.numberValue else { throw JinjaFailure(.type, "%\(conv) format: a real number is required, not \(v.typeName)") }
                body = String(Int(x.rounded(.towardZero)))
            case "x", "X", "o":
                guard let i = v.intValue else { throw JinjaFailure(.type, "%\(conv) format: an integer is required, not \(v.typeName)") }
                body = String(i, radix: conv == "o" ? 8 : 16, uppercase: conv == "X")
            case "f", "F", "e", "E", "g", "G":
                guard let x = v.numberValue else { throw JinjaFailure(.type, "must be real number, not \(v.typeName)") }
                body = String(format: "%.\(precision ?? 6)\(conv)", x)
            case "c":
                if let i = v.intValue, let u = Unicode.Scalar(i) { body = String(Character(u)) } else { body = v.pythonString }
            default:
                throw JinjaFailure(.type, "unsupported format character '\(conv)'")
            }
            if flags.contains("+"), "dioufFeEgG".contains(conv), !body.hasPrefix("-") { body = "+" + body }
            let w = Int(width) ?? 0
            let n = body.unicodeScalars.count
            if w > n {
                if flags.contains("-") {
                    body += String(repeating: " ", count: w - n)
                } else if flags.contains("0") && "dioufFeEgGxX".contains(conv) {
                    let sign = body.hasPrefix("-") || body.hasPrefix("+") ? String(body.removeFirst()) : ""
                    body = sign + String(repeating: "0", count: w - n) + body
                } else {
                    body = String(repeating: " ", count: w - n) + body
                }
            }
            out += body
            if out.utf8.count > limit {
                throw JinjaFailure(.limit(.valueBytes), "a formatted string grew past the \(JinjaBudget.describe(bytes: limit)) one value may take")
            }
        }
        if next < values.count && !leftoverAllowed && mapping == nil {
            throw JinjaFailure(.type, "not all arguments converted during string formatting")
        }
        return out
    }
}
