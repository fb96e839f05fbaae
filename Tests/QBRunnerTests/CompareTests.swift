import Foundation
import XCTest
@testable import QBRunner

/// `compare` gates only on a regression beyond the threshold with confidence: a clear
/// regression gates, noise within the interval does not, an improvement never does.
final class CompareTests: XCTestCase {
    /// A result whose cases carry the given metric samples.
    static func result(_ cases: [String: [Metric: [Double]]], cpu: String = "Test CPU") -> BenchResult {
        let env = EnvironmentInfo(
            commit: "unknown", dirty: nil, buildConfiguration: "release", buildFlags: [], swiftVersion: "6.3", os: "Linux",
            kernel: "6", hostname: "test", cpuModel: cpu, cpuFlags: [], logicalCores: 2, threads: 2)
        let model = ModelInfo(
            path: "/models/tiny", name: "llama 656K F32", format: "safetensors", quantization: nil, fileHash: "0123456789abcdef",
            fileBytes: 1, files: ["model.safetensors"], parameters: 656_000, weightBytes: 2_600_000, bitsPerWeight: 32,
            tensorFormats: ["F32": 21],
            config: .init(hiddenSize: 128, layers: 2, heads: 4, kvHeads: 2, headDim: 32, ffnSize: 384, vocabSize: 1024, contextLength: 2048),
            tokenizer: "BPETokenizer")
        let results = cases.sorted { $0.key < $1.key }.map { id, metrics -> CaseResult in
            var c = CaseResult(id: id, kind: .generate)
            for (m, samples) in metrics { c.metrics[m.rawValue] = Estimate(samples) }
            return c
        }
        return BenchResult(
            createdAt: "2026-01-01T00:00:00Z", suite: SuiteInfo(name: "smoke", path: nil, hash: "00", description: nil),
            environment: env, model: model,
            settings: RunSettings(repetitions: 5, warmup: 1, threads: 2, seed: 1, chatFormat: "plain-continuation", kvType: "f16"),
            load: LoadInfo(seconds: 0.01, quantizeSeconds: nil, memory: MemorySnapshot(
                peakResidentBytes: nil, residentBytes: nil, allocatedBytes: nil, heapBytes: nil, peakWasReset: false)),
            cases: results, aggregate: BenchRunner.aggregate(results))
    }

    /// Samples around `center` with ±`spread` relative jitter, deterministic.
    static func samples(_ center: Double, spread: Double, n: Int = 7) -> [Double] {
        let pattern: [Double] = [0, 1, -1, 0.5, -0.5, 0.8, -0.8, 0.3, -0.3, 0.1]
        return (0..<n).map { center * (1 + spread * pattern[$0 % pattern.count]) }
    }

    func testClearRegressionGates() throws {
        let base = Self.result(["greedy": [.decodeTokensPerSecond: Self.samples(1000, spread: 0.02)]])
        let new = Self.result(["greedy": [.decodeTokensPerSecond: Self.samples(600, spread: 0.02)]])
        let c = BenchComparison.compare(base: base, new: new, maxRegression: 0.10)
        let row = try XCTUnwrap(c.rows.first { $0.caseID == "greedy" && $0.metric == Metric.decodeTokensPerSecond.rawValue })
        XCTAssertEqual(row.interval.ratio, 0.6, accuracy: 1e-9)
        XCTAssertLessThan(row.interval.high, 0.9)
        XCTAssertEqual(row.verdict, .regression)
        XCTAssertEqual(c.regressions.count, 2, "the case and the aggregate")
        XCTAssertTrue(c.markdown(baseName: "a", newName: "b", reportOnly: false).contains("**REGRESSION**"))
    }

    func testLatencyRegressionGatesUpward() throws {
        let base = Self.result(["greedy": [.timeToFirstToken: Self.samples(0.010, spread: 0.02)]])
        let new = Self.result(["greedy": [.timeToFirstToken: Self.samples(0.015, spread: 0.02)]])
        let c = BenchComparison.compare(base: base, new: new, maxRegression: 0.10)
        XCTAssertEqual(c.rows.first { $0.caseID == "greedy" }?.verdict, .regression)
    }

    func testNoiseWithinTheIntervalDoesNotGate() throws {
        // 12% slower at the median, but the runs scatter by ±40%: the interval reaches back
        // past the 10% threshold, so it is not a regression with confidence.
        let base = Self.result(["greedy": [.decodeTokensPerSecond: Self.samples(1000, spread: 0.4)]])
        let new = Self.result(["greedy": [.decodeTokensPerSecond: Self.samples(880, spread: 0.4)]])
        let c = BenchComparison.compare(base: base, new: new, maxRegression: 0.10)
        let row = try XCTUnwrap(c.rows.first { $0.caseID == "greedy" })
        XCTAssertLessThan(row.interval.ratio, 0.9)
        XCTAssertGreaterThanOrEqual(row.interval.high, 0.9)
        XCTAssertEqual(row.verdict, .possibleRegression)
        XCTAssertTrue(c.regressions.isEmpty)

        // A small change with tight runs stays inside the threshold.
        let tight = BenchComparison.compare(
            base: base, new: Self.result(["greedy": [.decodeTokensPerSecond: Self.samples(970, spread: 0.01)]]), maxRegression: 0.10)
        XCTAssertTrue(tight.regressions.isEmpty)
    }

