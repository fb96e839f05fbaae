import Foundation
import QBSupport

/// A gated verdict as CI systems consume it: the exit status, a Markdown summary short
/// enough for a GitHub step summary (a headline, one line per regression or failure, the
/// full table folded in `<details>`), and JUnit XML (each check and each gated metric one
/// test case).
public struct GateReport: Sendable, Codable, Equatable {
    /// A check of the candidate (or new result), aggregated over its runs.
    public struct Check: Sendable, Codable, Equatable {
        public var caseID: String
        public var name: String
        public var passed: Bool
        public var detail: String
        enum CodingKeys: String, CodingKey { case caseID = "case", name, passed, detail }
        public init(caseID: String, name: String, passed: Bool, detail: String) {
            self.caseID = caseID
            self.name = name
            self.passed = passed
            self.detail = detail
        }
    }

    /// Exit statuses of `ab` and `compare`.
    public enum Status: Int32, Sendable, Codable {
        case fine = 0
        case regression = 1
        /// Bad input, a run that failed, or a metric that cannot be judged.
        case failed = 2
        /// A correctness check failed.
        case checkFailed = 3
    }

    public var title: String
    /// One line: what was compared and how.
    public var method: String
    public var policy: GatePolicy
    public var rows: [GateRow]
    public var checks: [Check]
    /// Runs that failed, files that could not be read: each one line naming what failed.
    public var failures: [String]
    public var warnings: [String]
    public var notes: [String]

    enum CodingKeys: String, CodingKey { case title, method, policy, rows, checks, failures, warnings, notes, status }

    public init(
        title: String, method: String, policy: GatePolicy, rows: [GateRow], checks: [Check], failures: [String],
        warnings: [String], notes: [String]
    ) {
        self.title = title
        self.method = method
        self.policy = policy
        self.rows = rows
        self.checks = checks
        self.failures = failures
        self.warnings = warnings
        self.notes = notes
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        title = try c.decode(String.self, forKey: .title)
        method = try c.decode(String.self, forKey: .method)
        policy = try c.decode(GatePolicy.self, forKey: .policy)
        rows = try c.decode([GateRow].self, forKey: .rows)
        checks = try c.decode([Check].self, forKey: .checks)
        failures = try c.decode([String].self, forKey: .failures)
        warnings = try c.decode([String].self, forKey: .warnings)
        notes = try c.decode([String].self, forKey: .notes)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(title, forKey: .title)
        try c.encode(method, forKey: .method)
        try c.encode(policy, forKey: .policy)
        try c.encode(rows, forKey: .rows)
        try c.encode(checks, forKey: .checks)
        try c.encode(failures, forKey: .failures)
        try c.encode(warnings, forKey: .warnings)
        try c.encode(notes, forKey: .notes)
        try c.encode(status.rawValue, forKey: .status)
    }

    public var regressions: [GateRow] { rows.filter { $0.verdict == .regression } }
    public var invalid: [GateRow] { rows.filter { $0.verdict == .invalid } }
    public var failedChecks: [Check] { checks.filter { !$0.passed } }

    /// 2 before 3 before 1: a run that failed or a metric that cannot be judged says nothing
    /// about speed; a wrong answer matters more than a slow one.
    public var status: Status {
        if !failures.isEmpty || !invalid.isEmpty || (rows.isEmpty && checks.isEmpty) { return .failed }
        if !failedChecks.isEmpty { return .checkFailed }
        if !regressions.isEmpty { return .regression }
        return .fine
    }

    /// The one-line verdict.
    public var headline: String {
        switch status {
        case .failed:
            let n = failures.count + invalid.count
            return n == 0 ? "FAILED: nothing was measured" : "FAILED: \(n) failure\(n == 1 ? "" : "s") (exit 2)"
        case .checkFailed:
            return "FAILED: \(failedChecks.count) correctness check\(failedChecks.count == 1 ? "" : "s") failed (exit 3)"
        case .regression:
            return "\(regressions.count) regression\(regressions.count == 1 ? "" : "s") (exit 1)"
        case .fine:
            return "no regression (\(rows.count) metrics, smallest p \(RegressionGate.smallestP(rows).map(Self.p) ?? "n/a"))"
        }
    }

