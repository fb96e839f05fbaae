import Foundation
import XCTest
@testable import QBRunner

/// The tests behind `ab` and `compare` against scipy 1.17 on fixed data (the Python lines
/// that produced each figure are beside it), and the gate's rules on paired rounds.
final class SignificanceTests: XCTestCase {
    func testStudentTAgainstScipy() {
        // stats.t.sf(2.5, 7), stats.t.sf(-1.3, 3), stats.t.sf(0.7, 30), stats.t.isf(0.025, 7)
        XCTAssertEqual(Significance.studentTSurvival(2.5, df: 7), 0.020496109292876444, accuracy: 1e-12)
        XCTAssertEqual(Significance.studentTSurvival(-1.3, df: 3), 0.8577662456360515, accuracy: 1e-12)
        XCTAssertEqual(Significance.studentTSurvival(0.7, df: 30), 0.24466022174983582, accuracy: 1e-12)
        XCTAssertEqual(Significance.studentTQuantileUpper(0.025, df: 7), 2.3646242515927844, accuracy: 1e-9)
    }

    func testOneSampleTAgainstScipy() throws {
        // stats.ttest_1samp(d, 0, alternative='greater')
        let d = [0.021, -0.013, 0.034, 0.008, 0.015, -0.002, 0.027, 0.011]
        let t = try XCTUnwrap(Significance.oneSampleT(d))
        XCTAssertEqual(t.t, 2.337308220189532, accuracy: 1e-10)
        XCTAssertEqual(t.p, 0.02602540658595336, accuracy: 1e-10)
        // stats.ttest_rel(np.log(b), np.log(a), alternative='greater')
        let a = [1.00, 1.02, 0.98, 1.01, 0.99, 1.03], b = [1.10, 1.13, 1.07, 1.12, 1.08, 1.15]
        let paired = try XCTUnwrap(Significance.oneSampleT(zip(a, b).map { log($1 / $0) }))
        XCTAssertEqual(paired.t, 25.878629744058696, accuracy: 1e-8)
        XCTAssertEqual(paired.p, 8.047192482177217e-07, accuracy: 1e-12)
        // Degenerate inputs never pass silently.
        XCTAssertNil(Significance.oneSampleT([0.1]))
        XCTAssertNil(Significance.oneSampleT([0.1, .nan, 0.2]))
        XCTAssertNil(Significance.oneSampleT([0.1, .infinity]))
        XCTAssertEqual(Significance.oneSampleT([0.2, 0.2, 0.2])?.p, 0)
        XCTAssertEqual(Significance.oneSampleT([0, 0, 0])?.p, 1)
    }

    func testMannWhitneyAgainstScipy() throws {
        // stats.mannwhitneyu(x, y, alternative='greater', method='exact')
        let x = [3.1, 2.9, 3.5, 3.8, 3.3, 3.6, 3.4], y = [2.8, 2.7, 3.0, 3.2, 2.6, 2.95]
        XCTAssertEqual(try XCTUnwrap(Significance.mannWhitneyGreater(x, y)), 0.006993006993006993, accuracy: 1e-12)
        // method='asymptotic', use_continuity=True (the samples have ties)
        let x2: [Double] = [1, 2, 2, 3, 4, 4, 4, 5, 6], y2: [Double] = [0, 1, 1, 2, 2, 3, 3, 3]
        XCTAssertEqual(try XCTUnwrap(Significance.mannWhitneyGreater(x2, y2)), 0.025091894207914193, accuracy: 1e-12)
        XCTAssertNil(Significance.mannWhitneyGreater([], [1]))
        XCTAssertNil(Significance.mannWhitneyGreater([1, .nan], [1]))
    }

    func testHolm() {
        // Holm (1979) step-down; statsmodels' multipletests(p, method='holm') gives the same.
        let adjusted = Significance.holm([0.01, 0.04, 0.03, 0.005, 0.2])
        for (a, e) in zip(adjusted, [0.04, 0.09, 0.09, 0.025, 0.2]) { XCTAssertEqual(a, e, accuracy: 1e-12) }
        XCTAssertTrue(Significance.holm([0.01, .nan])[1].isNaN)
        XCTAssertEqual(Significance.holm([0.01, .nan])[0], 0.01, accuracy: 1e-15, "NaN is not counted in the family")
    }

