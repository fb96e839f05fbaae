import Foundation

/// A step in a series: the values from `index` on differ from those before it.
public struct ChangePoint: Sendable, Equatable {
    /// The first index after the step.
    public var index: Int
    /// Mean and population standard deviation of the segments on either side (between the
    /// neighbouring change points).
    public var meanBefore: Double
    public var meanAfter: Double
    public var sdBefore: Double
    public var sdAfter: Double
    /// Two-sided Student's t-test of the two segments.
    public var pValue: Double
    public var t: Double

    /// meanAfter / meanBefore − 1 (0 when meanBefore is 0).
    public var relativeChange: Double { meanBefore == 0 ? 0 : meanAfter / meanBefore - 1 }

    /// The larger of the forward and backward relative changes, as Otava ranks steps.
    public var magnitude: Double {
        let backward = meanAfter == 0 ? 0 : meanBefore / meanAfter - 1
        return max(abs(relativeChange), abs(backward))
    }
}

/// Change points by e-divisive means, as Apache Otava (formerly Hunter, Fleming et al.,
/// "Hunter: Using Change Point Detection to Hunt for Performance Regressions", ICPE 2023)
/// finds them, with its t-test in place of the original permutation test so the same
/// series always gives the same answer:
///
/// 1. Split: slide a window of `windowLength` points (step half a window) along the series;
///    in each window, repeatedly take the split that maximizes the e-divisive statistic
///    Q̂ (Matteson and James 2014, distances to the power 1) over the current segments, and
///    keep it while a two-sided t-test of the two sides gives p ≤ 10 × `maxPValue` (the
///    "weak" change points).
/// 2. Merge: over the whole series, repeatedly drop the weakest change point (the largest
///    p-value, or when every p-value passes, the smallest magnitude if it is at most
///    `minMagnitude`), recomputing the others' statistics on the segments that remain,
///    until every one passes both.
///
/// Otava's defaults: a window of 50, p ≤ 0.001, no minimum magnitude. As in Otava, the
/// t-test is Student's with pooled variance from the sides' population standard deviations.
public struct EDivisive: Sendable {
    public var windowLength: Int
    public var maxPValue: Double
    public var minMagnitude: Double

    public init(windowLength: Int = 50, maxPValue: Double = 0.001, minMagnitude: Double = 0) {
        self.windowLength = max(windowLength, 2)
        self.maxPValue = maxPValue
        self.minMagnitude = minMagnitude
    }

    /// Otava's first-pass threshold for the weak change points.
    var firstPassPValue: Double {
        maxPValue < 0.05 ? maxPValue * 10 : (maxPValue < 0.5 ? maxPValue * 2 : maxPValue)
    }

    public func changePoints(_ series: [Double]) -> [ChangePoint] {
        guard series.count >= 3, series.allSatisfy(\.isFinite) else { return [] }
        return merge(split(series), series)
    }

    // MARK: split

    func split(_ series: [Double]) -> [ChangePoint] {
        let step = max(windowLength / 2, 1)
        var start = 0
        var indices: [Int] = []
        while start < series.count {
            let end = min(start + windowLength, series.count)
            let found = Self.detect(Array(series[start..<end]), maxPValue: firstPassPValue).map { $0 + start }
            start = max(found.last ?? 0, start + step)
            for i in found where !indices.contains(i) { indices.append(i) }
        }
        indices.sort()
        return Self.statistics(indices, series)
    }

    /// One window: e-divisive means with the t-test as the stopping rule. Returns sorted
    /// indices of the change points found.
    static func detect(_ x: [Double], maxPValue: Double) -> [Int] {
        var points: [Int] = []
        while true {
            let segments = Self.segments(points, count: x.count)
            var best: (index: Int, q: Double, segment: Range<Int>)?
            for s in segments where s.count > 1 {
                let c = candidate(x, s)
                if c.q > (best?.q ?? -.infinity) { best = (c.index, c.q, s) }
            }
            guard let b = best else { break }
            let left = Array(x[b.segment.lowerBound..<b.index]), right = Array(x[b.index..<b.segment.upperBound])
            guard tTest(left, right).p <= maxPValue else { break }
            points.append(b.index)
            points.sort()
        }
        return points
    }

    /// The pieces of 0..<count between sorted change points.
    static func segments(_ points: [Int], count: Int) -> [Range<Int>] {
        let bounds = [0] + points + [count]
        return zip(bounds, bounds.dropFirst()).compactMap { $0 < $1 ? $0..<$1 : nil }
    }

    /// The split τ of `segment` maximizing Q̂(x[s..<τ], x[τ..<κ]) over s < τ < κ ≤ end:
    /// Q̂(X, Y) = 2/(m+n) ΣΣ|Xi − Yj| − 2m/((m+n)(n−1)) Σi<k |Xi − Xk| − 2n/((m+n)(m−1)) Σj<k |Yj − Yk|,
    /// n = |X|, m = |Y| (a within-sum term is 0 when its side has one point). Ties go to
    /// the smallest τ, then κ, as Otava's argmax does.
    static func candidate(_ x: [Double], _ segment: Range<Int>) -> (index: Int, q: Double) {
        let s = segment.lowerBound, e = segment.upperBound
        var bestIndex = s + 1, bestQ = -Double.infinity
        var withinX = 0.0
        for tau in (s + 1)..<e {
            // x[tau - 1] joins X.
            for i in s..<(tau - 1) { withinX += abs(x[i] - x[tau - 1]) }
            let n = Double(tau - s)
            var cross = 0.0, withinY = 0.0
            for kappa in (tau + 1)...e {
                let y = x[kappa - 1]
                for i in s..<tau { cross += abs(x[i] - y) }
                for j in tau..<(kappa - 1) { withinY += abs(x[j] - y) }
                let m = Double(kappa - tau)
                var q = 2 / (m + n) * cross
                if n > 1 { q -= 2 * m / ((m + n) * (n - 1)) * withinX }
                if m > 1 { q -= 2 * n / ((m + n) * (m - 1)) * withinY }
                if q > bestQ {
                    bestQ = q
                    bestIndex = tau
                }
            }
        }
        return (bestIndex, bestQ)
    }

