import Foundation
@testable import QBRunner

extension BenchRunner {
    /// `run` from a synchronous test: the test's thread waits while the run goes on the
    /// concurrency pool. The command line is async all the way and has no such bridge.
    func runBlocking(_ suite: Suite) throws -> BenchResult {
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let runner = self
        Task {
            do { outcome.set(.success(try await runner.run(suite))) } catch { outcome.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }
}

/// The run's result, handed from the task to the waiting thread.
private final class Outcome: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Result<BenchResult, any Error> = .failure(CancellationError())

    func set(_ v: Result<BenchResult, any Error>) { lock.withLock { value = v } }
    func get() throws -> BenchResult { try lock.withLock { value }.get() }
}
