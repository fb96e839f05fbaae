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
                if flag.isSet { _exit(130) }
                flag.set()
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
