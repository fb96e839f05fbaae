#if canImport(Glibc)
import Glibc
#endif

/// An allocation the machine (or `ulimit -v`, or a cgroup) refused: what it was for and how
/// large. Large buffers (weights, the KV cache, scratch) are allocated through a failing
/// path that ends here, so running out of memory is one line and exit status 3 within
/// moments, instead of the runtime's "Fatal error: failed to allocate" and a backtrace.
public struct OutOfMemory: Error, CustomStringConvertible, Sendable {
    public let what: String
    public let bytes: Int

    public init(what: String, bytes: Int) {
        self.what = what
        self.bytes = bytes
    }

    public var description: String {
        var limit = rlimit()
        let cap = getrlimit(__rlimit_resource_t(RLIMIT_AS.rawValue), &limit) == 0 && limit.rlim_cur != rlim_t.max
            ? " under a memory limit of \(Self.size(Int(clamping: limit.rlim_cur))) (ulimit -v)" : ""
        return "out of memory: cannot allocate \(Self.size(bytes)) for \(what)\(cap)"
    }

    /// The exit status of a process stopped by `stop()`.
    public static let exitStatus: Int32 = 3

    /// Prints `error: <description>` on standard error and ends the process: the failing
    /// path of allocations made where no caller can handle an error.
    public func stop() -> Never {
        let line = "error: \(description)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        _exit(Self.exitStatus)
    }

    static func size(_ bytes: Int) -> String {
        let mib = Double(bytes) / 1_048_576
        return mib >= 1 ? "\(Int(mib.rounded())) MiB" : "\(bytes) bytes"
    }

    /// `bytes` aligned to `alignment` (a power of two, at least the pointer size), or
    /// `stop()` naming `what`.
    public static func allocate(bytes: Int, alignment: Int, for what: @autoclosure () -> String) -> UnsafeMutableRawPointer {
        var p: UnsafeMutableRawPointer?
        if posix_memalign(&p, max(alignment, MemoryLayout<Int>.size), max(bytes, 1)) != 0 || p == nil {
            OutOfMemory(what: what(), bytes: bytes).stop()
        }
        return p!
    }

    /// The last resort for allocations inside the runtime, OpenBLAS or the allocator:
    /// SIGABRT (which the Swift runtime raises after "Fatal error: failed to allocate")
    /// prints one line instead of a backtrace and exits with status 134.
    public static func installAbortHandler() {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in
            let line = "error: stopped (SIGABRT): out of memory or an internal error, named on the line above\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
            _exit(134)
        }
        sigemptyset(&action.sa_mask)
        sigaction(SIGABRT, &action, nil)
    }
}
