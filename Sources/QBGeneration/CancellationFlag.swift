import Foundation

/// A flag set from any thread and polled from the generation loop, which runs
/// synchronously inside the session's actor and so cannot see actor state change.
final class CancellationFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    var isSet: Bool { lock.withLock { value } }

    func set() { lock.withLock { value = true } }
}
