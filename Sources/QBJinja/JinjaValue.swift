import Foundation

/// A value a Jinja template sees or computes, with Python's semantics (chat templates are
/// written against Python's jinja2, so equality, truthiness and printing follow Python).
///
/// The data cases mirror JSON plus Jinja's `undefined`; `markup` is a string marked safe
/// (the `safe` and `escape` filters make one: adding a plain string to it HTML-escapes the
/// plain string, as jinja2's `Markup` does). `callable` holds macros, namespaces, bound
/// methods and built-in functions; those exist only while a template renders.
///
/// `==` is Python's `==`: `1 == 1.0`, `true == 1`, and objects compare without regard to
/// key order.
public enum JinjaValue: Sendable {
    case undefined
    case none
    case bool(Bool)
    case int(Int)
    case double(Double)
    case string(String)
    case markup(String)
    case array([JinjaValue])
    /// A Python tuple (`(a, b)`, the pairs of `items()`): a read-only list that prints
    /// with parentheses and never equals a list.
    case tuple([JinjaValue])
    case object(JinjaObject)
    case callable(JinjaCallable)
}

extension JinjaValue {
    /// Python truthiness: empty strings, lists and dicts, zero, none and undefined are false.
    public var isTruthy: Bool {
        switch self {
        case .undefined, .none: return false
        case .bool(let b): return b
        case .int(let i): return i != 0
        case .double(let d): return d != 0
        case .string(let s), .markup(let s): return !s.isEmpty
        case .array(let a), .tuple(let a): return !a.isEmpty
        case .object(let o): return !o.isEmpty
        case .callable(let c):
            if case .view(_, let items) = c.kind { return !items.isEmpty }
            return true
        }
    }

    /// Case tests and accessors.
    public var isUndefined: Bool { if case .undefined = self { return true } else { return false } }
    public var isNone: Bool { if case .none = self { return true } else { return false } }

    /// The text of a string or markup value.
    public var stringValue: String? {
        switch self {
        case .string(let s), .markup(let s): return s
        default: return nil
        }
    }

    /// The elements of a list or tuple.
    public var arrayValue: [JinjaValue]? {
        switch self {
        case .array(let a), .tuple(let a): return a
        default: return nil
        }
    }
    /// The object of a dict value.
    public var objectValue: JinjaObject? { if case .object(let o) = self { return o } else { return nil } }

    /// Python's `str(value)`, which is what `{{ value }}` prints (undefined prints nothing).
    public var pythonString: String {
        switch self {
        case .undefined: return ""
        case .string(let s), .markup(let s): return s
        default: return pythonRepr
        }
    }

    /// Python's `repr(value)` (how list and dict elements print).
    public var pythonRepr: String {
        switch self {
        case .undefined: return "Undefined"
        case .none: return "None"
        case .bool(let b): return b ? "True" : "False"
        case .int(let i): return String(i)
        case .double(let d): return PyText.floatRepr(d)
        case .string(let s): return PyText.repr(s)
        case .markup(let s): return "Markup(" + PyText.repr(s) + ")"
        case .array(let a):
            var out = "["
            for (i, v) in a.enumerated() {
                if i > 0 { out += ", " }
                out += v.pythonRepr
            }
            return out + "]"
        case .tuple(let a):
            if a.count == 1 { return "(" + a[0].pythonRepr + ",)" }
            return "(" + a.map(\.pythonRepr).joined(separator: ", ") + ")"
        case .object(let o):
            var out = "{"
            for i in 0..<o.count {
                if i > 0 { out += ", " }
                out += PyText.repr(o.keys[i]) + ": " + o.values[i].pythonRepr
            }
            return out + "}"
        case .callable(let c): return c.description
        }
    }

    /// The Python type name, for error messages that read like jinja2's.
    package var typeName: String {
        switch self {
        case .undefined: return "Undefined"
        case .none: return "NoneType"
        case .bool: return "bool"
        case .int: return "int"
        case .double: return "float"
        case .string: return "str"
        case .markup: return "Markup"
        case .array: return "list"
        case .tuple: return "tuple"
        case .object: return "dict"
        case .callable(let c): return c.typeName
        }
    }

