import Foundation

/// jinja2's tests (`value is defined`, `value is string`, ...). Python's type rules apply:
/// a bool is also a number, strings and dicts are sequences, undefined is iterable.
extension JinjaRenderer {
    func applyTest(_ t: JinjaTest, _ v: JinjaValue, _ args: [JinjaValue], _ scope: JinjaScope?) throws -> Bool {
        func arg(_ i: Int = 0) throws -> JinjaValue {
            guard i < args.count else { throw JinjaFailure(.type, "test '\(t.rawValue)' needs an argument") }
            return args[i]
        }
        func ordered(_ op: JinjaCompareOp) throws -> Bool {
            try JinjaOperators.compare(op, v, try arg(), renderer: self)
        }
        switch t {
        case .defined: return !v.isUndefined
        case .undefined: return v.isUndefined
        case .none: return v.isNone
        case .boolean:
            if case .bool = v { return true }
            return false
        case .true:
            if case .bool(true) = v { return true }
            return false
        case .false:
            if case .bool(false) = v { return true }
            return false
        case .integer:
            if case .int = v { return true }
            return false
        case .float:
            if case .double = v { return true }
            return false
        case .number:
            switch v {
            case .int, .double, .bool: return true
            default: return false
            }
        case .string: return v.stringValue != nil
        case .mapping: return v.objectValue != nil
        case .sequence:
            switch v {
            case .string, .markup, .array, .tuple, .object, .undefined: return true
            default: return false
            }
        case .iterable:
            switch v {
            case .string, .markup, .array, .tuple, .object, .undefined: return true
            case .callable(let c):
                switch c.kind {
                case .generator, .view: return true
                default: break
                }
                return false
            default: return false
            }
        case .callable:
            // jinja2's Undefined has a __call__ (that raises), so Python calls it callable.
            if case .undefined = v { return true }
            guard case .callable(let c) = v else { return false }
            switch c.kind {
            case .macro, .builtin, .method, .joiner: return true
            case .loop(let s): return loops[s.id].node.recursive
            case .namespace, .cycler, .generator, .view: return false
            }
        case .escaped: return v.isMarkup
        case .odd, .even:
            // Python's `value % 2 == 1` / `== 0`, which also takes floats.
            return try JinjaOperators.binary(.modulo, v, .int(2)) == .int(t == .odd ? 1 : 0)
        case .divisibleby:
            // Python's `value % num == 0`, floats included.
            return try JinjaOperators.binary(.modulo, v, try arg()) == .int(0)
        case .eq, .equalto, .symbolEq: return v == (try arg())
        case .ne, .symbolNe: return !(v == (try arg()))
        case .lt, .lessthan, .symbolLt: return try ordered(.lt)
        case .le, .symbolLe: return try ordered(.le)
        case .gt, .greaterthan, .symbolGt: return try ordered(.gt)
        case .ge, .symbolGe: return try ordered(.ge)
        case .in: return try JinjaOperators.contains(try arg(), v, renderer: self)
        case .sameas:
            // Python's `is`: identity, which for the immutable values templates compare
            // (None, True, False, small ints, interned strings) is equality of type and value.
            let other = try arg()
            switch (v, other) {
            case (.none, .none), (.undefined, .undefined): return true
            case (.bool(let a), .bool(let b)): return a == b
            case (.int(let a), .int(let b)): return a == b
            default: return false
            }
        case .lower:
            return PyText.isLower(v.pythonString)
        case .upper:
            return PyText.isUpper(v.pythonString)
        case .filter:
            return JinjaFilter(rawValue: v.pythonString) != nil
        case .test:
            return JinjaTest(rawValue: v.pythonString) != nil
        }
    }
}
