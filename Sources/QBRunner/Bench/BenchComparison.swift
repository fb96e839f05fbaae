import Foundation

/// `compare`: each metric of each case present in both results, as the ratio new / base
/// of the medians with a bootstrap confidence interval (`Statistics.medianRatio`).
///
/// A metric is a regression *with confidence* only when the whole interval lies beyond
/// the threshold: for a higher-is-better metric (tokens/s) the interval's upper end is
/// below 1 − threshold; for a lower-is-better one (latency, memory) its lower end is above
/// 1 + threshold. Noise (an interval that reaches back inside the threshold) never gates,
/// and an improvement never gates, so a CI can gate on `compare` without flaking.
public struct BenchComparison: Sendable {
    public enum Verdict: String, Sendable, Codable {
        /// Worse beyond the threshold with confidence: gates.
        case regression
        /// The point estimate is worse than the threshold but the interval reaches back.
        case possibleRegression = "possible regression"
        case improvement
        /// Within the interval of no change.
        case unchanged
    }

    public struct Row: Sendable, Codable, Equatable {
        public var caseID: String
        public var metric: String
        public var base: Double
        public var new: Double
        public var interval: Statistics.RatioInterval
        public var verdict: Verdict
    }

    public var rows: [Row]
    /// Differences that make the comparison less meaningful (machine, build, model, suite).
    public var warnings: [String]
    /// Case ids in only one of the two results.
    public var unmatched: [String]
    /// Checks that fail in the new result.
    public var failedChecks: [String]
    public var threshold: Double

    public var regressions: [Row] { rows.filter { $0.verdict == .regression } }

    /// Compares `new` against `base`; `maxRegression` is a fraction (0.1 for 10%).
    public static func compare(base: BenchResult, new: BenchResult, maxRegression: Double, level: Double = 0.95) -> BenchComparison {
        var warnings: [String] = []
        func differ(_ what: String, _ a: String, _ b: String) {
            if a != b { warnings.append("\(what) differs: base \(a), new \(b)") }
        }
        differ("suite", "\(base.suite.name) (\(base.suite.hash))", "\(new.suite.name) (\(new.suite.hash))")
        differ("model", "\(base.model.name) (\(base.model.fileHash))", "\(new.model.name) (\(new.model.fileHash))")
        differ("quantization", base.model.quantization ?? "none", new.model.quantization ?? "none")
        differ("CPU", base.environment.cpuModel, new.environment.cpuModel)
        differ("threads", "\(base.settings.threads)", "\(new.settings.threads)")
        differ("build", base.environment.buildConfiguration, new.environment.buildConfiguration)
        differ("KV cache type", base.settings.kvType, new.settings.kvType)

        let baseCases = Dictionary(base.cases.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let newIDs = Set(new.cases.map(\.id))
        var rows: [Row] = []
        var unmatched = base.cases.map(\.id).filter { !newIDs.contains($0) }.map { "\($0) (only in base)" }
        for c in new.cases {
            guard let b = baseCases[c.id] else {
                unmatched.append("\(c.id) (only in new)")
                continue
            }
            rows += compareMetrics(caseID: c.id, base: b.metrics, new: c.metrics, threshold: maxRegression, level: level)
        }
        rows += compareMetrics(caseID: "all", base: base.aggregate.metrics, new: new.aggregate.metrics, threshold: maxRegression, level: level)
        let failed = new.cases.flatMap { c in c.checks.filter { !$0.passed }.map { "\(c.id): \($0.name): \($0.detail)" } }
        return BenchComparison(rows: rows, warnings: warnings, unmatched: unmatched, failedChecks: failed, threshold: maxRegression)
    }

    static func compareMetrics(
        caseID: String, base: [String: Estimate], new: [String: Estimate], threshold: Double, level: Double
    ) -> [Row] {
        var rows: [Row] = []
        for metric in Metric.allCases {
            guard let b = base[metric.rawValue], let n = new[metric.rawValue],
                  let interval = Statistics.medianRatio(
                    base: b.samples, new: n.samples, level: level, seed: Statistics.seed(for: "\(caseID)/\(metric.rawValue)"))
            else { continue }
            rows.append(Row(
                caseID: caseID, metric: metric.rawValue, base: b.median, new: n.median, interval: interval,
                verdict: verdict(interval, higherIsBetter: metric.higherIsBetter, threshold: threshold)))
        }
        return rows
    }

    /// The verdict rule described on the type.
    public static func verdict(_ r: Statistics.RatioInterval, higherIsBetter: Bool, threshold: Double) -> Verdict {
        if higherIsBetter {
            if r.high < 1 - threshold { return .regression }
            if r.low > 1 { return .improvement }
            if r.ratio < 1 - threshold { return .possibleRegression }
        } else {
            if r.low > 1 + threshold { return .regression }
            if r.high < 1 { return .improvement }
            if r.ratio > 1 + threshold { return .possibleRegression }
        }
        return .unchanged
    }

    /// The Markdown report for CI logs.
    public func markdown(baseName: String, newName: String, reportOnly: Bool) -> String {
        var out: [String] = []
        out.append("## QuantBench comparison")
        out.append("")
        out.append("base `\(baseName)`, new `\(newName)`; ratio = new / base of the medians with a 95% bootstrap interval; "
            + String(format: "a regression gates only when the whole interval is beyond %.0f%%", threshold * 100)
            + (reportOnly ? " (report only: nothing gates)." : "."))
        for w in warnings { out.append("") ; out.append("> warning: \(w)") }
        out.append("")
        out.append("| case | metric | base | new | ratio [95% CI] | verdict |")
        out.append("| --- | --- | ---: | ---: | ---: | --- |")
        for r in rows {
            let m = Metric(rawValue: r.metric)
            let verdict: String
            switch r.verdict {
            case .regression: verdict = "**REGRESSION**"
            case .possibleRegression: verdict = "worse? (within noise)"
            case .improvement: verdict = "better"
            case .unchanged: verdict = "same"
            }
            out.append("| \(r.caseID) | \(m?.label ?? r.metric) | \(Self.value(r.base, m)) | \(Self.value(r.new, m)) | "
                + String(format: "%.3f [%.3f, %.3f]", r.interval.ratio, r.interval.low, r.interval.high) + " | \(verdict) |")
        }
        if !unmatched.isEmpty { out += ["", "Not compared: " + unmatched.joined(separator: ", ")] }
        if !failedChecks.isEmpty {
            out += ["", "Failed checks in the new result:"]
            out += failedChecks.map { "- \($0)" }
        }
        out.append("")
        let n = regressions.count
        out.append(n == 0 ? "No regression beyond the threshold with confidence."
            : "\(n) regression\(n == 1 ? "" : "s") beyond the threshold with confidence: "
                + regressions.map { "\($0.caseID) \(Metric(rawValue: $0.metric)?.label ?? $0.metric)" }.joined(separator: ", "))
        return out.joined(separator: "\n") + "\n"
    }

    static func value(_ v: Double, _ m: Metric?) -> String {
        guard let m else { return BenchReport.format(v) }
        if m.isMemory { return ModelReport.formatBytes(Int(v)) }
        if m.higherIsBetter { return BenchReport.format(v) }
        return v < 1e-3 ? BenchReport.format(v * 1e6) + " µs" : BenchReport.format(v * 1e3) + " ms"
    }
}