    /// Per-round values with a fixed ±1% wobble shared by both sides (the machine's drift)
    /// plus a little independent noise.
    static func rounds(_ center: Double, factor: Double = 1, n: Int = 8, noiseSeed: Int = 0) -> [Double?] {
        let drift: [Double] = [0, 0.02, -0.015, 0.03, -0.01, 0.025, -0.02, 0.005, 0.012, -0.007]
        let noise: [Double] = [0.002, -0.003, 0.001, -0.001, 0.003, -0.002, 0.0, 0.001, -0.002, 0.002]
        return (0..<n).map { center * factor * (1 + drift[$0 % drift.count]) * (1 + noise[($0 + noiseSeed) % noise.count]) }
    }

    func testPairedGateFlagsOnlyLargeSignificantChanges() {
        let policy = GatePolicy()
        // 15% slower tokens/s on one case, 3% on another, nothing on a third: Holm over all.
        var rows = [
            RegressionGate.paired(caseID: "pp", metric: .tokensPerSecond, base: Self.rounds(100), new: Self.rounds(100, factor: 1 / 1.15, noiseSeed: 3)),
            RegressionGate.paired(caseID: "tg", metric: .tokensPerSecond, base: Self.rounds(50), new: Self.rounds(50, factor: 1 / 1.03, noiseSeed: 5)),
            RegressionGate.paired(caseID: "x", metric: .cpuSeconds, base: Self.rounds(0.2), new: Self.rounds(0.2, noiseSeed: 7)),
            RegressionGate.paired(
                caseID: "pp", metric: .heap, base: [100, 100, 100].map { $0 * 1_048_576 }, new: [102, 102, 102].map { $0 * 1_048_576 }),
        ]
        rows = RegressionGate.decide(rows, policy: policy)
        XCTAssertEqual(rows.map(\.verdict), [.regression, .unchanged, .unchanged, .unchanged], "\(rows.map { ($0.label, $0.change, $0.pHolm ?? -1) })")
        XCTAssertEqual(rows[0].change, 0.15, accuracy: 0.005)
        XCTAssertEqual(rows[0].interval.ratio, 1 / 1.15, accuracy: 0.005)
        XCTAssertLessThan(rows[1].p ?? 1, 0.05, "3% is significant with these tight rounds, yet below the 10% threshold")
        XCTAssertEqual(rows[3].bytesChange ?? 0, 2 * 1_048_576, accuracy: 1)
    }

    func testWallTimeGatesOnlyWhenTheCaseCPUTimeAgrees() {
        let policy = GatePolicy()
        // 20% slower wall clock on both cases; case "busy" did the same CPU work (a busy
        // machine), case "slow" did 20% more (the engine).
        let rows = RegressionGate.decide([
            RegressionGate.paired(caseID: "busy", metric: .tokensPerSecond, base: Self.rounds(100), new: Self.rounds(100, factor: 1 / 1.2, noiseSeed: 3)),
            RegressionGate.paired(caseID: "busy", metric: .cpuSeconds, base: Self.rounds(0.2), new: Self.rounds(0.2, factor: 1.01, noiseSeed: 4)),
            RegressionGate.paired(caseID: "slow", metric: .tokensPerSecond, base: Self.rounds(100), new: Self.rounds(100, factor: 1 / 1.2, noiseSeed: 5)),
            RegressionGate.paired(caseID: "slow", metric: .cpuSeconds, base: Self.rounds(0.2), new: Self.rounds(0.2, factor: 1.2, noiseSeed: 6)),
        ], policy: policy)
        XCTAssertEqual(rows.map(\.verdict), [.possibleRegression, .unchanged, .regression, .regression], "\(rows.map { ($0.label, $0.change, $0.pHolm ?? -1) })")
        XCTAssertTrue(rows[0].detail?.contains("wall time only") == true, rows[0].detail ?? "no detail")
    }

