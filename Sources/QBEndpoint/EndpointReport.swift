import Foundation
import QBRunner

/// The Markdown summary of a `bench --endpoint` run, and its file name.
public enum EndpointReport {
    public static func markdown(_ r: BenchResult) -> String {
        guard let e = r.endpoint else { return BenchReport.markdown(r) }
        var out: [String] = []
        out.append("# QuantBench endpoint load: \(e.model) at \(e.url)")
        out.append("")
        out.append("- **when**: \(r.createdAt); **client**: \(r.environment.hostname), \(r.environment.cpu), \(r.settings.threads) client thread(s)")
        out.append("- **suite**: \(r.suite.name) (xxh64 `\(r.suite.hash)`), API \(e.api), server models: \(e.serverModels.isEmpty ? "none listed" : e.serverModels.joined(separator: ", "))")
        var plan: [String] = []
        if let n = e.numRequests { plan.append("\(n) requests per level") }
        if let d = e.durationSeconds { plan.append("at most \(LoadMode.number(d)) s per level") }
        if plan.isEmpty { plan.append("default request counts") }
        if let m = e.maxTokens { plan.append("max_tokens \(m)") }
        plan.append("\(r.settings.warmup) warmup request(s)")
        plan.append("timeout \(LoadMode.number(e.timeoutSeconds)) s")
        if let slo = e.slo { plan.append("SLO \(slo.summary)") }
        out.append("- **plan**: " + plan.joined(separator: ", "))
        out.append("- **verdict**: \(r.passed ? "passed" : "FAILED") (\(r.aggregate.checksPassed) checks passed, \(r.aggregate.checksFailed) failed)")
        out.append("")
        out.append("| level | sent | ok | failed | req/s | output t/s | goodput req/s | TTFT p50 / p90 / p99 ms | TPOT p50 / p90 / p99 ms | ITL p50 / p90 / p99 ms | e2e p50 / p90 s |")
        out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | --- |")
        for l in e.levels {
            func ms(_ key: String) -> String {
                guard let d = l.distributions[key] else { return "–" }
                return String(format: "%.1f / %.1f / %.1f", d.median * 1000, d.p90 * 1000, d.p99 * 1000)
            }
            let e2e = l.distributions["end_to_end_s"].map { String(format: "%.2f / %.2f", $0.median, $0.p90) } ?? "–"
            let good = l.goodputRequestsPerSecond.map { String(format: "%.2f", $0) } ?? "–"
            out.append(
                "| \(l.caseID) | \(l.sent) | \(l.completed) | \(l.failed) | \(String(format: "%.2f", l.requestsPerSecond)) | "
                    + "\(String(format: "%.1f", l.outputTokensPerSecond)) | \(good) | \(ms("ttft_s")) | \(ms("tpot_s")) | \(ms("itl_s")) | \(e2e) |")
        }
        out.append("")
        for c in r.cases where c.kind != .load {
            out.append("- **\(c.id)**: " + c.checks.map { "\($0.name) \($0.passed ? "ok" : "FAILED"): \($0.detail)" }.joined(separator: "; "))
        }
        for l in e.levels {
            guard let c = r.cases.first(where: { $0.id == l.caseID }) else { continue }
            let failed = c.checks.filter { !$0.passed }
            if !l.errors.isEmpty || !l.streamViolations.isEmpty || !failed.isEmpty {
                out.append("- **\(l.caseID)**: " + (failed.isEmpty ? "passed" : "failed") + "; "
                    + c.checks.map { "\($0.name) \($0.passed ? "ok" : "FAILED"): \($0.detail)" }.joined(separator: "; "))
            }
        }
        if let notes = r.cases.first(where: { $0.kind == .load })?.notes, !notes.isEmpty {
            out.append("- **notes**: " + notes.joined(separator: "; "))
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// `endpoint-<model id>-<UTC time to the millisecond>`, file-name-safe.
    public static func stem(_ r: BenchResult, date: Date = Date()) -> String {
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss.SSS"
        f.timeZone = TimeZone(identifier: "UTC")
        f.locale = Locale(identifier: "en_US_POSIX")
        func safe(_ s: String) -> String {
            String(s.lowercased().unicodeScalars.map { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "." || $0 == "_") ? Character($0) : "-" })
        }
        return ["endpoint", safe(String(r.model.name.suffix(60))), f.string(from: date)].joined(separator: "-")
    }
}
