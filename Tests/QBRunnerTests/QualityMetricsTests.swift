import XCTest
@testable import QBRunner

final class QualityMetricsTests: XCTestCase {
    func testKLDivergenceOfKnownDistributions() {
        // p = (1/2, 1/2), q = (1/4, 3/4): KL = 1/2 ln 2 + 1/2 ln(2/3).
        let p: [Float] = [0, 0], q: [Float] = [0, Float(log(3.0))]
        XCTAssertEqual(QualityMetrics.klDivergence(reference: p[...], candidate: q[...]), 0.5 * log(2) + 0.5 * log(2.0 / 3), accuracy: 1e-6)
        XCTAssertEqual(QualityMetrics.klDivergence(reference: q[...], candidate: q[...]), 0, accuracy: 1e-12)
        let c = QualityMetrics.compare(reference: p + q, candidate: p + p, vocab: 2)
        XCTAssertEqual(c.positions, 2)
        XCTAssertEqual(c.top1Agreement, 0.5)
        XCTAssertEqual(QualityMetrics.negativeLogLikelihoods(logits: p, targets: [1], vocab: 2)[0], log(2), accuracy: 1e-9)
    }
}