    func testAChangeOfTheThresholdsSizeGatesAndOneWellUnderItDoesNot() {
        // Measured on the CI suite with a quiet machine: a 10% slower pp64 estimated at 9.8-10.2%,
        // the pool's second thread idle during the extra work, so CPU time grew about 6%.
        let policy = GatePolicy()
        for (wall, cpu) in [(1.098, 1.06), (1.10, 1.066), (1.102, 1.05)] {
            let rows = RegressionGate.decide([
                RegressionGate.paired(caseID: "pp", metric: .tokensPerSecond, base: Self.rounds(100, n: 12), new: Self.rounds(100, factor: 1 / wall, n: 12, noiseSeed: 3)),
                RegressionGate.paired(caseID: "pp", metric: .cpuSeconds, base: Self.rounds(0.05, n: 12), new: Self.rounds(0.05, factor: cpu, n: 12, noiseSeed: 4)),
            ], policy: policy)
            XCTAssertEqual(rows[0].verdict, .regression, "wall \(wall): \(rows.map { ($0.label, $0.change, $0.interval.low, $0.interval.high, $0.pHolm ?? -1) })")
            XCTAssertLessThan(rows[0].change, 0.105)
        }
        // 3% slower, tight rounds: significant, yet its interval stays under 10%.
        let small = RegressionGate.decide([
            RegressionGate.paired(caseID: "pp", metric: .tokensPerSecond, base: Self.rounds(100, n: 12), new: Self.rounds(100, factor: 1 / 1.03, n: 12, noiseSeed: 3)),
            RegressionGate.paired(caseID: "pp", metric: .cpuSeconds, base: Self.rounds(0.05, n: 12), new: Self.rounds(0.05, factor: 1.03, n: 12, noiseSeed: 4)),
        ], policy: policy)
        XCTAssertEqual(small.map(\.verdict), [.unchanged, .unchanged], "\(small.map { ($0.label, $0.change, $0.pHolm ?? -1) })")
        XCTAssertLessThan(small[0].pHolm ?? 1, 0.05)
    }

    func testLargeNeedsTwoThirdsOfTheThresholdAndAnIntervalReachingIt() {
        func row(_ change: Double, low: Double, high: Double, metric: Metric = .tokensPerSecond) -> GateRow {
            var r = RegressionGate.paired(caseID: "c", metric: metric, base: [1, 1], new: [1, 1])
            r.change = change
            r.interval = .init(ratio: 1 / (1 + change), low: low, high: high, level: 0.95)
            return r
        }
        // t/s: worse means a ratio below 1; the interval's low end is the worst case.
        XCTAssertTrue(RegressionGate.reachesThreshold(row(0.07, low: 1 / 1.12, high: 1 / 1.02), metric: .tokensPerSecond, threshold: 0.1))
        XCTAssertFalse(RegressionGate.reachesThreshold(row(0.07, low: 1 / 1.09, high: 1 / 1.05), metric: .tokensPerSecond, threshold: 0.1))
        XCTAssertFalse(RegressionGate.reachesThreshold(row(0.06, low: 1 / 1.3, high: 1 / 0.9), metric: .tokensPerSecond, threshold: 0.1), "under two thirds")
        XCTAssertTrue(RegressionGate.reachesThreshold(row(0.11, low: 1 / 1.12, high: 1 / 1.105), metric: .tokensPerSecond, threshold: 0.1))
        // Seconds: worse means a ratio above 1; the high end is the worst case.
        XCTAssertTrue(RegressionGate.reachesThreshold(row(0.07, low: 1.02, high: 1.11, metric: .cpuSeconds), metric: .cpuSeconds, threshold: 0.1))
        XCTAssertFalse(RegressionGate.reachesThreshold(row(0.06, low: 1.05, high: 1.07, metric: .cpuSeconds), metric: .cpuSeconds, threshold: 0.1))
        // To gate, the interval must also exclude a third of the threshold. The busy-machine
        // rows of the ab series: a same-binary run 8.2% [2.2%, 16.1%] worse in CPU time, a 3%
        // slowdown 10.4% [3.0%, 18.9%] worse in speed; a 10% one 11.2% [6.3%, 17.2%].
        XCTAssertFalse(RegressionGate.clearOfNoise(row(0.082, low: 1.022, high: 1.161, metric: .cpuSeconds), metric: .cpuSeconds, threshold: 0.1))
        XCTAssertFalse(RegressionGate.clearOfNoise(row(0.104, low: 0.841, high: 0.971), metric: .tokensPerSecond, threshold: 0.1))
        XCTAssertTrue(RegressionGate.clearOfNoise(row(0.112, low: 1.063, high: 1.172, metric: .cpuSeconds), metric: .cpuSeconds, threshold: 0.1))
        XCTAssertTrue(RegressionGate.clearOfNoise(row(0.07, low: 1 / 1.12, high: 1 / 1.04), metric: .tokensPerSecond, threshold: 0.1))
        XCTAssertTrue(RegressionGate.clearOfNoise(row(0.12, low: .nan, high: .nan), metric: .tokensPerSecond, threshold: 0.1))
        var wide = RegressionGate.paired(caseID: "c", metric: .cpuSeconds, base: [1, 1], new: [1, 1])
        (wide.change, wide.p, wide.pHolm) = (0.082, 0.0044, 0.0349)
        wide.interval = .init(ratio: 1.082, low: 1.022, high: 1.161, level: 0.95)
        XCTAssertEqual(RegressionGate.verdict(wide, policy: GatePolicy()), .possibleRegression, "significant and large, not clear of noise")
        wide.interval = .init(ratio: 1.082, low: 1.04, high: 1.161, level: 0.95)
        XCTAssertEqual(RegressionGate.verdict(wide, policy: GatePolicy()), .regression)
        // No interval: the point estimate alone.
        XCTAssertTrue(RegressionGate.reachesThreshold(row(0.12, low: .nan, high: .nan), metric: .tokensPerSecond, threshold: 0.1))
        XCTAssertFalse(RegressionGate.reachesThreshold(row(0.08, low: .nan, high: .nan), metric: .tokensPerSecond, threshold: 0.1))
        XCTAssertFalse(RegressionGate.reachesThreshold(row(.nan, low: 0.5, high: 0.6), metric: .tokensPerSecond, threshold: 0.1))
    }

