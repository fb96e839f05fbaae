import Foundation

/// What one render of a template may spend. A chat template is code that arrives inside a
/// downloaded model, so every render runs under these limits (see `JinjaTemplate.render`
/// for the rules); the defaults are far above what real chat templates need and low
/// enough that no template holds a command for more than a second or 64 MB.
public struct JinjaLimits: Sendable, Equatable {
    /// Expression evaluations plus loop iterations, across all loops and macro calls, plus
    /// one per 64 bytes of values made (the work of copying them). Real chat templates
    /// spend about 125 per message (3,300 at most on a 26-message conversation), so this
    /// leaves room for conversations of 8,000 messages. A million of the cheapest kind (two
    /// nested `range` loops) took 0.55 s of CPU in a release build on a busy Zen 4, so a
    /// whole `quantbench template` run that hits this limit ends within a second.
    public var operations: Int
    /// Bytes of text one render (or one `{% set %}` / macro / filter block capture) may
    /// produce.
    public var outputBytes: Int
    /// Bytes any single value the template makes (a string, list or dict, counted as if
    /// nothing inside it were shared) may take. Checked before allocating where a size
    /// can be computed first (`'x' * n`, `join`, `replace`, `center`, widths).
    public var valueBytes: Int
    /// Bytes of all values and text the render makes, added up as they are made (freed
    /// temporaries count too): the bound on the render's memory.
    public var createdBytes: Int
    /// Wall time of one render, in seconds: the backstop for work the other limits do not
    /// count. Half a second, so that a command whose template hits it still ends within a
    /// second with the program's own start-up counted (real templates render in well under
    /// a millisecond).
    public var seconds: Double

    public init(
        operations: Int = 1_000_000, outputBytes: Int = 8 << 20, valueBytes: Int = 8 << 20, createdBytes: Int = 32 << 20,
        seconds: Double = 0.5
    ) {
        self.operations = operations
        self.outputBytes = outputBytes
        self.valueBytes = valueBytes
        self.createdBytes = createdBytes
        self.seconds = seconds
    }

    /// The limits every render runs under unless the caller gives others.
    public static let standard = JinjaLimits()
}

/// Which limit of `JinjaLimits` a template ran into.
public enum JinjaLimit: String, Sendable, Equatable, CaseIterable {
    case operations
    case outputBytes = "output size"
    case valueBytes = "value size"
    case createdBytes = "memory"
    case seconds = "time"
}

/// What a render has spent so far. Part of the renderer: one per render.
struct JinjaBudget {
    let limits: JinjaLimits
    private(set) var operations = 0
    private(set) var created = 0
    private let deadline: UInt64
    private var nextClockCheck = 0

    init(limits: JinjaLimits) {
        self.limits = limits
        let nanos = limits.seconds.isFinite && limits.seconds > 0 ? min(limits.seconds, 1e9) * 1e9 : 1e18
        deadline = DispatchTime.now().uptimeNanoseconds &+ UInt64(nanos)
    }

    /// Counts `n` operations; looks at the clock every few thousand.
    @inline(__always)
    mutating func spend(_ n: Int = 1) throws {
        let (sum, overflow) = operations.addingReportingOverflow(max(0, n))
        operations = overflow ? .max : sum
        if operations > limits.operations {
            throw JinjaFailure(.limit(.operations), "the template ran more than \(limits.operations) operations (loop iterations and expression evaluations)")
        }
        if operations >= nextClockCheck {
            nextClockCheck = operations &+ 4096
            if DispatchTime.now().uptimeNanoseconds > deadline {
                throw JinjaFailure(.limit(.seconds), "the template ran longer than \(Self.describe(seconds: limits.seconds))")
            }
        }
    }

    /// Counts a value or text of `bytes` being made (and its copying as work).
    mutating func make(_ bytes: Int) throws {
        if bytes > limits.valueBytes { throw Self.tooBig(bytes, limits) }
        created &+= bytes
        if created > limits.createdBytes {
            throw JinjaFailure(.limit(.createdBytes), "the template made more than \(Self.describe(bytes: limits.createdBytes)) of values and text")
        }
        try spend(bytes >> 6)
    }

    /// Refuses, before it is made, a value of `bytes` (nil: the size overflowed).
    func admit(_ bytes: Int?) throws {
        guard let bytes, bytes <= limits.valueBytes else { throw Self.tooBig(bytes, limits) }
    }

    static func tooBig(_ bytes: Int?, _ limits: JinjaLimits) -> JinjaFailure {
        let size = bytes.map { describe(bytes: $0) } ?? "more than \(Int.max) bytes"
        return JinjaFailure(.limit(.valueBytes), "a value of \(size) is larger than the \(describe(bytes: limits.valueBytes)) one value may take")
    }

