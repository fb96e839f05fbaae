import Foundation
import QBSupport

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

    // Long work (`LongWork` events): its label, start and the last plain line's time.
    private var workLabel = ""
    private var workStart = Date()
    private var workLastLine = Date.distantPast
    private var workLastDraw = Date.distantPast

    /// Seconds between plain progress lines of long work (lines style).
    public var lineInterval: Double = 2
    /// Long work smaller than this is not shown (it ends before a bar would be read).
    public var workMinimumBytes = 64 << 20
    private var workShown = false

    /// Shows long work's progress: a bar with bytes, rate and time left on a terminal,
    /// a line every `lineInterval` seconds (and at the end) otherwise.
    public func show(_ event: LongWork.Event) {
        lock.withLock {
            let now = Date()
            switch event {
            case .began(let label, let total):
                workShown = total >= workMinimumBytes
                guard workShown else { return }
                workLabel = label
                workStart = now
                workLastLine = now
                workLastDraw = .distantPast
                if style == .lines { write("\(label) (\(Self.bytes(total)))...\n") }
                if style == .bar { drawWork(0, total, now) }
            case .advanced(let done, let total):
                guard workShown else { return }
                switch style {
                case .bar:
                    // At most ten redraws a second.
                    if now.timeIntervalSince(workLastDraw) >= 0.1 || done >= total { drawWork(done, total, now) }
                case .lines:
                    if now.timeIntervalSince(workLastLine) >= lineInterval {
                        workLastLine = now
                        write(workText(done, total, now) + "\n")
                    }
                case .quiet: break
                }
            case .ended:
                if style == .bar && barShown {
                    write("\r\u{1B}[2K")
                    barShown = false
                }
            }
        }
    }

    private func drawWork(_ done: Int, _ total: Int, _ now: Date) {
        workLastDraw = now
        let filled = total > 0 ? min(width, max(0, done) * width / total) : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        write("\r\u{1B}[2K\(workLabel) [\(bar)] " + workText(done, total, now, withLabel: false))
        barShown = true
    }

    /// `label: 312 MB of 1.20 GB (26%), 85 MB/s, 10 s left`.
    private func workText(_ done: Int, _ total: Int, _ now: Date, withLabel: Bool = true) -> String {
        let elapsed = now.timeIntervalSince(workStart)
        var parts = ["\(Self.bytes(done)) of \(Self.bytes(total))" + (total > 0 ? " (\(done * 100 / total)%)" : "")]
        if elapsed > 0.2 && done > 0 {
            let rate = Double(done) / elapsed
            parts.append("\(Self.bytes(Int(rate)))/s")
            if total > done { parts.append(String(format: "%.0f s left", Double(total - done) / rate)) }
        }
        return (withLabel ? workLabel + ": " : "") + parts.joined(separator: ", ")
    }

    /// Bytes in B, KB, MB or GB (powers of 1000).
    static func bytes(_ n: Int) -> String {
        let d = Double(n)
        if d >= 1e9 { return String(format: "%.2f GB", d / 1e9) }
        if d >= 1e6 { return String(format: "%.0f MB", d / 1e6) }
        if d >= 1e3 { return String(format: "%.0f KB", d / 1e3) }
        return "\(n) B"
    }
}
