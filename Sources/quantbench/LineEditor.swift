#if canImport(Glibc)
import Glibc
#endif
import CLibEdit
import Foundation
import Synchronization

/// The chat's input line on a terminal, through libedit's readline interface: arrow keys
/// and the usual Emacs keys edit the line, up and down browse the lines typed before in
/// this session. Only for a terminal on both sides (libedit draws on standard output);
/// piped input keeps the plain line reader.
///
/// libedit keeps one global state, so there is one editor per process, and every call
/// into it is made under one lock.
final class LineEditor: Sendable {
    static let shared = LineEditor()

    private let lock = Mutex(false)

    /// Ctrl-C handled while a line is being read: a read libedit ends because of it is
    /// read again, not taken for the end of input.
    private let interrupts = Atomic<Int>(0)

    private init() {}

    /// Counts a Ctrl-C the chat handled while no reply was running.
    func noteInterrupt() { interrupts.add(1, ordering: .relaxed) }

    /// The next line, edited, without its newline; nil at end of input (Ctrl-D on an
    /// empty line). Non-blank lines go into the history.
    func read(prompt: String) -> String? {
        lock.withLock { initialized in
            if !initialized {
                // Multibyte (UTF-8) characters are edited as characters only under a UTF-8
                // LC_CTYPE; a bare C locale would show them as octal escapes.
                if let current = setlocale(LC_CTYPE, ""), ["C", "POSIX"].contains(String(cString: current)) {
                    _ = setlocale(LC_CTYPE, "C.UTF-8")
                }
                // The chat's own Ctrl-C handling (stop the reply, or the idle hint) stays in
                // charge: libedit must not install signal handlers of its own.
                qb_libedit_keep_signals()
                using_history()
                stifle_history(1000)
                initialized = true
            }
            while true {
                let before = interrupts.load(ordering: .relaxed)
                errno = 0
                guard let raw = readline(prompt) else {
                    // A read cut short by Ctrl-C (EINTR, or the handler counted it) is not
                    // the end of input.
                    if errno == EINTR || interrupts.load(ordering: .relaxed) != before { continue }
                    return nil
                }
                defer { free(raw) }
                let line = String(cString: raw)
                if !line.trimmingCharacters(in: .whitespaces).isEmpty { add_history(raw) }
                return line
            }
        }
    }
}
