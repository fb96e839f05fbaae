import Foundation
import XCTest
import QBSupport
import QBTestSupport
@testable import QBRunner

/// `LlamaKLDivergence`/`ReferenceStatistics`, the one implementation of llama-perplexity's
/// `--kl-divergence` statistics behind `eval --kl-base` and `eval --models/--reference`:
/// a small case worked by hand with perplexity.cpp's formulas, and a seeded random case
/// against the textbook forms they equal (sample sd/√n, numpy's linear percentile, the
/// paired ΔNLL error).
final class KLStatisticsTests: XCTestCase {
    /// 12 positions (more than perplexity.cpp's 10, below which it reports no errors):
    /// KL_i = i/100, Δp_i = (i − 6.5)/100, NLL_base,i = 1 + i/10, NLL_i = NLL_base,i + 0.01 ±
    /// 0.005 (+ for even i), the top id the same at 9 of them. Added in a seeded order: the
    /// statistics do not depend on it.
    func testTwelvePositionsWorkedByHand() {
        var rng = SeededGenerator(for: "KLStatisticsTests.testTwelvePositionsWorkedByHand")
        var k = LlamaKLDivergence()
        for i in Array(1...12).shuffled(using: &rng) {
            let base = 1 + Double(i) / 10
            k.add(kl: Double(i) / 100, nll: base + 0.01 + (i % 2 == 0 ? 0.005 : -0.005), nllBase: base,
                  pDiff: Float(i) / 100 - 0.065, sameTop: i > 3)
        }
        let s = k.statistics
        XCTAssertEqual(s.positions, 12)
        let kl = s.klDivergence
        XCTAssertEqual(kl.mean, 0.065, accuracy: 1e-12)
        // sqrt((E[x²] − E[x]²)/(n − 1)) = sqrt((143/12)·1e-4 / 11).
        XCTAssertEqual(kl.standardError, 0.010408329997330663, accuracy: 1e-9)
        // Even count: the mean of the two middle values.
        XCTAssertEqual(kl.median, 0.065, accuracy: 1e-6)
        XCTAssertEqual(kl.minimum, 0.01, accuracy: 1e-7)
        XCTAssertEqual(kl.maximum, 0.12, accuracy: 1e-7)
        // Position f·(n − 1), linear between neighbours: p90 at 9.9 → 0.1·0.10 + 0.9·0.11
        // (a nearest-rank percentile would give 0.11), p10 at 1.1 → 0.9·0.02 + 0.1·0.03.
        for (got, want) in [(kl.p001, 0.01011), (kl.p01, 0.0111), (kl.p05, 0.0155), (kl.p10, 0.021),
                            (kl.p90, 0.109), (kl.p95, 0.1145), (kl.p99, 0.1189), (kl.p999, 0.11989)] {
            XCTAssertEqual(got, want, accuracy: 1e-6)
        }
        let dp = s.deltaP
        XCTAssertEqual(dp.mean, 0, accuracy: 1e-8)
        XCTAssertEqual(dp.standardError, 0.010408329997330663, accuracy: 1e-8)
        XCTAssertEqual(dp.median, 0, accuracy: 1e-7)
        XCTAssertEqual(dp.p01, -0.0539, accuracy: 1e-6)
        XCTAssertEqual(dp.p10, -0.044, accuracy: 1e-6)
        XCTAssertEqual(dp.p90, 0.044, accuracy: 1e-6)
        // RMS = sqrt(143/12)/100; its error 0.5/RMS × the error of the mean square.
        XCTAssertEqual(s.rmsDeltaP, 0.03452052529534663, accuracy: 1e-8)
        XCTAssertEqual(s.rmsDeltaPStandardError, 0.0046056618647183824, accuracy: 1e-8)
        // 9 of 12, binomial error with n − 1: sqrt(0.75·0.25/11).
        XCTAssertEqual(s.sameTopP, 0.75)
        XCTAssertEqual(s.sameTopPStandardError, 0.13055824196677338, accuracy: 1e-12)
        // ln ratio = mean ΔNLL = 0.01; its error sqrt(se_Q² + se_base² − 2 cov) is the paired
        // sqrt(0.005²/11); the ratio's is exp(0.01) times it.
        XCTAssertEqual(s.perplexityRatio, 1.010050167084168, accuracy: 1e-9)
        XCTAssertEqual(s.perplexityRatioStandardError, 0.0015227079198427112, accuracy: 1e-9)
        XCTAssertEqual(k.sameTop, 9)
        XCTAssertEqual(k.maxPDiff, 0.055, accuracy: 1e-7)
    }

