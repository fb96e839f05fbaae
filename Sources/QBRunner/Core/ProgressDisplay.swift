import Foundation

/// Progress on standard error: a one-line bar redrawn in place on a terminal, plain lines
/// for logs and pipes, or nothing.
///
/// Standard error keeps standard output clean for results (JSON, Markdown, the chat
/// itself). The bench reports its cases through it (`show(_: BenchProgress)`) and the chat
/// its loading steps (`show(_: ChatLoadProgress)`), so both look alike.
public final class ProgressDisplay: @unchecked Sendable {
    /// Where the output goes decides the style (see `automatic()`).
    public enum Style: Sendable {
        /// A bar redrawn in place with carriage returns, and lines written over it.
        case bar
        /// Lines only; bar updates are dropped.
        case lines
        /// Nothing at all.
        case quiet
    }

    /// How it shows progress, fixed for its life.
    public let style: Style
    // Events can come from any thread (the bench's cases run on the concurrency pool).
    private let lock = NSLock()
    private var barShown = false
    private var barPrefix = ""
    private var barSuffix: String?
    private let width = 24

    /// A display in `style`; nothing is written until the first event.
    public init(style: Style) { self.style = style }

    /// A bar when both standard output and standard error are terminals, lines
    /// otherwise: output piped to a file keeps the bar's escape codes out of the log.
    public static func automatic() -> ProgressDisplay {
        ProgressDisplay(style: isatty(STDOUT_FILENO) == 1 && isatty(STDERR_FILENO) == 1 ? .bar : .lines)
    }

    /// Draws `prefix [####....] done/total suffix` over the current line (bar style only).
    public func bar(_ prefix: String, done: Int, of total: Int, suffix: String? = nil) {
        lock.withLock {
            barPrefix = prefix
            barSuffix = suffix
            draw(done, total)
        }
    }

    /// Redraws the bar with the last `bar` call's prefix and suffix.
    public func advanceBar(done: Int, of total: Int) {
        lock.withLock { draw(done, total) }
    }

    private func draw(_ done: Int, _ total: Int) {
        guard style == .bar else { return }
        let filled = total > 0 ? min(width, max(0, done) * width / total) : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        write("\r\u{1B}[2K\(barPrefix) [\(bar)] \(done)/\(total)" + (barSuffix.map { " " + $0 } ?? ""))
        barShown = true
    }

    /// Writes `text` as a line of its own, replacing the bar if one is drawn (the next
    /// `bar` call draws it again below).
    public func line(_ text: String) {
        lock.withLock {
            guard style != .quiet else { return }
            write((barShown ? "\r\u{1B}[2K" : "") + text + "\n")
            barShown = false
        }
    }

    /// Erases the bar, leaving the cursor at the start of its line.
    public func clear() {
        lock.withLock {
            guard barShown else { return }
            write("\r\u{1B}[2K")
            barShown = false
        }
    }

    private func write(_ s: String) { FileHandle.standardError.write(Data(s.utf8)) }
}
