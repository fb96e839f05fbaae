import Foundation

extension ABSummary {
    /// The same rounds judged again under `policy`: every row's recorded per-round values are
    /// tested afresh (Holm over the same family), while checks, failures and notes stay as
    /// they were. How a recorded run is read with another threshold, or under a newer rule,
    /// without running a process; `source` names the file in the report's notes.
    public func rejudged(policy: GatePolicy, source: String) -> ABSummary {
        var rows = report.rows.map { row -> GateRow in
            guard let metric = Metric(rawValue: row.metric) else { return row }
            var fresh = RegressionGate.paired(
                caseID: row.caseID, metric: metric, base: row.baseValues.map { Optional($0) }, new: row.newValues.map { Optional($0) })
            fresh.baseRepetitions = row.baseRepetitions
            fresh.newRepetitions = row.newRepetitions
            return fresh
        }
        rows = RegressionGate.decide(rows, policy: policy)
        var out = self
        out.report.rows = rows
        out.report.policy = policy
        let stem = report.method.components(separatedBy: "; a metric gates")[0]
        out.report.method = stem + "; " + policy.ruleText + "."
        out.report.notes.append("Re-judged from \(source) under the rule above; no round was run again.")
        return out
    }
}
