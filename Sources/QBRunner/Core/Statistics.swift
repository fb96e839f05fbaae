import Foundation
import QBModel
import QBSupport

/// A metric measured over repetitions: the median with a distribution-free confidence
/// interval, plus the mean and standard deviation (the figures llama-bench prints).
///
/// The interval comes from order statistics: for n samples sorted x₁ ≤ … ≤ xₙ, the
/// interval [x_k, x_{n+1−k}] contains the population median with probability
/// 1 − 2·P(Binomial(n, ½) < k), whatever the distribution. `k` is the largest rank whose
/// coverage is still at least the level asked for (95%). Below six samples no rank reaches
/// 95%; the interval is then [min, max] and `confidence` says what it actually covers
/// (93.75% for 5 samples, 87.5% for 4, 75% for 3, 0 for 1).
public struct Estimate: Sendable, Codable, Equatable {
    public var median: Double
    public var low: Double
    public var high: Double
    /// The interval's actual coverage of the median (0 when n < 2).
    public var confidence: Double
    public var mean: Double
    /// Sample standard deviation (n − 1 in the denominator; 0 when n < 2).
    public var standardDeviation: Double
    public var count: Int
    /// The samples, in the order they were measured.
    public var samples: [Double]

    enum CodingKeys: String, CodingKey {
        case median, low = "ci_low", high = "ci_high", confidence, mean, standardDeviation = "sd", count = "n", samples
    }

    /// The estimate of `samples`; nil when there are none. Non-finite samples are dropped
    /// (a run that measured nothing must not poison the median).
    public init?(_ samples: [Double], level: Double = 0.95) {
        let finite = samples.filter(\.isFinite)
        guard !finite.isEmpty else { return nil }
        let sorted = finite.sorted()
        let n = sorted.count
        self.samples = finite
        count = n
        median = Statistics.median(sorted: sorted)
        let (k, coverage) = Statistics.medianRank(count: n, level: level)
        low = sorted[k - 1]
        high = sorted[n - k]
        confidence = coverage
        mean = finite.reduce(0, +) / Double(n)
        standardDeviation = Statistics.standardDeviation(finite)
    }

    public init(
        median: Double, low: Double, high: Double, confidence: Double, mean: Double, standardDeviation: Double,
        count: Int, samples: [Double]
    ) {
        self.median = median
        self.low = low
        self.high = high
        self.confidence = confidence
        self.mean = mean
        self.standardDeviation = standardDeviation
        self.count = count
        self.samples = samples
    }
}

/// Order statistics, percentiles and the bootstrap used by reports and `compare`.
public enum Statistics {
    public static func median(_ values: [Double]) -> Double? { Quantiles.median(values) }

    static func median(sorted s: [Double]) -> Double { Quantiles.median(sorted: s) }

    /// Sample standard deviation (0 for fewer than two values).
    public static func standardDeviation(_ values: [Double]) -> Double {
        let n = values.count
        guard n > 1 else { return 0 }
        let mean = values.reduce(0, +) / Double(n)
        let ss = values.reduce(0) { $0 + ($1 - mean) * ($1 - mean) }
        return (ss / Double(n - 1)).squareRoot()
    }

    /// The p-th percentile (p in [0, 100]) by linear interpolation between closest ranks
    /// (numpy's default, "linear"); nil for no values.
    public static func percentile(_ values: [Double], _ p: Double) -> Double? { Quantiles.quantile(values, p / 100) }

    /// P(Binomial(n, ½) ≤ k), exactly (n is small; the sum is in Double).
    public static func binomialHalfCDF(_ k: Int, n: Int) -> Double {
        guard k >= 0 else { return 0 }
        guard k < n else { return 1 }
        var term = pow(0.5, Double(n))  // C(n, 0) / 2ⁿ
        var sum = term
        if k == 0 { return sum }
        for i in 1...k {
            term *= Double(n - i + 1) / Double(i)
            sum += term
        }
        return min(sum, 1)
    }

    /// The rank k (1-based) of the lower end of the median's interval [x_k, x_{n+1−k}] and
    /// the interval's coverage: the largest k with coverage ≥ `level`, else k = 1.
    public static func medianRank(count n: Int, level: Double) -> (rank: Int, coverage: Double) {
        guard n >= 2 else { return (1, 0) }
        func coverage(_ k: Int) -> Double { 1 - 2 * binomialHalfCDF(k - 1, n: n) }
        var k = 1
        while k + 1 <= (n + 1) / 2 && coverage(k + 1) >= level { k += 1 }
        return (k, coverage(k))
    }

    /// A ratio of two medians with a confidence interval.
    public struct RatioInterval: Sendable, Codable, Equatable {
        public var ratio: Double
        public var low: Double
        public var high: Double
        public var level: Double
        enum CodingKeys: String, CodingKey { case ratio, low = "ci_low", high = "ci_high", level }
    }

    /// median(new) / median(base) with a percentile-bootstrap interval: both samples are
    /// resampled with replacement `resamples` times and the ratio of the resampled medians
    /// recorded; the interval is the (1 − level)/2 and (1 + level)/2 quantiles of those
    /// ratios. The generator is seeded, so the same files always give the same interval.
    /// Nil when either side has no positive median.
    public static func medianRatio(
        base: [Double], new: [Double], level: Double = 0.95, resamples: Int = 2000, seed: UInt64
    ) -> RatioInterval? {
        let b = base.filter(\.isFinite), n = new.filter(\.isFinite)
        guard let mb = median(b), let mn = median(n), mb > 0, mn >= 0 else { return nil }
        var rng = SplitMix64(seed: seed)
        var ratios: [Double] = []
        ratios.reserveCapacity(resamples)
        var rb = [Double](repeating: 0, count: b.count), rn = [Double](repeating: 0, count: n.count)
        for _ in 0..<resamples {
            for i in rb.indices { rb[i] = b[Int(rng.next() % UInt64(b.count))] }
            for i in rn.indices { rn[i] = n[Int(rng.next() % UInt64(n.count))] }
            rb.sort()
            rn.sort()
            let denominator = median(sorted: rb)
            guard denominator > 0 else { continue }
            ratios.append(median(sorted: rn) / denominator)
        }
        let ratio = mn / mb
        guard !ratios.isEmpty else { return RatioInterval(ratio: ratio, low: ratio, high: ratio, level: level) }
        let alpha = (1 - level) / 2
        return RatioInterval(
            ratio: ratio, low: percentile(ratios, 100 * alpha) ?? ratio,
            high: percentile(ratios, 100 * (1 - alpha)) ?? ratio, level: level)
    }

    /// A stable seed for a metric's bootstrap.
    public static func seed(for key: String) -> UInt64 { FNV1a.hash(key) }
}
