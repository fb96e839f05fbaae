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

    func testVerdictRule() {
        func r(_ ratio: Double, _ low: Double, _ high: Double) -> Statistics.RatioInterval {
            Statistics.RatioInterval(ratio: ratio, low: low, high: high, level: 0.95)
        }
        XCTAssertEqual(BenchComparison.verdict(r(0.8, 0.75, 0.85), higherIsBetter: true, threshold: 0.1), .regression)
        XCTAssertEqual(BenchComparison.verdict(r(0.8, 0.6, 0.95), higherIsBetter: true, threshold: 0.1), .possibleRegression)
        XCTAssertEqual(BenchComparison.verdict(r(0.95, 0.9, 1.0), higherIsBetter: true, threshold: 0.1), .unchanged)
        XCTAssertEqual(BenchComparison.verdict(r(1.5, 1.2, 1.9), higherIsBetter: true, threshold: 0.1), .improvement)
        XCTAssertEqual(BenchComparison.verdict(r(1.3, 1.15, 1.4), higherIsBetter: false, threshold: 0.1), .regression)
        XCTAssertEqual(BenchComparison.verdict(r(1.3, 1.05, 1.4), higherIsBetter: false, threshold: 0.1), .possibleRegression)
        XCTAssertEqual(BenchComparison.verdict(r(0.5, 0.4, 0.6), higherIsBetter: false, threshold: 0.1), .improvement)
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
        XCTAssertTrue(md.contains("| case | metric | base | new | ratio [95% CI] | verdict |"))
        XCTAssertTrue(md.contains("report only"))
    }
}