    /// A number as a Double (bools count as 0 and 1, as in Python).
    var numberValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }

    /// An integer (bools count, as in Python).
    var intValue: Int? {
        switch self {
        case .int(let i): return i
        case .bool(let b): return b ? 1 : 0
        default: return nil
        }
    }
}

// MARK: - Equality and ordering (Python's)

extension JinjaValue: Equatable {
    public static func == (a: JinjaValue, b: JinjaValue) -> Bool {
        switch (a, b) {
        case (.undefined, .undefined), (.none, .none): return true
        case (.string(let x), .string(let y)), (.markup(let x), .markup(let y)),
            (.string(let x), .markup(let y)), (.markup(let x), .string(let y)):
            // Code-point equality: Swift's == would equate canonically equivalent strings.
            return x.utf8.elementsEqual(y.utf8)
        case (.array(let x), .array(let y)), (.tuple(let x), .tuple(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0 == $1 }
        case (.object(let x), .object(let y)):
            guard x.count == y.count else { return false }
            for (k, v) in x { guard let w = y[k], v == w else { return false } }
            return true
        case (.callable(let x), .callable(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        default:
            if let x = a.numberValue, let y = b.numberValue { return x == y }
            return false
        }
    }

    /// Python's ordering for `<`, `sort` and `max`: numbers with numbers, strings by code
    /// point, lists element by element; nil when Python raises a TypeError.
    static func compare(_ a: JinjaValue, _ b: JinjaValue) -> Int? {
        switch (a, b) {
        case (.int(let x), .int(let y)): return x < y ? -1 : (x > y ? 1 : 0)
        case (.string(let x), .string(let y)), (.markup(let x), .markup(let y)),
            (.string(let x), .markup(let y)), (.markup(let x), .string(let y)):
            return PyText.compare(x, y)
        case (.array(let x), .array(let y)), (.tuple(let x), .tuple(let y)):
            for (u, v) in zip(x, y) where !(u == v) { return compare(u, v) }
            return x.count < y.count ? -1 : (x.count > y.count ? 1 : 0)
        default:
            if let x = a.numberValue, let y = b.numberValue { return x < y ? -1 : (x > y ? 1 : 0) }
            return nil
        }
    }
}

// MARK: - Literals

extension JinjaValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JinjaValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JinjaValue)...) {
        var o = JinjaObject()
        for (k, v) in elements { o[k] = v }
        self = .object(o)
    }
    /// `nil` is Python's None.
    public init(nilLiteral: ()) { self = .none }
}

// MARK: - Ordered object

/// A string-keyed dictionary that keeps insertion order, as Python dicts do: `tojson`,
/// `items()` and `for key in dict` must see keys in the order the JSON had them.
public struct JinjaObject: Sendable, Sequence, ExpressibleByDictionaryLiteral {
    /// Keys in insertion order, and their values at the same positions.
    public private(set) var keys: [String] = []
    public private(set) var values: [JinjaValue] = []
    /// Built once the object is big enough for hashing to beat a scan (message objects
    /// have a handful of keys and are read constantly).
    private var index: [String: Int]?
    private static let indexThreshold = 12

    /// An empty object.
    public init() {}

    public init(dictionaryLiteral elements: (String, JinjaValue)...) {
        for (k, v) in elements { self[k] = v }
    }

    /// An object from key/value pairs in order (a repeated key keeps its first position).
    public init<S: Sequence>(_ pairs: S) where S.Element == (String, JinjaValue) {
        for (k, v) in pairs { self[k] = v }
    }

    /// Number of keys.
    public var count: Int { keys.count }
    public var isEmpty: Bool { keys.isEmpty }