    func testImprovementNeverGates() throws {
        let base = Self.result(["greedy": [
            .decodeTokensPerSecond: Self.samples(1000, spread: 0.02), .timeToFirstToken: Self.samples(0.02, spread: 0.02),
            .peakResident: Self.samples(50e6, spread: 0.001),
        ]])
        let new = Self.result(["greedy": [
            .decodeTokensPerSecond: Self.samples(3000, spread: 0.02), .timeToFirstToken: Self.samples(0.005, spread: 0.02),
            .peakResident: Self.samples(20e6, spread: 0.001),
        ]])
        let c = BenchComparison.compare(base: base, new: new, maxRegression: 0)
        XCTAssertTrue(c.regressions.isEmpty)
        XCTAssertTrue(c.rows.filter { $0.caseID == "greedy" }.allSatisfy { $0.verdict == .improvement })
    }

    func testVerdictNeedsSignificanceAndSize() {
        // A precise measurement: the interval is the point estimate's ratio.
        func row(_ change: Double, p: Double, holm: Double, metric: Metric = .tokensPerSecond, bytes: Double? = nil, base: Double = 100) -> GateRow {
            let ratio = metric.higherIsBetter ? 1 / (1 + change) : 1 + change
            return GateRow(
                caseID: "c", metric: metric.rawValue, metricClass: metric.gateClass, base: base, new: base,
                interval: .init(ratio: ratio, low: ratio, high: ratio, level: 0.95), change: change, bytesChange: bytes, p: p, pHolm: holm, n: 8,
                verdict: .unchanged, detail: nil, baseValues: [], newValues: [])
        }
        let policy = GatePolicy()
        XCTAssertEqual(RegressionGate.verdict(row(0.2, p: 0.001, holm: 0.01), policy: policy), .regression)
        XCTAssertEqual(RegressionGate.verdict(row(0.2, p: 0.04, holm: 0.2), policy: policy), .possibleRegression, "large, not significant")
        XCTAssertEqual(RegressionGate.verdict(row(0.03, p: 1e-9, holm: 1e-8), policy: policy), .unchanged, "significant, small")
        XCTAssertEqual(RegressionGate.verdict(row(-0.3, p: 0.9999, holm: 1), policy: policy), .improvement)
        // Work counters gate at 5%.
        XCTAssertEqual(RegressionGate.verdict(row(0.06, p: 1e-6, holm: 1e-5, metric: .instructions), policy: policy), .regression)
        XCTAssertEqual(RegressionGate.verdict(row(0.06, p: 1e-6, holm: 1e-5, metric: .cpuSeconds), policy: policy), .unchanged)
        // Memory: a 2 MiB step is the same, however certain; 30 MiB on 100 MiB gates.
        let mib = 1_048_576.0
        XCTAssertEqual(RegressionGate.verdict(row(0.2, p: 0, holm: 0, metric: .heap, bytes: 2 * mib, base: 10 * mib), policy: policy), .unchanged)
        XCTAssertEqual(RegressionGate.verdict(row(0.3, p: 0, holm: 0, metric: .peakResident, bytes: 30 * mib, base: 100 * mib), policy: policy), .regression)
        XCTAssertEqual(RegressionGate.verdict(row(0.04, p: 0, holm: 0, metric: .peakResident, bytes: 4 * mib, base: 100 * mib), policy: policy), .unchanged)
    }

    func testMissingOrNonFiniteSamplesFailNamingTheMetric() throws {
        let base = Self.result(["a": [.decodeTokensPerSecond: [10, 11, 12], .timeToFirstToken: [0.1, 0.1, 0.1]]])
        var new = Self.result(["a": [.decodeTokensPerSecond: [10, 11, 12]]])
        new.cases[0].metrics[Metric.decodeTokensPerSecond.rawValue]?.samples = [10, .nan, 12]
        let c = BenchComparison.compare(base: base, new: new, maxRegression: 0.1)
        let report = c.report(baseName: "a", newName: "b")
        XCTAssertEqual(report.status, .failed)
        let invalid = Set(report.invalid.map(\.metric))
        XCTAssertEqual(invalid, [Metric.decodeTokensPerSecond.rawValue, Metric.timeToFirstToken.rawValue])
        XCTAssertTrue(report.markdown().contains("**FAILED** a TTFT: missing in the new result"))
        XCTAssertTrue(report.junit().contains("<error message=\"nan among the new samples\"/>"))
    }