    func testPairedRowsWithBadValuesAreInvalid() {
        let cases: [([Double?], [Double?], String)] = [
            ([1, 2, 3], [1, nil, 3], "missing in round 2 of the candidate"),
            ([1, .nan, 3], [1, 2, 3], "nan in round 2 of the baseline"),
            ([1, 2, 3], [1, 2, .infinity], "inf in round 3 of the candidate"),
            ([1], [1], "1 paired round; a test needs 2"),
            ([], [], "0 paired rounds; a test needs 2"),
            ([1, 0, 1], [1, 1, 1], "0.0 in round 2 of the baseline"),
        ]
        for (a, b, detail) in cases {
            let row = RegressionGate.decide([RegressionGate.paired(caseID: "c", metric: .tokensPerSecond, base: a, new: b)], policy: GatePolicy())[0]
            XCTAssertEqual(row.verdict, .invalid, detail)
            XCTAssertTrue(row.detail?.contains(detail) == true, "\(row.detail ?? "nil") should say \(detail)")
            let report = GateReport(title: "t", method: "m", policy: GatePolicy(), rows: [row], checks: [], failures: [], warnings: [], notes: [])
            XCTAssertEqual(report.status, .failed)
        }
        let empty = GateReport(title: "t", method: "m", policy: GatePolicy(), rows: [], checks: [], failures: [], warnings: [], notes: [])
        XCTAssertEqual(empty.status, .failed, "nothing measured never passes")
    }

    func testMarkdownIsShortAndFoldsTheTable() {
        var rows = (0..<20).map { i in
            RegressionGate.paired(caseID: "case\(i)", metric: .tokensPerSecond, base: Self.rounds(100), new: Self.rounds(100, noiseSeed: i))
        }
        rows.append(RegressionGate.paired(caseID: "slow", metric: .tokensPerSecond, base: Self.rounds(100, n: 10), new: Self.rounds(100, factor: 0.5, n: 10)))
        rows = RegressionGate.decide(rows, policy: GatePolicy())
        let report = GateReport(title: "QuantBench A/B", method: "m", policy: GatePolicy(), rows: rows, checks: [], failures: [], warnings: [], notes: [])
        XCTAssertEqual(report.status, .regression)
        let md = report.markdown()
        let beforeDetails = md.components(separatedBy: "<details>")[0]
        XCTAssertEqual(beforeDetails.components(separatedBy: "\n").filter { $0.hasPrefix("- ") }.count, 1, md)
        XCTAssertTrue(beforeDetails.contains("**REGRESSION** slow t/s: 100.0% worse"), md)
        XCTAssertTrue(md.contains("</details>"))
        XCTAssertTrue(md.hasPrefix("## QuantBench A/B: 1 regression (exit 1)"), md)
    }

    func testSummaryGoesToGitHubStepSummary() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-summary-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let step = dir.appendingPathComponent("step.md")
        try Data("earlier step\n".utf8).write(to: step)
        let report = GateReport(title: "T", method: "m", policy: GatePolicy(), rows: [], checks: [], failures: ["x failed"], warnings: [], notes: [])
        try report.writeSummary(to: dir.appendingPathComponent("summary.md").path, environment: ["GITHUB_STEP_SUMMARY": step.path])
        let appended = try String(contentsOf: step, encoding: .utf8)
        XCTAssertTrue(appended.hasPrefix("earlier step\n## T: FAILED"), appended)
        XCTAssertEqual(try String(contentsOf: dir.appendingPathComponent("summary.md"), encoding: .utf8), report.markdown())
    }
}

