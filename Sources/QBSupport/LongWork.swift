#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// What long synchronous work (writing a model, converting one) shares with the command
/// that started it: progress in bytes, the request to stop, and the temporary files and
/// folders to remove when it stops.
///
/// Writers report each piece they finish with `advance`, which also throws `WorkInterrupted`
/// once `interrupt()` was called (SIGINT or SIGTERM), so the work unwinds through its
/// `defer`s and `AtomicWriter` removes its temporary file. Every temporary path is
/// registered while it exists, so a command that cannot wait for the unwinding
/// (a second signal) removes them all before it exits.
public enum LongWork {
    /// A progress event: a task of `total` bytes began, or `done` of them are finished.
    public enum Event: Sendable {
        case began(label: String, total: Int)
        case advanced(done: Int, total: Int)
        case ended
    }

    private final class State: @unchecked Sendable {
        let lock = NSLock()
        var interrupted = false
        var temporaries: [Int: String] = [:]
        var nextToken = 0
        var observer: (@Sendable (Event) -> Void)?
        var total = 0
        var done = 0
    }

    private static let state = State()

    /// Sends every progress event to `observer` (nil stops).
    public static func observe(_ observer: (@Sendable (Event) -> Void)?) {
        state.lock.withLock { state.observer = observer }
    }

    /// A task of `total` bytes (or other units) begins.
    public static func begin(_ label: String, total: Int) {
        let observer = state.lock.withLock { () -> (@Sendable (Event) -> Void)? in
            state.total = total
            state.done = 0
            return state.observer
        }
        observer?(.began(label: label, total: total))
    }

    /// `count` more units of the current task are done. Throws `WorkInterrupted` once
    /// `interrupt()` was called.
    public static func advance(_ count: Int) throws {
        let (observer, done, total, stop) = state.lock.withLock { () -> ((@Sendable (Event) -> Void)?, Int, Int, Bool) in
            state.done += count
            return (state.observer, state.done, state.total, state.interrupted)
        }
        if stop { throw WorkInterrupted() }
        observer?(.advanced(done: done, total: total))
    }

    /// The current task ended.
    public static func end() {
        let observer = state.lock.withLock { state.observer }
        observer?(.ended)
    }

    /// Throws `WorkInterrupted` once `interrupt()` was called.
    public static func checkpoint() throws {
        if isInterrupted { throw WorkInterrupted() }
    }

    /// Asks the work to stop at its next `advance` or `checkpoint`.
    public static func interrupt() { state.lock.withLock { state.interrupted = true } }

    public static var isInterrupted: Bool { state.lock.withLock { state.interrupted } }

    /// The name a user knows a file by: `model.safetensors` for the writers' hidden
    /// temporary `.model.safetensors.tmp-PID-N`.
    public static func displayName(_ path: String) -> String {
        let name = URL(fileURLWithPath: path).lastPathComponent
        guard name.hasPrefix("."), let r = name.range(of: ".tmp-") else { return name }
        return String(name[name.index(after: name.startIndex)..<r.lowerBound])
    }

    /// Records a temporary file or folder until `unregisterTemporary` (returns its token).
    public static func registerTemporary(_ path: String) -> Int {
        state.lock.withLock {
            state.nextToken += 1
            state.temporaries[state.nextToken] = path
            return state.nextToken
        }
    }

    public static func unregisterTemporary(_ token: Int) {
        _ = state.lock.withLock { state.temporaries.removeValue(forKey: token) }
    }

    /// The temporary paths registered now.
    public static var temporaries: [String] { state.lock.withLock { Array(state.temporaries.values) } }

    /// Removes every registered temporary path (files and whole folders).
    public static func removeTemporaries() {
        let paths = state.lock.withLock { () -> [String] in
            let p = Array(state.temporaries.values)
            state.temporaries.removeAll()
            return p
        }
        for p in paths { try? FileManager.default.removeItem(atPath: p) }
    }
}

/// Long work stopped by `LongWork.interrupt()`; what it wrote has been removed.
public struct WorkInterrupted: Error, CustomStringConvertible, Sendable {
    public init() {}
    public var description: String { "interrupted; nothing was written" }
}
