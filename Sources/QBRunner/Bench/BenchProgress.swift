import Foundation

/// What a running benchmark reports as it goes, for a progress bar or log lines.
public enum BenchProgress: Sendable {
    /// The model and tokenizer are open.
    case loaded(model: String, seconds: Double)
    /// A case begins; `runs` counts warmups, measured repetitions and check runs.
    case caseStarted(index: Int, total: Int, id: String, runs: Int)
    /// One run of the current case finished.
    case runFinished(index: Int, run: Int, runs: Int)
    /// A case ended; `result` is final (status, metrics, checks).
    case caseFinished(index: Int, total: Int, result: CaseResult)
}

extension ProgressDisplay {
    /// Shows a bench event: the running case's bar (bar style) or its start (lines style),
    /// then one summary line per finished case.
    public func show(_ event: BenchProgress) {
        switch event {
        case .loaded(let model, let seconds):
            line(String(format: "loaded %@ in %.3f s", model, seconds))
        case .caseStarted(let i, let total, let id, let runs):
            if style == .bar {
                bar("[\(i + 1)/\(total)] \(id)", done: 0, of: runs)
            } else {
                line("[\(i + 1)/\(total)] \(id) ...")
            }
        case .runFinished(_, let run, let runs):
            advanceBar(done: run, of: runs)
        case .caseFinished(let i, let total, let r):
            line("[\(i + 1)/\(total)] \(r.id): \(Self.summary(r))")
        }
    }

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
