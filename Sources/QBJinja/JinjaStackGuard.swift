import Foundation

/// Keeps deeply nested templates from overflowing the thread's stack. Recursion in the
/// parser and renderer (nested expressions, macro recursion, recursive loops) checks how
/// much stack it has used since it started and fails with an error beyond a budget that
/// fits the threads templates render on (8 MB main and dispatch threads; debug builds use
/// several times more stack per level than release builds).
struct JinjaStackGuard {
    /// Bytes of stack one parse or render may use.
    static let budget: UInt = 1 << 20
    private let entry: UInt

    init() { entry = Self.currentAddress() }

    @inline(never)
    static func currentAddress() -> UInt {
        var marker: UInt8 = 0
        return withUnsafeMutablePointer(to: &marker) { UInt(bitPattern: $0) }
    }

    /// Whether the stack has grown more than the budget (stacks grow downwards on every
    /// platform Swift runs on).
    var exceeded: Bool {
        let now = Self.currentAddress()
        return entry > now && entry - now > Self.budget
    }
}

extension JinjaValue {
    /// Whether lists and dicts nest more than `limit` levels deep. Values that deep can
    /// only be built on purpose (`set ns.x = [ns.x]` in a loop); refusing them keeps
    /// printing and freeing them from recursing without bound.
    func nestsDeeperThan(_ limit: Int) -> Bool {
        guard limit >= 0 else { return true }
        switch self {
        case .array(let a), .tuple(let a): return a.contains { $0.nestsDeeperThan(limit - 1) }
        case .object(let o): return o.values.contains { $0.nestsDeeperThan(limit - 1) }
        case .callable(let c):
            switch c.kind {
            case .generator(let items), .view(_, let items): return items.contains { $0.nestsDeeperThan(limit - 1) }
            default: break
            }
            return false
        default: return false
        }
    }
}