    // MARK: merge

    /// Statistics of each change point against its neighbours' segments.
    static func statistics(_ indices: [Int], _ series: [Double]) -> [ChangePoint] {
        let bounds = [0] + indices + [series.count]
        return indices.enumerated().map { k, index in
            let left = Array(series[bounds[k]..<index]), right = Array(series[index..<bounds[k + 2]])
            let r = tTest(left, right)
            return ChangePoint(
                index: index, meanBefore: mean(left), meanAfter: mean(right), sdBefore: populationSD(left),
                sdAfter: populationSD(right), pValue: r.p, t: r.t)
        }
    }

    func merge(_ weak: [ChangePoint], _ series: [Double]) -> [ChangePoint] {
        var points = weak
        while !points.isEmpty {
            guard var weakest = points.indices.max(by: { points[$0].pValue < points[$1].pValue }) else { break }
            if points[weakest].pValue < maxPValue,
               let smallest = points.indices.min(by: { points[$0].magnitude < points[$1].magnitude }) {
                weakest = smallest
                if points[weakest].magnitude > minMagnitude { return points }
            }
            points.remove(at: weakest)
            // Removing a point widens its neighbours' segments: recompute every point's
            // statistics on the segments that remain.
            points = Self.statistics(points.map(\.index), series)
        }
        return points
    }

    // MARK: statistics

    static func mean(_ x: [Double]) -> Double { x.isEmpty ? 0 : x.reduce(0, +) / Double(x.count) }

    static func populationSD(_ x: [Double]) -> Double {
        guard x.count >= 2 else { return 0 }
        let m = mean(x)
        return (x.reduce(0) { $0 + ($1 - m) * ($1 - m) } / Double(x.count)).squareRoot()
    }

    /// Two-sided Student's t-test with pooled variance from the population standard
    /// deviations (scipy's `ttest_ind_from_stats` fed `np.std`, as Otava does). One point
    /// per side leaves no degrees of freedom: p = 1. Zero spread on both sides: p = 0 when
    /// the means differ, 1 when they do not.
    static func tTest(_ a: [Double], _ b: [Double]) -> (t: Double, p: Double) {
        let n1 = Double(a.count), n2 = Double(b.count)
        let df = n1 + n2 - 2
        guard a.count > 0, b.count > 0, df > 0 else { return (0, 1) }
        let m1 = mean(a), m2 = mean(b), s1 = populationSD(a), s2 = populationSD(b)
        let pooled = ((n1 - 1) * s1 * s1 + (n2 - 1) * s2 * s2) / df
        let denominator = (pooled * (1 / n1 + 1 / n2)).squareRoot()
        guard denominator > 0 else { return m1 == m2 ? (0, 1) : (m1 > m2 ? .infinity : -.infinity, 0) }
        let t = (m1 - m2) / denominator
        return (t, studentTwoSided(t: t, df: df))
    }

    /// P(|T| ≥ |t|) for Student's t with `df` degrees of freedom: I_{df/(df+t²)}(df/2, 1/2).
    static func studentTwoSided(t: Double, df: Double) -> Double {
        guard t.isFinite else { return 0 }
        return min(1, max(0, regularizedIncompleteBeta(a: df / 2, b: 0.5, x: df / (df + t * t))))
    }

    /// I_x(a, b) by its continued fraction (modified Lentz), using the symmetry
    /// I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges slowly.
    static func regularizedIncompleteBeta(a: Double, b: Double, x: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let lnBeta: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let lnPowers: Double = a * log(x) + b * log(1 - x)
        let lnFront = lnBeta + lnPowers
        if x < (a + 1) / (a + b + 2) {
            return exp(lnFront) * betaFraction(a: a, b: b, x: x) / a
        }
        return 1 - exp(lnFront) * betaFraction(a: b, b: a, x: 1 - x) / b
    }

    static func betaFraction(a: Double, b: Double, x: Double) -> Double {
        let tiny = 1e-300, epsilon = 1e-15
        var c = 1.0, d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...400 {
            let mm = Double(m)
            var numerator = mm * (b - mm) * x / ((a + 2 * mm - 1) * (a + 2 * mm))
            d = 1 + numerator * d
            if abs(d) < tiny { d = tiny }
            c = 1 + numerator / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            numerator = -(a + mm) * (a + b + mm) * x / ((a + 2 * mm) * (a + 2 * mm + 1))
            d = 1 + numerator * d
            if abs(d) < tiny { d = tiny }
            c = 1 + numerator / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < epsilon { break }
        }
        return h
    }
}
