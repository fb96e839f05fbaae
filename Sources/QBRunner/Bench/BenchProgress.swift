import Foundation

/// What a running benchmark reports as it goes, for a progress bar or log lines.
public enum BenchProgress: Sendable {
    /// The model and tokenizer are open.
    case loaded(model: String, seconds: Double)
    /// A case begins; `runs` counts warmups, measured repetitions and check runs.
    case caseStarted(index: Int, total: Int, id: String, runs: Int)
    /// One run of the current case finished.
    case runFinished(index: Int, run: Int, runs: Int)
    case caseFinished(index: Int, total: Int, result: CaseResult)
}

/// Renders `BenchProgress` on standard error: a redrawn one-line bar when the output is a
/// terminal, plain lines otherwise (CI logs, pipes), nothing when quiet.
public final class ProgressPrinter: @unchecked Sendable {
    public enum Style: Sendable { case bar, lines, quiet }

    private let lock = NSLock()
    private let style: Style
    private var caseLabel = ""
    private let width = 24

    public init(style: Style) { self.style = style }

    /// A bar when both standard output and standard error are terminals (the bar is drawn
    /// on standard error with carriage returns), lines otherwise.
    public static func automatic() -> ProgressPrinter {
        ProgressPrinter(style: isatty(STDOUT_FILENO) == 1 && isatty(STDERR_FILENO) == 1 ? .bar : .lines)
    }

    public func handle(_ event: BenchProgress) {
        lock.withLock {
            switch (style, event) {
            case (.quiet, _):
                return
            case (_, .loaded(let model, let seconds)):
                write(String(format: "loaded %@ in %.3f s\n", model, seconds))
            case (.bar, .caseStarted(let i, let total, let id, let runs)):
                caseLabel = "[\(i + 1)/\(total)] \(id)"
                draw(0, runs)
            case (.bar, .runFinished(_, let run, let runs)):
                draw(run, runs)
            case (.lines, .caseStarted(let i, let total, let id, _)):
                write("[\(i + 1)/\(total)] \(id) ...\n")
            case (.lines, .runFinished):
                return
            case (_, .caseFinished(let i, let total, let r)):
                let line = "[\(i + 1)/\(total)] \(r.id): \(Self.summary(r))"
                write(style == .bar ? "\r\u{1B}[2K" + line + "\n" : line + "\n")
            }
        }
    }

    private func draw(_ done: Int, _ total: Int) {
        let filled = total > 0 ? min(width, done * width / total) : 0
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        write("\r\u{1B}[2K\(caseLabel) [\(bar)] \(done)/\(total)")
    }

    private func write(_ s: String) { FileHandle.standardError.write(Data(s.utf8)) }

    /// One line about a finished case: status, the headline metric, failed checks.
    public static func summary(_ r: CaseResult) -> String {
        var parts = [r.status.rawValue]
        if r.status == .skipped, let note = r.notes.first { parts.append(note) }
        if let m = r.metrics[Metric.tokensPerSecond.rawValue] {
            parts.append(String(format: "%@ %.2f ± %.2f t/s", r.test ?? "", m.mean, m.standardDeviation))
        }
        if let m = r.metrics[Metric.decodeTokensPerSecond.rawValue] { parts.append(String(format: "decode %.1f t/s", m.median)) }
        if let m = r.metrics[Metric.timeToFirstToken.rawValue] { parts.append(String(format: "TTFT %.2f ms", m.median * 1e3)) }
        if let m = r.metrics[Metric.cancelLatency.rawValue] { parts.append(String(format: "cancel latency %.1f µs", m.median * 1e6)) }
        let failed = r.checks.filter { !$0.passed }.map(\.name)
        if !failed.isEmpty { parts.append("FAILED: \(failed.joined(separator: ", "))") }
        return parts.joined(separator: ", ")
    }
}
