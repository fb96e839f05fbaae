import Foundation

/// The session's request counter, shared with the nonisolated `cancel()`: requests are
/// numbered as they are submitted, and `cancel()` marks every number handed out so far.
final class RequestLedger: @unchecked Sendable {
    private let lock = NSLock()
    private var submitted: UInt64 = 0
    private var cancelledThrough: UInt64 = 0

    func submit() -> UInt64 {
        lock.withLock {
            submitted += 1
            return submitted
        }
    }

    func cancelAll() { lock.withLock { cancelledThrough = submitted } }

    func isCancelled(_ request: UInt64) -> Bool { lock.withLock { request <= cancelledThrough } }
}
