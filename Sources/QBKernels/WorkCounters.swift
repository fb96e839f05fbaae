#if canImport(Glibc)
import Glibc
#endif
import CQBKernels
import Foundation

/// Retired instructions and CPU cycles of every thread of this process (user space), from
/// the kernel's hardware counters (`perf_event_open`, `qb_perf.c`). They count the work an
/// operation does, which barely moves when a shared machine is busy, where wall time
/// swings by tens of percent.
///
/// Counters are opened per thread (`/proc/self/task`) when `open()` is called, so open
/// them after the worker pool exists. Where the kernel refuses (these CI machines answer
/// ENOENT: the PMU is not exposed to the guest) `open()` returns `.unavailable` with the
/// reason, and callers record that instead of the figures.
public final class WorkCounters: @unchecked Sendable {
    public struct Reading: Sendable, Equatable {
        public var instructions: UInt64
        public var cycles: UInt64
        public init(instructions: UInt64, cycles: UInt64) {
            self.instructions = instructions
            self.cycles = cycles
        }
    }

    public enum Availability: Sendable, Equatable {
        case available(WorkCounters)
        case unavailable(reason: String)

        public static func == (a: Availability, b: Availability) -> Bool {
            switch (a, b) {
            case (.available(let x), .available(let y)): return x === y
            case (.unavailable(let x), .unavailable(let y)): return x == y
            default: return false
            }
        }
    }

    /// (instructions fd, cycles fd) per thread; immutable after init.
    private let fds: [(Int32, Int32)]

    private init(fds: [(Int32, Int32)]) { self.fds = fds }

    deinit {
        for (a, b) in fds {
            qb_perf_close(a)
            qb_perf_close(b)
        }
    }

    /// Test seam: `QB_WORK_COUNTERS=off` reports them unavailable without asking the kernel,
    /// so the fallback is exercised on machines that have counters too.
    public static func open(environment: [String: String] = ProcessInfo.processInfo.environment) -> Availability {
        if environment["QB_WORK_COUNTERS"] == "off" { return .unavailable(reason: "disabled by QB_WORK_COUNTERS=off") }
        let tids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).compactMap { Int32($0) }
        guard !tids.isEmpty else { return .unavailable(reason: "cannot list /proc/self/task") }
        var fds: [(Int32, Int32)] = []
        func closeAll() { for (a, b) in fds { qb_perf_close(a); qb_perf_close(b) } }
        for tid in tids.sorted() {
            let i = qb_perf_open(tid, 0)
            if i < 0 { closeAll(); return .unavailable(reason: "perf_event_open: \(String(cString: strerror(-i))) (errno \(-i))") }
            let c = qb_perf_open(tid, 1)
            if c < 0 {
                qb_perf_close(i)
                closeAll()
                return .unavailable(reason: "perf_event_open: \(String(cString: strerror(-c))) (errno \(-c))")
            }
            fds.append((i, c))
        }
        return .available(WorkCounters(fds: fds))
    }

    /// The totals so far, summed over the threads; nil when a read fails.
    public func read() -> Reading? {
        var total = Reading(instructions: 0, cycles: 0)
        for (i, c) in fds {
            var vi: UInt64 = 0, vc: UInt64 = 0
            guard qb_perf_read(i, &vi) == 0, qb_perf_read(c, &vc) == 0 else { return nil }
            total.instructions &+= vi
            total.cycles &+= vc
        }
        return total
    }

    /// CPU time of every thread of this process so far (CLOCK_PROCESS_CPUTIME_ID), seconds.
    public static func processCPUSeconds() -> Double {
        var ts = timespec()
        guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0 else { return .nan }
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }

    /// CPU time of the calling thread so far (CLOCK_THREAD_CPUTIME_ID), seconds.
    public static func threadCPUSeconds() -> Double {
        var ts = timespec()
        guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 else { return .nan }
        return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
    }
}