    static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MB" }
        if bytes >= 1 << 20 { return String(format: "%.1f MB", Double(bytes) / 1_048_576) }
        return "\(bytes) bytes"
    }

    static func describe(seconds: Double) -> String {
        seconds == 1 ? "1 second" : "\(seconds) seconds"
    }
}

/// Sizes used by the budget. Every value counts 16 bytes plus its text; lists and dicts
/// count their elements as if none were shared (a list of one string repeated a million
/// times weighs a million strings: printing or comparing it costs that much).
extension JinjaValue {
    /// The weight of this value, counted up to a little past `limit` (the walk stops there).
    func weight(limit: Int) -> Int {
        var total = 0
        addWeight(to: &total, limit: limit)
        return total
    }

    private func addWeight(to total: inout Int, limit: Int) {
        if total > limit { return }
        switch self {
        case .string(let s), .markup(let s): total &+= 16 &+ s.utf8.count
        case .array(let a), .tuple(let a): Self.addWeights(a, to: &total, limit: limit)
        case .object(let o):
            total &+= 16
            for i in 0..<o.count {
                total &+= o.keys[i].utf8.count
                o.values[i].addWeight(to: &total, limit: limit)
                if total > limit { return }
            }
        case .callable(let c):
            switch c.kind {
            case .generator(let items), .view(_, let items): Self.addWeights(items, to: &total, limit: limit)
            case .method(let receiver, _): receiver.addWeight(to: &total, limit: limit)
            default: total &+= 16
            }
        default: total &+= 16
        }
    }

    private static func addWeights(_ items: [JinjaValue], to total: inout Int, limit: Int) {
        total &+= 16
        for x in items {
            x.addWeight(to: &total, limit: limit)
            if total > limit { return }
        }
    }

    /// An upper bound on the length of `pythonString` (repr escapes take at most 4 bytes
    /// per byte), counted up to a little past `limit`.
    func printedBound(limit: Int) -> Int {
        switch self {
        case .string(let s), .markup(let s): return s.utf8.count
        case .array, .tuple, .object, .callable:
            let w = weight(limit: limit)
            return w > limit / 4 ? w.multipliedReportingOverflow(by: 4).partialValue : 4 * w
        default: return 32
        }
    }
}

extension JinjaRenderer {
    /// `str(v)` under the budget: composite values are refused before printing when their
    /// text could exceed what one value may take.
    func str(_ v: JinjaValue) throws -> String {
        switch v {
        case .string(let s), .markup(let s): return s
        case .array, .tuple, .object, .callable:
            try budget.admit(v.printedBound(limit: budget.limits.valueBytes))
            let s = v.pythonString
            try budget.make(s.utf8.count)
            return s
        default: return v.pythonString
        }
    }

    /// Appends `s` to a render's output (or a block's capture) within the output limit.
    @inline(__always)
    func emit(_ s: String, to out: inout String) throws {
        let n = s.utf8.count
        if out.utf8.count &+ n > budget.limits.outputBytes {
            throw JinjaFailure(.limit(.outputBytes), "the template's output grew past \(JinjaBudget.describe(bytes: budget.limits.outputBytes))")
        }
        try budget.make(n)
        out += s
    }

    /// Checks a string `count` times `unit` bytes long before it is made.
    func admitRepeat(_ unit: Int, _ count: Int) throws {
        guard count > 0 else { return }
        let (bytes, overflow) = unit.multipliedReportingOverflow(by: count)
        try budget.admit(overflow ? nil : bytes)
    }
}

extension JinjaRenderer {
    /// Refuses, before it is made, the result of `l op r` when it would be too big:
    /// `'x' * n` and `[x] * n` are sized first, `a + b` too.
    func admitBinary(_ op: JinjaBinaryOp, _ l: JinjaValue, _ r: JinjaValue) throws {
        let limit = budget.limits.valueBytes
        switch op {
        case .multiply:
            let (n, sequence): (Int?, JinjaValue) = r.intValue != nil ? (r.intValue, l) : (l.intValue, r)
            guard let n, n > 0 else { return }
            switch sequence {
            case .string(let s), .markup(let s): try admitRepeat(s.utf8.count, n)
            case .array, .tuple: try admitRepeat(max(16, sequence.weight(limit: limit)), n)
            default: return
            }
        case .add:
            switch (l, r) {
            case (.string(let a), _), (.markup(let a), _):
                if let b = r.stringValue { try budget.admit(a.utf8.count &+ b.utf8.count) }
            case (.array, .array), (.tuple, .tuple):
                try budget.admit(l.weight(limit: limit) &+ r.weight(limit: limit))
            default: return
            }
        default: return
        }
    }

