import Foundation

/// A flag set from any thread and polled by long-running synchronous work: the generation
/// loop (which runs inside the session's actor and so cannot see actor state change) and
/// the benchmark runner (set by the signal handler's queue on SIGINT/SIGTERM).
public final class CancellationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    public init() {}

    public var isSet: Bool { lock.withLock { value } }

    public func set() { lock.withLock { value = true } }
}