    public func markdown() -> String {
        var out = ["## \(title): \(headline)", "", method]
        var lines: [String] = []
        lines += failures.map { "- **FAILED** \($0)" }
        lines += invalid.map { "- **FAILED** \($0.label): \($0.detail ?? "cannot be judged")" }
        lines += failedChecks.map { "- **CHECK FAILED** \($0.caseID) \($0.name): \($0.detail)" }
        lines += regressions.map { r in
            "- **REGRESSION** \(r.label): \(Self.changeText(r)) (p = \(r.p.map(Self.p) ?? "n/a"), Holm-adjusted \(r.pHolm.map(Self.p) ?? "n/a"))"
        }
        if !lines.isEmpty { out += [""] + lines }
        for w in warnings { out += ["", "> warning: \(w)"] }
        out += ["", "<details><summary>All \(rows.count) metrics\(checks.isEmpty ? "" : " and \(checks.count) checks")</summary>", ""]
        out.append("| case | metric | base | new | ratio [95% CI] | change | p | p (Holm) | verdict |")
        out.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
        for r in rows {
            let m = Metric(rawValue: r.metric)
            let ratio = r.interval.ratio.isFinite
                ? String(format: "%.3f", r.interval.ratio) + (r.interval.low.isFinite && r.interval.level < 1
                    ? String(format: " [%.3f, %.3f]", r.interval.low, r.interval.high) : "")
                : "–"
            out.append("| \(r.caseID) | \(m?.label ?? r.metric) | \(Self.value(r.base, m)) | \(Self.value(r.new, m)) | \(ratio) | "
                + "\(r.verdict == .invalid ? "–" : Self.changeText(r)) | \(r.p.map(Self.p) ?? "–") | \(r.pHolm.map(Self.p) ?? "–") | "
                + "\(Self.verdictText(r)) |")
        }
        if !checks.isEmpty {
            out += ["", "Checks: \(checks.count - failedChecks.count) of \(checks.count) passed."]
        }
        for n in notes { out += ["", n] }
        out += ["", "</details>"]
        return out.joined(separator: "\n") + "\n"
    }

    public func junit(suiteName: String = "quantbench") -> String {
        func esc(_ s: String) -> String {
            var o = ""
            for ch in s.unicodeScalars {
                switch ch {
                case "&": o += "&amp;"
                case "<": o += "&lt;"
                case ">": o += "&gt;"
                case "\"": o += "&quot;"
                case "'": o += "&apos;"
                case "\t", "\n", "\r": o.unicodeScalars.append(ch)
                default:
                    // XML 1.0 allows no other control characters.
                    if ch.value < 0x20 || (0xD800...0xDFFF).contains(ch.value) || ch.value == 0xFFFE || ch.value == 0xFFFF { o += "?" }
                    else { o.unicodeScalars.append(ch) }
                }
            }
            return o
        }
        var checkCases: [String] = []
        for c in checks {
            var s = "    <testcase classname=\"\(esc(suiteName)).checks.\(esc(c.caseID))\" name=\"\(esc(c.name))\""
            s += c.passed ? "/>" : ">\n      <failure message=\"\(esc(c.detail))\"/>\n    </testcase>"
            checkCases.append(s)
        }
        var metricCases: [String] = []
        var metricFailures = 0, metricErrors = 0
        for r in rows {
            var s = "    <testcase classname=\"\(esc(suiteName)).metrics.\(esc(r.caseID))\" name=\"\(esc(r.metric))\""
            switch r.verdict {
            case .regression:
                metricFailures += 1
                s += ">\n      <failure message=\"\(esc("regression: \(Self.changeText(r)), p = \(r.p.map(Self.p) ?? "n/a"), Holm \(r.pHolm.map(Self.p) ?? "n/a")"))\"/>\n    </testcase>"
            case .invalid:
                metricErrors += 1
                s += ">\n      <error message=\"\(esc(r.detail ?? "cannot be judged"))\"/>\n    </testcase>"
            default:
                s += ">\n      <system-out>\(esc("\(r.verdict.rawValue): \(Self.changeText(r)), p = \(r.p.map(Self.p) ?? "n/a")"))</system-out>\n    </testcase>"
            }
            metricCases.append(s)
        }
        var runCases: [String] = []
        for (i, f) in failures.enumerated() {
            runCases.append("    <testcase classname=\"\(esc(suiteName)).runs\" name=\"failure \(i + 1)\">\n      <error message=\"\(esc(f))\"/>\n    </testcase>")
        }
        let checkFailures = checks.filter { !$0.passed }.count
        let total = checks.count + rows.count + failures.count
        var out = ["<?xml version=\"1.0\" encoding=\"UTF-8\"?>"]
        out.append("<testsuites name=\"\(esc(suiteName))\" tests=\"\(total)\" failures=\"\(checkFailures + metricFailures)\" errors=\"\(metricErrors + failures.count)\">")
        out.append("  <testsuite name=\"\(esc(suiteName)).checks\" tests=\"\(checks.count)\" failures=\"\(checkFailures)\" errors=\"0\">")
        out += checkCases
        out.append("  </testsuite>")
        out.append("  <testsuite name=\"\(esc(suiteName)).metrics\" tests=\"\(rows.count)\" failures=\"\(metricFailures)\" errors=\"\(metricErrors)\">")
        out += metricCases
        out.append("  </testsuite>")
        if !runCases.isEmpty {
            out.append("  <testsuite name=\"\(esc(suiteName)).runs\" tests=\"\(failures.count)\" failures=\"0\" errors=\"\(failures.count)\">")
            out += runCases
            out.append("  </testsuite>")
        }
        out.append("</testsuites>")
        return out.joined(separator: "\n") + "\n"
    }

