import Foundation
import Synchronization

/// A serial executor on one dedicated thread: the scheduler actor runs there, so its
/// forward passes (milliseconds of blocking compute) never occupy the cooperative pool
/// that serves HTTP requests and metrics.
final class EngineThread: SerialExecutor, @unchecked Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let wake = DispatchSemaphore(value: 0)
    private var thread: Thread?

    init(name: String) {
        let t = Thread { [unowned self] in self.loop() }
        t.name = name
        t.stackSize = 8 << 20
        thread = t
        t.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        jobs.withLock { $0.append(unowned) }
        wake.signal()
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor { UnownedSerialExecutor(ordinary: self) }

    private func loop() {
        while true {
            wake.wait()
            let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            job?.runSynchronously(on: asUnownedSerialExecutor())
        }
    }
}
