import Foundation
import XCTest
@testable import QBRunner

/// Order statistics, percentiles, the median interval and the bootstrap, on samples whose
/// answers are known by hand.
final class StatisticsTests: XCTestCase {
    func testBinomialCDF() {
        XCTAssertEqual(Statistics.binomialHalfCDF(0, n: 5), 1.0 / 32, accuracy: 1e-15)
        XCTAssertEqual(Statistics.binomialHalfCDF(1, n: 10), 11.0 / 1024, accuracy: 1e-15)
        XCTAssertEqual(Statistics.binomialHalfCDF(5, n: 10), 638.0 / 1024, accuracy: 1e-15)
        XCTAssertEqual(Statistics.binomialHalfCDF(10, n: 10), 1)
        XCTAssertEqual(Statistics.binomialHalfCDF(-1, n: 10), 0)
    }

    func testMedianIntervalFromOrderStatistics() throws {
        // n = 10: k = 2 gives 1 − 2·11/1024 = 97.85% ≥ 95%; k = 3 gives 1 − 2·56/1024 = 89.1%.
        let ten: [Double] = [7, 1, 9, 3, 5, 2, 10, 4, 8, 6]
        let e = try XCTUnwrap(Estimate(ten))
        XCTAssertEqual(e.median, 5.5)
        XCTAssertEqual(e.low, 2)
        XCTAssertEqual(e.high, 9)
        XCTAssertEqual(e.confidence, 1 - 2 * 11.0 / 1024, accuracy: 1e-12)
        XCTAssertEqual(e.mean, 5.5)
        XCTAssertEqual(e.standardDeviation, (110.0 / 12).squareRoot(), accuracy: 1e-12)
        XCTAssertEqual(e.samples, ten, "samples kept in measurement order")

        // n = 5: no rank reaches 95%; [min, max] covers 1 − 2/32 = 93.75%.
        let five = try XCTUnwrap(Estimate([3, 1, 4, 1, 5]))
        XCTAssertEqual(five.median, 3)
        XCTAssertEqual(five.low, 1)
        XCTAssertEqual(five.high, 5)
        XCTAssertEqual(five.confidence, 0.9375)

        // n = 20: k = 6 (coverage 95.86%); k = 7 would be 88.5%.
        let twenty = (1...20).map(Double.init)
        let t = try XCTUnwrap(Estimate(twenty.reversed()))
        XCTAssertEqual(t.low, 6)
        XCTAssertEqual(t.high, 15)
        XCTAssertEqual(t.confidence, 0.9586105, accuracy: 1e-6)

        let one = try XCTUnwrap(Estimate([2.5]))
        XCTAssertEqual(one.median, 2.5)
        XCTAssertEqual(one.confidence, 0)
        XCTAssertEqual(one.standardDeviation, 0)
        XCTAssertNil(Estimate([]))
        XCTAssertNil(Estimate([.nan, .infinity]))
        XCTAssertEqual(Estimate([1, .nan, 3])?.count, 2, "non-finite samples are dropped")
    }

    func testPercentilesInterpolateLikeNumpy() {
        let v: [Double] = [1, 2, 3, 4, 5]
        XCTAssertEqual(Statistics.percentile(v, 50), 3)
        XCTAssertEqual(Statistics.percentile(v, 90)!, 4.6, accuracy: 1e-12)
        XCTAssertEqual(Statistics.percentile(v, 99)!, 4.96, accuracy: 1e-12)
        XCTAssertEqual(Statistics.percentile(v, 0), 1)
        XCTAssertEqual(Statistics.percentile(v, 100), 5)
        XCTAssertEqual(Statistics.percentile([7], 99), 7)
        XCTAssertNil(Statistics.percentile([], 50))
    }

    func testBootstrapRatioIsSeededAndBracketsTheRatio() throws {
        let base: [Double] = [100, 102, 98, 101, 99, 100, 103, 97]
        let new = base.map { $0 * 0.8 }
        let a = try XCTUnwrap(Statistics.medianRatio(base: base, new: new, seed: 7))
        let b = try XCTUnwrap(Statistics.medianRatio(base: base, new: new, seed: 7))
        XCTAssertEqual(a, b, "the same seed gives the same interval")
        XCTAssertEqual(a.ratio, 0.8, accuracy: 1e-12)
        XCTAssertLessThanOrEqual(a.low, a.ratio)
        XCTAssertGreaterThanOrEqual(a.high, a.ratio)
        XCTAssertGreaterThan(a.low, 0.7)
        XCTAssertLessThan(a.high, 0.9)
        XCTAssertNil(Statistics.medianRatio(base: [0, 0], new: [1], seed: 1), "no ratio against zero")
    }

    func testXXH64MatchesReferenceVectors() {
        // From the reference implementation (python-xxhash).
        XCTAssertEqual(XXH64.hex(Data()), "ef46db3751d8e999")
        XCTAssertEqual(XXH64.hex(Data("a".utf8)), "d24ec4f1a98c6e5b")
        XCTAssertEqual(XXH64.hex(Data("abc".utf8)), "44bc2cf5ad770999")
        XCTAssertEqual(XXH64.hex(Data(String(repeating: "0123456789", count: 10).utf8)), "f80e7b96315afffa")
        let bytes = Data((0..<768).map { UInt8($0 % 256) })
        XCTAssertEqual(XXH64.hex(bytes), "8e03c838c596036f")
        // Fed in odd-sized pieces, the streaming hash is the same.
        var h = XXH64()
        var i = 0
        for size in [1, 7, 31, 33, 64, 5, 627] {
            h.update(bytes[i..<(i + size)])
            i += size
        }
        XCTAssertEqual(i, 768)
        XCTAssertEqual(XXH64.hex(h.finalize()), "8e03c838c596036f")
    }
}
