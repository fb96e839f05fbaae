import Foundation

/// `compare`: each metric of each case present in both results, judged by `RegressionGate`
/// on the two files' samples as unpaired data: a one-sided Mann-Whitney U test per metric,
/// Holm's adjustment over all of them (family-wise error rate α = 5%), and a practical
/// threshold, so only a change both significant and large gates. The ratio of medians is
/// shown with a 95% bootstrap interval (`Statistics.medianRatio`).
///
/// Two files from different times (let alone machines) are not paired: drift between them
/// is indistinguishable from a change of the engine, which is why `ab`, which interleaves
/// the two builds round by round on one machine, is the command to gate CI on.
public struct BenchComparison: Sendable {
    public typealias Row = GateRow
    public typealias Verdict = GateVerdict

    public var rows: [Row]
    /// Differences that make the comparison less meaningful (machine, build, model, suite).
    public var warnings: [String]
    /// Case ids in only one of the two results.
    public var unmatched: [String]
    /// Checks that fail in the new result.
    public var failedChecks: [String]
    /// Every check of the new result (for JUnit).
    public var checks: [GateReport.Check]
    public var policy: GatePolicy
    public var threshold: Double { policy.timeThreshold }

    public var regressions: [Row] { rows.filter { $0.verdict == .regression } }

    /// The note every `compare` report carries.
    public static let unpairedNote = "Unpaired comparison: the two files were measured at different times (perhaps on different machines), "
        + "so drift between them cannot be told from a change of the engine; a verdict here proves little. "
        + "Gate CI on `quantbench ab`, which interleaves both builds round by round on one machine."

    /// Compares `new` against `base`; `maxRegression` is the time threshold as a fraction
    /// (0.1 for 10%), `workThreshold` the work counters'.
    public static func compare(
        base: BenchResult, new: BenchResult, maxRegression: Double, workThreshold: Double = GatePolicy.defaultWorkThreshold
    ) -> BenchComparison {
        let policy = GatePolicy(timeThreshold: maxRegression, workThreshold: workThreshold)
        var warnings: [String] = []
        func differ(_ what: String, _ a: String, _ b: String) {
            if a != b { warnings.append("\(what) differs: base \(a), new \(b)") }
        }
        differ("suite", "\(base.suite.name) (\(base.suite.hash))", "\(new.suite.name) (\(new.suite.hash))")
        differ("model", "\(base.model.name) (\(base.model.fileHash))", "\(new.model.name) (\(new.model.fileHash))")
        differ("quantization", base.model.quantization ?? "none", new.model.quantization ?? "none")
        differ("CPU", base.environment.cpuModel, new.environment.cpuModel)
        // One model name can be several generations (a VM's "AMD EPYC"); results from before
        // the cpuid was recorded say nothing about it.
        if let a = base.environment.cpuID, let b = new.environment.cpuID { differ("CPU generation (cpuid)", a, b) }
        differ("threads", "\(base.settings.threads)", "\(new.settings.threads)")
        differ("build", base.environment.buildConfiguration, new.environment.buildConfiguration)
        // Results from before the field was recorded ran their build machine's set: not known.
        if let a = base.environment.kernelSet, let b = new.environment.kernelSet { differ("kernel set", a, b) }
        if let a = base.environment.streamPrefetch, let b = new.environment.streamPrefetch {
            differ("decode stream prefetch (QB_STREAM_PREFETCH)", a ? "on" : "off", b ? "on" : "off")
        }
        if let a = base.environment.q4kDpwssd, let b = new.environment.q4kDpwssd {
            differ("Q4_K prefill scales (QB_Q4K_DPWSSD)", a ? "vpdpwssd" : "vpmulld", b ? "vpdpwssd" : "vpmulld")
        }
        differ("KV cache type", base.settings.kvType, new.settings.kvType)
        differ("minimum sample time", base.settings.minSampleSeconds.map { "\($0) s" } ?? "none", new.settings.minSampleSeconds.map { "\($0) s" } ?? "none")

        let baseCases = Dictionary(base.cases.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        let newIDs = Set(new.cases.map(\.id))
        var rows: [Row] = []
        var unmatched = base.cases.map(\.id).filter { !newIDs.contains($0) }.map { "\($0) (only in base)" }
        for c in new.cases {
            guard let b = baseCases[c.id] else {
                unmatched.append("\(c.id) (only in new)")
                continue
            }
            guard b.status != .skipped && c.status != .skipped else { continue }
            rows += compareMetrics(caseID: c.id, base: b.metrics, new: c.metrics)
        }
        rows += compareMetrics(caseID: "all", base: base.aggregate.metrics, new: new.aggregate.metrics)
        rows = RegressionGate.decide(rows, policy: policy)
        let failed = new.cases.flatMap { c in c.checks.filter { !$0.passed }.map { "\(c.id): \($0.name): \($0.detail)" } }
        let checks = new.cases.flatMap { c in c.checks.map { GateReport.Check(caseID: c.id, name: $0.name, passed: $0.passed, detail: $0.detail) } }
        return BenchComparison(
            rows: rows, warnings: warnings, unmatched: unmatched, failedChecks: failed, checks: checks, policy: policy)
    }

    /// A row per metric the base has (a metric the new result lacks is invalid: a missing
    /// measurement never passes), plus metrics only the new result has, which are not judged.
    static func compareMetrics(caseID: String, base: [String: Estimate], new: [String: Estimate]) -> [Row] {
        var rows: [Row] = []
        for metric in Metric.allCases {
            let b = base[metric.rawValue], n = new[metric.rawValue]
            if b == nil { continue }
            rows.append(RegressionGate.unpaired(caseID: caseID, metric: metric, base: b?.samples, new: n?.samples))
        }
        return rows
    }

    /// The report for CI (Markdown, JUnit, exit status). `reportOnly` turns regressions into
    /// a note: nothing gates on speed (failed runs and checks still do).
    public func report(baseName: String, newName: String, reportOnly: Bool = false) -> GateReport {
        var method = "base `\(baseName)`, new `\(newName)`: one-sided Mann-Whitney U per metric on the files' samples, "
            + "Holm over all \(rows.count) at α = \(Int(policy.alpha * 100))%; "
            + policy.ruleText
            + (reportOnly ? " (report only: nothing gates)." : ".")
        if reportOnly { method += "" }
        var notes = [Self.unpairedNote]
        if !unmatched.isEmpty { notes.append("Not compared: " + unmatched.joined(separator: ", ")) }
        var rows = self.rows
        if reportOnly {
            for i in rows.indices where rows[i].verdict == .regression { rows[i].verdict = .possibleRegression }
        }
        return GateReport(
            title: "QuantBench comparison", method: method, policy: policy, rows: rows, checks: checks, failures: [],
            warnings: warnings, notes: notes)
    }

    /// The Markdown report for CI logs.
    public func markdown(baseName: String, newName: String, reportOnly: Bool) -> String {
        report(baseName: baseName, newName: newName, reportOnly: reportOnly).markdown()
    }
}