    /// perplexity.cpp's median and percentile on their own: odd and even counts, the ends,
    /// and no values (0, where it prints nothing).
    func testMedianAndPercentileEnds() {
        XCTAssertEqual(LlamaKLDivergence.median([1, 2, 3]), 2)
        XCTAssertEqual(LlamaKLDivergence.median([1, 2, 3, 10]), 2.5)
        XCTAssertEqual(LlamaKLDivergence.percentile([1, 2, 3, 10], 0), 1)
        XCTAssertEqual(LlamaKLDivergence.percentile([1, 2, 3, 10], 1), 10)
        XCTAssertEqual(LlamaKLDivergence.percentile([1, 2, 3, 10], 0.5), 2.5)
        XCTAssertEqual(LlamaKLDivergence.percentile([7], 0.99), 7)
        XCTAssertEqual(LlamaKLDivergence.percentile([], 0.5), 0)
        XCTAssertEqual(LlamaKLDivergence.median([]), 0)
        // Few positions: no errors (as perplexity.cpp), and nothing non-finite in the JSON.
        var one = LlamaKLDivergence()
        one.add(kl: 0, nll: 1, nllBase: 1, pDiff: 0, sameTop: true)
        let s = one.statistics
        for v in [s.klDivergence.standardError, s.rmsDeltaP, s.rmsDeltaPStandardError, s.sameTopPStandardError, s.perplexityRatioStandardError] {
            XCTAssertEqual(v, 0)
        }
        XCTAssertEqual(s.perplexityRatio, 1)
    }

    /// 257 random positions (seed printed, QB_TEST_SEED replays it): the sums-based errors equal the sample-sd forms, the f32
    /// percentiles numpy's linear ones (to f32 precision), and the PPL-ratio error the
    /// standard error of the paired ΔNLL.
    func testRandomPositionsMatchTheTextbookForms() throws {
        var rng = SeededGenerator(for: "KLStatisticsTests.testRandomPositionsMatchTheTextbookForms")
        func unit() -> Double { Double(rng.next() >> 11) * 0x1p-53 }
        var k = LlamaKLDivergence()
        var kl: [Double] = [], dp: [Double] = [], d: [Double] = [], same = 0
        for _ in 0..<257 {
            let x = -log(1 - unit()) * 5e-3
            let p = Double(Float((unit() - 0.5) * 0.2))
            let base = 0.5 + 4 * unit()
            let nll = base + (unit() - 0.4) * 0.1
            let top = unit() < 0.9
            k.add(kl: x, nll: nll, nllBase: base, pDiff: Float(p), sameTop: top)
            kl.append(Double(Float(x))); dp.append(p); d.append(nll - base); same += top ? 1 : 0
        }
        let s = k.statistics
        let n = 257.0
        XCTAssertEqual(s.klDivergence.mean, k.meanKL.value)
        XCTAssertEqual(s.klDivergence.standardError, Statistics.standardDeviation(kl) / n.squareRoot(), accuracy: 1e-9)
        XCTAssertEqual(s.deltaP.standardError, Statistics.standardDeviation(dp) / n.squareRoot(), accuracy: 1e-9)
        for (f, got) in [(0.001, s.klDivergence.p001), (0.01, s.klDivergence.p01), (0.5, s.klDivergence.median),
                         (0.9, s.klDivergence.p90), (0.999, s.klDivergence.p999)] {
            let want = try XCTUnwrap(Quantiles.quantile(kl, f))
            XCTAssertEqual(got, want, accuracy: max(want * 1e-5, 1e-9), "KL percentile \(f)")
        }
        XCTAssertEqual(s.deltaP.p99, try XCTUnwrap(Quantiles.quantile(dp, 0.99)), accuracy: 1e-6)
        let squares = dp.map { $0 * $0 }
        let rms = (squares.reduce(0, +) / n).squareRoot()
        XCTAssertEqual(s.rmsDeltaP, rms, accuracy: 1e-12)
        XCTAssertEqual(s.rmsDeltaPStandardError, Statistics.standardDeviation(squares) / n.squareRoot() / (2 * rms), accuracy: 1e-9)
        let p = Double(same) / n
        XCTAssertEqual(s.sameTopPStandardError, (p * (1 - p) / (n - 1)).squareRoot(), accuracy: 1e-12)
        let meanD = d.reduce(0, +) / n
        XCTAssertEqual(s.perplexityRatio, exp(meanD), accuracy: 1e-12)
        XCTAssertEqual(s.perplexityRatioStandardError, exp(meanD) * Statistics.standardDeviation(d) / n.squareRoot(), accuracy: 1e-8)
    }
}