extension SignificanceTests {
    func testWilcoxonAgainstScipy() throws {
        // stats.wilcoxon(d, alternative='greater') (exact: no ties, no zeros)
        let d = [0.021, -0.013, 0.034, 0.008, 0.015, -0.002, 0.027, 0.011]
        let w = try XCTUnwrap(Significance.wilcoxonGreater(d))
        XCTAssertEqual(w.statistic, 31)
        XCTAssertEqual(w.p, 0.0390625, accuracy: 1e-15)
        // np.median of the Walsh averages
        XCTAssertEqual(w.estimate, 0.012750000000000001, accuracy: 1e-15)
        XCTAssertLessThanOrEqual(w.low, w.estimate)
        XCTAssertGreaterThanOrEqual(w.high, w.estimate)
        // stats.wilcoxon(d2, alternative='greater', method='approx'): a zero and ties
        let d2 = [0.02, 0.02, -0.01, 0.03, 0.0, 0.05, -0.01, 0.04, 0.02, 0.06]
        let w2 = try XCTUnwrap(Significance.wilcoxonGreater(d2))
        XCTAssertEqual(w2.statistic, 42)
        XCTAssertEqual(w2.n, 9)
        XCTAssertEqual(w2.p, 0.010160703864187824, accuracy: 1e-12)
        // The floor: 8 positive differences give exactly 2⁻⁸.
        XCTAssertEqual(Significance.wilcoxonGreater((1...8).map { Double($0) })?.p, 1.0 / 256)
        XCTAssertEqual(Significance.wilcoxonGreater([0, 0, 0])?.p, 1)
        XCTAssertNil(Significance.wilcoxonGreater([]))
        XCTAssertNil(Significance.wilcoxonGreater([1, .nan]))
    }

    /// `ab` adds rounds while a row is open: its interval still reaches the threshold and it
    /// does not gate. Wide rounds leave a same-binary row open; tight ones close it, as does
    /// a clear regression; memory rows never hold a run open.
    func testUnsettledRowsAreThoseWhoseIntervalStillReachesTheThreshold() {
        let policy = GatePolicy()
        // A noisy machine: ±12% independent of the side, 8 rounds.
        let wild: [Double?] = [1.12, 0.9, 1.08, 0.88, 1.1, 0.95, 1.05, 0.92].map { 100 * $0 }
        let rows = RegressionGate.decide([
            RegressionGate.paired(caseID: "noisy", metric: .tokensPerSecond, base: Self.rounds(100), new: wild),
            RegressionGate.paired(caseID: "same", metric: .tokensPerSecond, base: Self.rounds(100), new: Self.rounds(100, noiseSeed: 3)),
            RegressionGate.paired(caseID: "slow", metric: .tokensPerSecond, base: Self.rounds(100, n: 10), new: Self.rounds(100, factor: 1 / 1.25, n: 10, noiseSeed: 5)),
            RegressionGate.paired(caseID: "small", metric: .cpuSeconds, base: Self.rounds(0.2), new: Self.rounds(0.2, factor: 1.03, noiseSeed: 7)),
            RegressionGate.paired(caseID: "heap", metric: .heap, base: [100, 100, 100].map { $0 * 1_048_576 }, new: [90, 200, 100].map { $0 * 1_048_576 }),
        ], policy: policy)
        XCTAssertEqual(rows.map(\.verdict), [.unchanged, .unchanged, .regression, .unchanged, .possibleRegression],
            "\(rows.map { ($0.label, $0.change, $0.interval.low, $0.interval.high, $0.pHolm ?? -1) })")
        XCTAssertEqual(rows.map { RegressionGate.unsettled($0, policy: policy) }, [true, false, false, false, false],
            "\(rows.map { ($0.label, $0.interval.low, $0.interval.high) })")
        // The same rows against a 30% threshold: the noisy one's interval no longer reaches it.
        let lax = GatePolicy(timeThreshold: 0.3)
        XCTAssertFalse(RegressionGate.unsettled(RegressionGate.decide([rows[0]], policy: lax)[0], policy: lax))
        // A wall-time row that CPU time does not corroborate is settled too: more rounds cannot
        // make it gate while its case's CPU time stays put.
        let busy = RegressionGate.decide([
            RegressionGate.paired(caseID: "busy", metric: .tokensPerSecond, base: Self.rounds(100), new: Self.rounds(100, factor: 1 / 1.2, noiseSeed: 3)),
            RegressionGate.paired(caseID: "busy", metric: .cpuSeconds, base: Self.rounds(0.2), new: Self.rounds(0.2, factor: 1.01, noiseSeed: 4)),
        ], policy: policy)
        XCTAssertEqual(busy[0].verdict, .possibleRegression)
        XCTAssertFalse(RegressionGate.unsettled(busy[0], policy: policy))
    }
}
