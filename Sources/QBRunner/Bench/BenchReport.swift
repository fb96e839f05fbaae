import Foundation

/// The Markdown summary of a `BenchResult` (written beside the JSON and printed by
/// `bench`), and llama-bench's table for throughput tests.
public enum BenchReport {
    public static func markdown(_ r: BenchResult) -> String {
        var out: [String] = []
        let env = r.environment
        out.append("# QuantBench \(r.suite.name): \(r.model.name)")
        out.append("")
        let dirty = env.dirty == true ? " (uncommitted changes)" : ""
        out.append("- **run**: \(r.createdAt), commit `\(env.commit.prefix(12))`\(dirty), \(env.buildConfiguration) build, "
            + (env.kernelSet.map { "\($0) kernels, " } ?? "") + "\(r.settings.threads) threads on \(env.cpu) (\(env.logicalCores) cores), \(env.hostname)")
        let quant = r.model.quantization.map { ", --quant \($0)" } ?? ""
        out.append("- **model**: `\(r.model.path)` (\(r.model.format)\(quant)), xxh64 `\(r.model.fileHash)`, "
            + "\(formatCount(r.model.parameters)) parameters, \(ModelReport.formatBytes(r.model.weightBytes)), "
            + String(format: "%.2f bits per weight", r.model.bitsPerWeight) + " (\(formatMix(r.model.tensorFormats)))")
        out.append("- **suite**: \(r.suite.name) (xxh64 `\(r.suite.hash)`), \(r.settings.repetitions) repetitions after "
            + "\(r.settings.warmup) warmup; medians with their order-statistic interval [low, high]")
        out.append(String(format: "- **load**: %.3f s", r.load.seconds)
            + (r.load.quantizeSeconds.map { String(format: " (of which --quant %.3f s)", $0) } ?? ""))
        let a = r.aggregate
        out.append("- **result**: \(a.passed) passed, \(a.failed) failed, \(a.skipped) skipped of \(a.cases) cases; "
            + "\(a.checksPassed) of \(a.checksPassed + a.checksFailed) checks passed")

        let generation = r.cases.filter { ($0.kind == .generate || $0.kind == .chat) && $0.status != .skipped }
        if !generation.isEmpty {
            out += ["", "## Generation", ""]
            out.append("| case | prompt | generated | finish | TTFT ms | prefill t/s | decode t/s | ITL p50 / p90 / p99 ms | end-to-end ms | checks |")
            out.append("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |")
            for c in generation {
                let turns = c.runs.first?.turns ?? []
                let generated = turns.map { String($0.generatedTokens) }.joined(separator: "+")
                let finish = turns.map(\.finishReason.rawValue).joined(separator: ", ")
                let itl = [Metric.interTokenP50, .interTokenP90, .interTokenP99].map { m in
                    c.metrics[m.rawValue].map { String(format: "%.3f", $0.median * 1e3) } ?? "–"
                }.joined(separator: " / ")
                out.append("| \(c.id) | \(c.promptTokens ?? 0) | \(generated) | \(finish) | \(cell(c, .timeToFirstToken, scale: 1e3)) | "
                    + "\(cell(c, .prefillTokensPerSecond)) | \(cell(c, .decodeTokensPerSecond)) | \(itl) | "
                    + "\(cell(c, .endToEnd, scale: 1e3)) | \(checks(c)) |")
            }
            if !a.metrics.isEmpty {
                out.append("| **all** | | | | \(cell(a.metrics, .timeToFirstToken, scale: 1e3)) | \(cell(a.metrics, .prefillTokensPerSecond)) | "
                    + "\(cell(a.metrics, .decodeTokensPerSecond)) | | \(cell(a.metrics, .endToEnd, scale: 1e3)) | |")
            }
        }

        let throughput = r.cases.filter { $0.kind == .throughput && $0.status != .skipped }
        if !throughput.isEmpty {
            out += ["", "## Throughput (llama-bench)", "", llamaBenchTable(r)]
            out.append("")
            out.append("Median [interval] t/s: " + throughput.map { "\($0.test ?? $0.id) \(cell($0, .tokensPerSecond))" }.joined(separator: "; "))
            // Decode streams every weight once per token, plus the cached keys and values
            // of every earlier position: its speed times those bytes is the read bandwidth
            // it achieves.
            for c in throughput where c.test?.hasPrefix("tg") == true {
                guard let m = c.metrics[Metric.tokensPerSecond.rawValue], let memory = c.memory,
                      let context = c.contextLength, context > 0, let tokens = c.runs.first?.tokens
                else { continue }
                let kvPerPosition = Double(memory.kvCacheBytes) / Double(context)
                let meanDepth = Double(context - tokens) + Double(tokens) / 2
                let bytesPerToken = Double(memory.weightsBytes) + kvPerPosition * meanDepth
                let gbps = m.median * bytesPerToken / 1e9
                var line = String(format: "%@: weights and KV cache read at %.2f GB/s", c.test ?? c.id, gbps)
                if let roof = r.roofline, roof.readBandwidthAllThreads > 0 {
                    line += String(
                        format: " (%.0f%% of the %.1f GB/s read bandwidth %@)", 100 * gbps / roof.readBandwidthAllThreads,
                        roof.readBandwidthAllThreads, rooflineOrigin(r))
                }
                // Each repetition against the probe run just before it: the bandwidth here
                // drifts within minutes, so this pairing is the steadier figure.
                let paired = c.runs.compactMap { run -> Double? in
                    guard let s = run.seconds, s > 0, let n = run.tokens, let probe = run.readBandwidthGBps, probe > 0 else { return nil }
                    return Double(n) / s * bytesPerToken / 1e9 / probe
                }
                if !paired.isEmpty {
                    let probes = c.runs.compactMap(\.readBandwidthGBps)
                    line += String(
                        format: "; per repetition against a probe run just before it: median %.0f%% (%.0f-%.0f%%; probes %.1f-%.1f GB/s)",
                        100 * Roofline.median(paired), 100 * (paired.min() ?? 0), 100 * (paired.max() ?? 0), probes.min() ?? 0, probes.max() ?? 0)
                }
                out.append("")
                out.append(line)
            }
            // Prefill is arithmetic: two operations per weight per token in the layers' products
            // (the output head, run once per chunk, and attention are left out).
            for c in throughput where c.test?.hasPrefix("pp") == true {
                guard let m = c.metrics[Metric.tokensPerSecond.rawValue] else { continue }
                let s = r.model.config
                let qDim = s.heads * s.headDim, kvDim = s.kvHeads * s.headDim
                let perLayer = s.hiddenSize * (2 * qDim + 2 * kvDim) + 3 * s.hiddenSize * s.ffnSize
                let gops = m.median * 2 * Double(s.layers * perLayer) / 1e9
                var line = String(format: "%@: weight products at %.1f GOP/s", c.test ?? c.id, gops)
                if let roof = r.roofline, let kind = r.prefillArithmetic {
                    let peak = kind == "int8" ? roof.int8GopsAllThreads : roof.fp32GflopsAllThreads
                    if peak > 0 {
                        line += String(format: " (%.0f%% of the %@ peak, %.0f GOP/s %@)", 100 * gops / peak, kind, peak, rooflineOrigin(r))
                    }
                }
                out.append("")
                out.append(line)
            }
        }

        let timed = r.cases.filter { $0.kind == .throughput && $0.metrics[Metric.cpuSeconds.rawValue] != nil }
        if !timed.isEmpty {
            out += ["", "## Per operation", ""]
            let counted = timed.contains { $0.metrics[Metric.instructions.rawValue] != nil }
            out.append("| test | wall ms | CPU ms |" + (counted ? " instructions | cycles |" : ""))
            out.append("| --- | ---: | ---: |" + (counted ? " ---: | ---: |" : ""))
            for c in timed {
                let wall = c.runs.compactMap(\.seconds)
                func median(_ m: Metric) -> String { c.metrics[m.rawValue].map { String(format: "%.4g", $0.median) } ?? "–" }
                out.append("| \(c.test ?? c.id) | \(Statistics.median(wall).map { String(format: "%.2f", $0 * 1e3) } ?? "–") | "
                    + "\(c.metrics[Metric.cpuSeconds.rawValue].map { String(format: "%.2f", $0.median * 1e3) } ?? "–") |"
                    + (counted ? " \(median(.instructions)) | \(median(.cycles)) |" : ""))
            }
            out.append("")
            var line = r.settings.minSampleSeconds.map { "Each sample repeated its operation for at least \(BenchReport.format($0 * 1e3)) ms; figures are per operation." } ?? ""
            if let w = r.workCounters, !w.available { line += (line.isEmpty ? "" : " ") + "Work counters unavailable: \(w.reason ?? "unknown reason")." }
            out.append(line)
        }

        let cancel = r.cases.filter { $0.kind == .cancel && $0.status != .skipped }
        if !cancel.isEmpty {
            out += ["", "## Cancellation", "", "| case | cancel latency µs | checks |", "| --- | ---: | --- |"]
            for c in cancel { out.append("| \(c.id) | \(cell(c, .cancelLatency, scale: 1e6)) | \(checks(c)) |") }
        }

        let measured = r.cases.filter { $0.status != .skipped && $0.memory != nil }
        if !measured.isEmpty {
            out += ["", "## Memory", ""]
            out.append("| case | weights | KV cache | scratch | peak RSS | tcmalloc allocated | tcmalloc heap |")
            out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
            for c in measured {
                guard let m = c.memory else { continue }
                func bytes(_ metric: Metric) -> String { c.metrics[metric.rawValue].map { ModelReport.formatBytes(Int($0.median)) } ?? "–" }
                out.append("| \(c.id) | \(ModelReport.formatBytes(m.weightsBytes)) | \(ModelReport.formatBytes(m.kvCacheBytes)) | "
                    + "\(ModelReport.formatBytes(m.scratchBytes)) | \(bytes(.peakResident)) | \(bytes(.allocated)) | \(bytes(.heap)) |")
            }
            let reset = r.cases.flatMap(\.runs).allSatisfy(\.memory.peakWasReset)
            out.append("")
            out.append(reset ? "Peak RSS (VmHWM) was reset before every run." : "Peak RSS could not be reset between runs here; it is the process's peak so far.")
        }

        let skipped = r.cases.filter { $0.status == .skipped }
        if !skipped.isEmpty {
            out += ["", "## Skipped", ""]
            for c in skipped { out.append("- \(c.id): \(c.notes.joined(separator: "; "))") }
        }
        let failures = r.cases.flatMap { c in c.checks.filter { !$0.passed }.map { (c.id, $0) } }
        if !failures.isEmpty {
            out += ["", "## Failed checks", ""]
            for (id, check) in failures { out.append("- \(id): **\(check.name)**: \(check.detail)") }
        }
        return out.joined(separator: "\n") + "\n"
    }