    static func p(_ v: Double) -> String {
        v.isNaN ? "n/a" : v < 1e-4 ? String(format: "%.1e", v) : String(format: "%.4f", v)
    }

    static func changeText(_ r: GateRow) -> String {
        if r.metricClass == .memory, let b = r.bytesChange {
            return (b >= 0 ? "+" : "−") + ModelReport.formatBytes(Int(abs(b).rounded()))
        }
        guard r.change.isFinite else { return "–" }
        return String(format: "%.1f%% %@", abs(r.change) * 100, r.change >= 0 ? "worse" : "better")
    }

    static func verdictText(_ r: GateRow) -> String {
        switch r.verdict {
        case .regression: return "**REGRESSION**"
        case .possibleRegression:
            return r.detail.map { "worse? (\($0))" } ?? "worse? (not significant after Holm)"
        case .improvement: return "better"
        case .unchanged: return "same"
        case .invalid: return "**FAILED**: \(r.detail ?? "")"
        }
    }

    static func value(_ v: Double, _ m: Metric?) -> String {
        guard v.isFinite else { return "–" }
        guard let m else { return BenchReport.format(v) }
        if m.isMemory { return ModelReport.formatBytes(Int(v)) }
        if m.isWorkCounter { return String(format: "%.4g", v) }
        if m.higherIsBetter { return BenchReport.format(v) }
        return v < 1e-3 ? BenchReport.format(v * 1e6) + " µs" : BenchReport.format(v * 1e3) + " ms"
    }

    /// Writes the Markdown to `$GITHUB_STEP_SUMMARY` (appended, as GitHub expects) when it
    /// is set, and to `path` (atomically) when given.
    public func writeSummary(to path: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let md = Data(markdown().utf8)
        if let path { try AtomicWriter.write(md, to: URL(fileURLWithPath: path)) }
        if let step = environment["GITHUB_STEP_SUMMARY"], !step.isEmpty {
            if !FileManager.default.fileExists(atPath: step), !FileManager.default.createFile(atPath: step, contents: nil) {
                throw LocatedError(path: step, "cannot create $GITHUB_STEP_SUMMARY")
            }
            guard let h = FileHandle(forWritingAtPath: step) else {
                throw LocatedError(path: step, "cannot append to $GITHUB_STEP_SUMMARY")
            }
            defer { try? h.close() }
            try h.seekToEnd()
            try h.write(contentsOf: md)
        }
    }
}