    func testFailedChecksExitThreeAndJUnitListsThem() throws {
        let base = Self.result(["a": [.decodeTokensPerSecond: Self.samples(1000, spread: 0.01)]])
        var new = base
        new.cases[0].checks = [CheckResult("finish_reason", false, "got eos <expected>"), CheckResult("ran", true)]
        let report = BenchComparison.compare(base: base, new: new, maxRegression: 0.1).report(baseName: "a", newName: "b")
        XCTAssertEqual(report.status, .checkFailed)
        let xml = report.junit()
        XCTAssertTrue(xml.contains("<testcase classname=\"quantbench.checks.a\" name=\"finish_reason\">"), xml)
        XCTAssertTrue(xml.contains("got eos &lt;expected&gt;"), xml)
        XCTAssertTrue(xml.contains("name=\"decode_tokens_per_s\""), xml)
        XCTAssertTrue(report.markdown().contains(BenchComparison.unpairedNote))
    }

    func testDifferencesAreReported() {
        let base = Self.result(["a": [.decodeTokensPerSecond: [1, 2, 3]], "gone": [.decodeTokensPerSecond: [1, 2]]])
        var new = Self.result(["a": [.decodeTokensPerSecond: [1, 2, 3]], "added": [.decodeTokensPerSecond: [1, 2]]], cpu: "Other CPU")
        new.cases[0].checks = [CheckResult("deterministic", false, "run 2 differs")]
        let c = BenchComparison.compare(base: base, new: new, maxRegression: 0.1)
        XCTAssertTrue(c.warnings.contains { $0.hasPrefix("CPU differs") })
        XCTAssertEqual(Set(c.unmatched), ["gone (only in base)", "added (only in new)"])
        XCTAssertEqual(c.failedChecks.count, 1)
        let md = c.markdown(baseName: "base.json", newName: "new.json", reportOnly: true)
        XCTAssertTrue(md.contains("| case | metric | base | new | ratio [95% CI] | change | p | p (Holm) | verdict |"))
        XCTAssertTrue(md.contains("report only"))
    }

    /// The CPU tunings results record (the decode stream prefetch, QB_STREAM_PREFETCH; the
    /// avx512 Q4_K prefill's way with its scales, QB_Q4K_DPWSSD) are named when the two
    /// results ran them differently, and not when either has no record of them.
    func testTuningDifferencesAreReported() {
        let tunings: [(WritableKeyPath<EnvironmentInfo, Bool?>, String, String)] = [
            (\.streamPrefetch, "QB_STREAM_PREFETCH", "decode stream prefetch (QB_STREAM_PREFETCH) differs: base on, new off"),
            (\.q4kDpwssd, "QB_Q4K_DPWSSD", "Q4_K prefill scales (QB_Q4K_DPWSSD) differs: base vpdpwssd, new vpmulld"),
        ]
        for (field, variable, expected) in tunings {
            var base = Self.result(["a": [.decodeTokensPerSecond: [1, 2, 3]]]), new = base
            base.environment[keyPath: field] = true
            new.environment[keyPath: field] = false
            let warnings = BenchComparison.compare(base: base, new: new, maxRegression: 0.1).warnings
            XCTAssertTrue(warnings.contains(expected), "\(warnings)")
            for unnamed: Bool? in [nil, true] {
                new.environment[keyPath: field] = unnamed
                XCTAssertFalse(BenchComparison.compare(base: base, new: new, maxRegression: 0.1).warnings.contains { $0.contains(variable) }, variable)
            }
        }
    }

    /// One model name over two generations (a VM's "AMD EPYC" on Zen 4 and Zen 5) is named
    /// by the cpuid; a result from before the cpuid was recorded is not compared on it.
    func testCPUGenerationDifferenceIsReported() {
        var base = Self.result(["a": [.decodeTokensPerSecond: [1, 2, 3]]], cpu: "AMD EPYC"), new = base
        base.environment.cpuID = "family 25 model 17"
        new.environment.cpuID = "family 26 model 2"
        let warnings = BenchComparison.compare(base: base, new: new, maxRegression: 0.1).warnings
        XCTAssertTrue(warnings.contains("CPU generation (cpuid) differs: base family 25 model 17, new family 26 model 2"), "\(warnings)")
        XCTAssertFalse(warnings.contains { $0.hasPrefix("CPU differs") }, "\(warnings)")
        new.environment.cpuID = nil
        XCTAssertFalse(BenchComparison.compare(base: base, new: new, maxRegression: 0.1).warnings.contains { $0.contains("cpuid") })
        XCTAssertEqual(base.environment.cpu, "AMD EPYC (cpuid family 25 model 17)")
        XCTAssertEqual(new.environment.cpu, "AMD EPYC")
    }
}