    /// "measured in this run" or "stored, measured DATE".
    static func rooflineOrigin(_ r: BenchResult) -> String {
        guard let roof = r.roofline else { return "" }
        if r.rooflineSource == "this run" { return "measured in this run" }
        return "stored, measured " + ISO8601DateFormatter().string(from: roof.measuredAt)
    }

    /// llama-bench's Markdown table: `| model | size | params | backend | threads | test | t/s |`,
    /// t/s as mean ± standard deviation over the repetitions.
    public static func llamaBenchTable(_ r: BenchResult) -> String {
        var rows = [["model", "size", "params", "backend", "threads", "test", "t/s"]]
        let size = llamaBenchSize(r.model.weightBytes)
        let params = llamaBenchParams(r.model.parameters)
        for c in r.cases where c.kind == .throughput && c.status != .skipped {
            guard let m = c.metrics[Metric.tokensPerSecond.rawValue] else { continue }
            rows.append([
                r.model.name, size, params, "CPU", "\(r.settings.threads)", c.test ?? c.id,
                String(format: "%.2f ± %.2f", m.mean, m.standardDeviation),
            ])
        }
        return alignedTable(rows, rightAligned: [1, 2, 4, 5, 6])
    }

    /// A Markdown table padded as llama-bench pads its own: `rows[0]` is the header, the
    /// columns in `rightAligned` are right-aligned (`---:`). No trailing newline.
    static func alignedTable(_ rows: [[String]], rightAligned right: Set<Int>) -> String {
        guard let header = rows.first else { return "" }
        let widths = header.indices.map { i in rows.map { $0[i].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { i, s in
                let pad = String(repeating: " ", count: widths[i] - s.count)
                return right.contains(i) ? pad + s : s + pad
            }.joined(separator: " | ") + " |"
        }
        let separator = "| " + widths.enumerated().map { i, w in
            right.contains(i) ? String(repeating: "-", count: max(w - 1, 1)) + ":" : String(repeating: "-", count: w)
        }.joined(separator: " | ") + " |"
        return ([line(header), separator] + rows.dropFirst().map(line)).joined(separator: "\n")
    }

    /// llama-bench prints sizes in MiB below 1 GiB, GiB above.
    static func llamaBenchSize(_ bytes: Int) -> String {
        let mib = Double(bytes) / 1024 / 1024
        return mib < 1024 ? String(format: "%.2f MiB", mib) : String(format: "%.2f GiB", mib / 1024)
    }

    /// llama-bench prints parameters in M below a billion, B above.
    static func llamaBenchParams(_ n: Int) -> String {
        Double(n) < 1e9 ? String(format: "%.2f M", Double(n) / 1e6) : String(format: "%.2f B", Double(n) / 1e9)
    }

    static func cell(_ c: CaseResult, _ m: Metric, scale: Double = 1) -> String { cell(c.metrics, m, scale: scale) }

    /// "median [low, high]" with three significant figures, or "–".
    static func cell(_ metrics: [String: Estimate], _ m: Metric, scale: Double = 1) -> String {
        guard let e = metrics[m.rawValue] else { return "–" }
        if e.count < 2 { return format(e.median * scale) }
        return "\(format(e.median * scale)) [\(format(e.low * scale)), \(format(e.high * scale))]"
    }

    static func format(_ v: Double) -> String {
        let a = abs(v)
        if a >= 1000 { return String(format: "%.0f", v) }
        if a >= 100 { return String(format: "%.1f", v) }
        if a >= 10 { return String(format: "%.2f", v) }
        return String(format: "%.3f", v)
    }

    static func checks(_ c: CaseResult) -> String {
        let failed = c.checks.filter { !$0.passed }
        return failed.isEmpty ? "\(c.checks.count) passed" : "**failed**: " + failed.map(\.name).joined(separator: ", ")
    }

    static func formatCount(_ n: Int) -> String {
        let d = Double(n)
        if d >= 1e9 { return String(format: "%.2f B", d / 1e9) }
        if d >= 1e6 { return String(format: "%.2f M", d / 1e6) }
        if d >= 1e3 { return String(format: "%.1f K", d / 1e3) }
        return "\(n)"
    }

    static func formatMix(_ mix: [String: Int]) -> String {
        mix.sorted { $0.value > $1.value || ($0.value == $1.value && $0.key < $1.key) }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
    }
}
