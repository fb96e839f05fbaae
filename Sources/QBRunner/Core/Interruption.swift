import Foundation
import QBSupport

/// Set when the user interrupts a run (SIGINT, SIGTERM): the runner stops at the next
/// step it can (cancelling a request in flight), throws `BenchInterrupted`, and nothing
/// is written. The runner's name for the one flag type, which the command line and the
/// runner's callers use.
public typealias InterruptFlag = CancellationFlag

/// A run stopped by `InterruptFlag`; the command exits without writing results.
public struct BenchInterrupted: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "interrupted; no results were written" }
}

extension InterruptFlag {
    /// Routes SIGINT and SIGTERM to this flag for as long as the returned object lives: the
    /// first signal asks the run to stop cleanly (nothing is written), a second one exits
    /// at once with status 130. Writing stays atomic either way.
    public func handleSignals(message: String = "interrupting: finishing the current step; nothing will be written (again to quit now)\n") -> SignalHandlers {
        SignalHandlers(flag: self, message: message)
    }
}

/// Dispatch sources for SIGINT and SIGTERM (see `InterruptFlag.handleSignals`).
public final class SignalHandlers: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []

    init(flag: InterruptFlag, message: String) {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                if flag.isSet {
                    LongWork.removeTemporaries()
                    _exit(130)
                }
                flag.set()
                // Loading and converting a model stop too (they throw `WorkInterrupted`).
                LongWork.interrupt()
                FileHandle.standardError.write(Data(message.utf8))
            }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for s in sources { s.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

/// SIGINT and SIGTERM for commands whose long work is synchronous (make-model, quantize,
/// eval): the first signal asks the work to stop (`LongWork.interrupt()`; writers throw
/// `WorkInterrupted` at their next piece and remove what they wrote), and if it has not
/// unwound within `graceSeconds`, or at a second signal, every registered temporary path
/// is removed and the process exits with 130 at once. While it lives, `LongWork`'s
/// progress goes to `display`.
public final class WorkSignalHandlers: @unchecked Sendable {
    private var sources: [any DispatchSourceSignal] = []

    public init(display: ProgressDisplay? = nil, graceSeconds: Double = 5) {
        if let display { LongWork.observe { display.show($0) } }
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                if LongWork.isInterrupted { Self.exitNow() }
                LongWork.interrupt()
                display?.line("interrupting: removing what was written (again to quit now)")
                DispatchQueue.global().asyncAfter(deadline: .now() + graceSeconds) { Self.exitNow() }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Removes every registered temporary path and exits with 130.
    public static func exitNow() -> Never {
        LongWork.removeTemporaries()
        FileHandle.standardError.write(Data("\(WorkInterrupted())\n".utf8))
        _exit(130)
    }

    deinit {
        LongWork.observe(nil)
        for s in sources { s.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}