    /// Comparing and `in` walk their operands: that is work.
    func spendComparing(_ op: JinjaCompareOp, _ l: JinjaValue, _ r: JinjaValue) throws {
        func size(_ v: JinjaValue) -> Int {
            switch v {
            case .string(let s), .markup(let s): return s.utf8.count >> 6
            case .array, .tuple, .object, .callable: return v.weight(limit: budget.limits.valueBytes) >> 4
            default: return 0
            }
        }
        try budget.spend(min(size(l), size(r)) &+ (op == .in || op == .notIn ? size(r) : 0))
    }
}

extension JinjaRenderer {
    /// Searching `s` for `needle` costs up to their lengths' product: counted as work.
    func spendSearching(_ s: String, _ needle: String?) throws {
        let n = s.utf8.count
        let m = max(1, needle?.utf8.count ?? 1)
        let (work, overflow) = n.multipliedReportingOverflow(by: m)
        try budget.spend(overflow ? Int.max / 2 : work >> 6)
    }

    /// Refuses `s.replace(old, new, count)` before it is made when the result is too big.
    func admitReplace(_ s: String, _ old: String, _ new: String, count: Int) throws {
        let grow = new.utf8.count - old.utf8.count
        guard grow > 0 else { return }
        try spendSearching(s, old)
        var hits: Int
        if old.isEmpty {
            hits = s.unicodeScalars.count + 1
        } else {
            hits = PyText.occurrenceCount(of: Array(old.utf8), in: Array(s.utf8), limit: count < 0 ? Int.max : count)
        }
        if count >= 0 { hits = min(hits, count) }
        let (extra, overflow) = hits.multipliedReportingOverflow(by: grow)
        try budget.admit(overflow ? nil : s.utf8.count.addingReportingOverflow(extra).partialValue)
    }

    /// Refuses `separator.join(parts)` before it is made when the result is too big.
    func admitJoin(_ parts: [String], separator: String) throws {
        let (seps, overflow) = separator.utf8.count.multipliedReportingOverflow(by: max(0, parts.count - 1))
        var total = overflow ? Int.max : seps
        for p in parts {
            total = total.addingReportingOverflow(p.utf8.count).partialValue
            if total > budget.limits.valueBytes || total < 0 { break }
        }
        try budget.admit(total < 0 ? nil : total)
    }

    /// Refuses splitting `s` into pieces whose list would be too big (each piece costs a
    /// string, 16 bytes, besides its text).
    func admitSplit(_ s: String, _ separator: String?) throws {
        try spendSearching(s, separator)
        let pieces: Int
        if let separator, !separator.isEmpty {
            pieces = PyText.occurrenceCount(of: Array(separator.utf8), in: Array(s.utf8)) + 1
        } else {
            var runs = 0, inRun = false
            for c in s.unicodeScalars {
                let space = PyText.isSpace(c) || PyText.isLineBreak(c)
                if !space && !inRun { runs += 1 }
                inRun = !space
            }
            pieces = runs + 1
        }
        try budget.admit(pieces &* 24 &+ s.utf8.count)
    }

    /// An upper bound on `tojson`'s output, refused when too big.
    func admitJSON(_ value: JinjaValue, indent: Int, ensureASCII: Bool) throws {
        let limit = budget.limits.valueBytes
        var total = 0
        func walk(_ v: JinjaValue, _ depth: Int) {
            if total > limit { return }
            // Separators, a newline and the indentation before every element.
            total &+= 4 &+ (indent > 0 ? 1 &+ indent &* depth : 0)
            switch v {
            case .string(let s), .markup(let s): total &+= Self.jsonTextBound(s, ensureASCII: ensureASCII)
            case .array(let a), .tuple(let a): for x in a { walk(x, depth &+ 1) }
            case .object(let o):
                for i in 0..<o.count {
                    total &+= Self.jsonTextBound(o.keys[i], ensureASCII: ensureASCII)
                    walk(o.values[i], depth &+ 1)
                }
            default: total &+= 24
            }
        }
        walk(value, 0)
        try budget.spend(total >> 6)
        try budget.admit(total)
    }

    static func jsonTextBound(_ s: String, ensureASCII: Bool) -> Int {
        var n = 2
        for b in s.utf8 {
            if b < 0x20 { n &+= 6 } else if b == 0x22 || b == 0x5C { n &+= 2 } else if b >= 0x80 && ensureASCII { n &+= 3 } else { n &+= 1 }
        }
        return n
    }
}

extension JinjaRenderer {
    /// HTML-escapes `s` once the result is known to fit (an escape is at most 5 bytes).
    func escaped(_ s: String) throws -> String {
        var extra = 0
        for b in s.utf8 where b == 0x26 || b == 0x3C || b == 0x3E || b == 0x27 || b == 0x22 { extra &+= 4 }
        try budget.admit(s.utf8.count &+ extra)
        return PyText.htmlEscape(s)
    }
}
