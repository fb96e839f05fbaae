import XCTest
import QBTestSupport
@testable import QBRunner

/// `compare` on eval results judges each figure against the combined standard error of
/// the two files: beyond 1.96 of it differs (in the figure's better or worse direction),
/// within it is the same; NaN and an empty comparison never pass.
final class EvalComparisonTests: XCTestCase {
    func row(_ base: (Double, Double), _ new: (Double, Double), lowerIsBetter: Bool? = true) -> EvalComparison.Row {
        EvalComparison.judged("s", "m", base: base, new: new, lowerIsBetter: lowerIsBetter, gates: true) { String($0) }
    }

    func testTheThresholdIsOnePointNineSixCombinedErrors() {
        var rng = SeededGenerator(for: name)
        for _ in 0..<200 {
            let value = rng.uniform() * 10, se1 = rng.uniform() * 0.1 + 1e-3, se2 = rng.uniform() * 0.1 + 1e-3
            let combined = (se1 * se1 + se2 * se2).squareRoot()
            let z = rng.uniform() * 4
            guard abs(z - 1.96) > 1e-6 else { continue }
            for sign in [1.0, -1.0] {
                let r = row((value, se1), (value + sign * z * combined, se2))
                let expected: EvalComparison.Verdict = z <= 1.96 ? .same : (sign > 0 ? .worse : .better)
                XCTAssertEqual(r.verdict, expected, "z \(z) sign \(sign)")
                // Higher is better (same top p): the direction flips; none (Δp): changed.
                let up = row((value, se1), (value + sign * z * combined, se2), lowerIsBetter: false)
                XCTAssertEqual(up.verdict, z <= 1.96 ? .same : (sign > 0 ? .better : .worse))
                let none = row((value, se1), (value + sign * z * combined, se2), lowerIsBetter: nil)
                XCTAssertEqual(none.verdict, z <= 1.96 ? .same : .changed)
            }
        }
    }

    func testNonFiniteFiguresAreInvalidAndNothingComparedFails() {
        for (b, n) in [((Double.nan, 0.1), (1.0, 0.1)), ((1.0, 0.1), (1.0, .infinity)), ((1.0, -0.1), (1.0, 0.1))] {
            XCTAssertEqual(row(b, n).verdict, .invalid)
        }
        var c = EvalComparison()
        XCTAssertEqual(c.status(reportOnly: true), 2, "no setting in common is not a pass")
        c.rows = [row((1, 0.1), (1.05, 0.1)), row((1, 0.01), (2, 0.01))]
        XCTAssertEqual(c.regressions.count, 1)
        XCTAssertEqual(c.status(reportOnly: false), 1)
        XCTAssertEqual(c.status(reportOnly: true), 0)
        c.rows.append(row((.nan, 0), (1, 0)))
        XCTAssertEqual(c.status(reportOnly: true), 2, "a NaN fails even with --report-only")
    }
}
