import Foundation

/// A value computed once per key and shared by the tests of one process (XCTest runs them
/// on several threads, hence the lock). A failure is kept too, so an expensive setup that
/// failed (an oracle script, a model file) is not paid for again by every test that needs it.
public final class Memo<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Key: Result<Value, any Error>] = [:]

    public init() {}

    /// The value for `key`, made by `make` on the first call (later calls wait for it).
    public func value(_ key: Key, _ make: () throws -> Value) throws -> Value {
        try lock.withLock {
            if let r = values[key] { return try r.get() }
            let r = Result<Value, any Error> { try make() }
            values[key] = r
            return try r.get()
        }
    }
}