    func position(of key: String) -> Int? {
        if let index { return index[key] }
        let u = key.utf8
        for (i, k) in keys.enumerated() where k.utf8.elementsEqual(u) { return i }
        return nil
    }

    /// Reading gives nil for a missing key; assigning keeps an existing key's position
    /// (as Python does) and assigning nil removes the key.
    public subscript(key: String) -> JinjaValue? {
        get { position(of: key).map { values[$0] } }
        set {
            if let i = position(of: key) {
                if let newValue {
                    values[i] = newValue
                } else {
                    keys.remove(at: i)
                    values.remove(at: i)
                    rebuildIndex()
                }
            } else if let newValue {
                keys.append(key)
                values.append(newValue)
                if index != nil {
                    index?[key] = keys.count - 1
                } else if keys.count > Self.indexThreshold {
                    rebuildIndex()
                }
            }
        }
    }

    private mutating func rebuildIndex() {
        guard keys.count > Self.indexThreshold else {
            index = nil
            return
        }
        var d = [String: Int](minimumCapacity: keys.count)
        for (i, k) in keys.enumerated() { d[k] = i }
        index = d
    }

    public func makeIterator() -> Zip2Sequence<[String], [JinjaValue]>.Iterator {
        zip(keys, values).makeIterator()
    }
}

// MARK: - Callables

/// A function value that exists while a template renders: a macro, a namespace, a bound
/// method such as `message.get`, or a built-in such as `range`. It cannot be made from
/// outside the renderer and means nothing after the render that made it.
public struct JinjaCallable: Sendable, Equatable, CustomStringConvertible {
    indirect enum Kind: Sendable, Equatable {
        case builtin(String)
        case macro(id: Int, name: String)
        /// `namespace()` objects are mutable (`set ns.x = ...`), so the value holds a handle
        /// into the renderer's table instead of the data.
        case namespace(id: Int)
        case method(receiver: JinjaValue, name: String)
        case loop(JinjaLoopState)
        case cycler(id: Int)
        case joiner(id: Int)
        /// What jinja2's map/select/reject/unique/reverse filters return: iterable, always
        /// true, without a length (templates write `|list` to get a list).
        case generator([JinjaValue])
        /// `dict.keys()`, `.values()`, `.items()`: iterable with a length, true when not
        /// empty, not indexable, printed as `dict_items([...])`.
        case view(String, [JinjaValue])
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    public var description: String {
        switch kind {
        case .builtin(let n): return "<built-in function \(n)>"
        case .macro(_, let name): return "<Macro '\(name)'>"
        case .namespace: return "<Namespace>"
        case .method(let r, let n): return "<built-in method \(n) of \(r.typeName) object>"
        case .loop(let l): return "<LoopContext \(l.index0 + 1)/\(l.length)>"
        case .cycler: return "<Cycler>"
        case .joiner: return "<Joiner>"
        case .generator: return "<generator object>"
        case .view(let name, let items): return name + "([" + items.map(\.pythonRepr).joined(separator: ", ") + "])"
        }
    }

    var typeName: String {
        switch kind {
        case .builtin: return "builtin_function_or_method"
        case .macro: return "Macro"
        case .namespace: return "Namespace"
        case .method: return "builtin_function_or_method"
        case .loop: return "LoopContext"
        case .cycler: return "Cycler"
        case .joiner: return "Joiner"
        case .generator: return "generator"
        case .view(let name, _): return name
        }
    }
}

/// What `loop` holds in one iteration of a for loop.
struct JinjaLoopState: Sendable, Equatable {
    var index0: Int
    var length: Int
    var depth0: Int
    var previous: JinjaValue
    var next: JinjaValue
    /// Handle of the loop's entry in the renderer (for `loop(...)` in recursive loops and
    /// `loop.changed`).
    var id: Int
}

extension JinjaObject: Equatable {
    /// Python's dict equality: same keys with equal values, in any order.
    public static func == (a: JinjaObject, b: JinjaObject) -> Bool {
        JinjaValue.object(a) == JinjaValue.object(b)
    }
}
