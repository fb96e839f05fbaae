import Foundation
import QBSupport

/// Hypothesis tests behind the regression verdicts of `ab` (paired) and `compare`
/// (unpaired), and Holm's step-down adjustment that holds the family-wise error rate of a
/// whole run at α.
///
/// - `ab` pairs round r of the baseline with round r of the candidate (same minute of the
///   machine's drift) and tests the per-round log-ratios with the **one-sided Wilcoxon
///   signed-rank test**: logs make a multiplicative change additive and symmetric (a 10%
///   slowdown and its undoing are ±0.095), and ranks make the test immune to the bursts of
///   a shared machine, where one round in ten runs 30–40% slow on one side and would
///   inflate a t-test's variance until nothing is significant. The price is a floor: its
///   exact one-sided p is never below 2⁻ⁿ, so n rounds can only pass Holm's smallest cut
///   α/m when 2⁻ⁿ < α/m (8 rounds for 10 metrics at 5%); `ab` says so when it has fewer.
///   The change is the Hodges–Lehmann estimate (median of the Walsh averages) with its
///   distribution-free interval. (`oneSampleT` is kept for reference and tests.)
/// - `compare` has two unrelated files, so it uses the **Mann-Whitney U test** (one-sided,
///   exact without ties for small samples, else the normal approximation with tie and
///   continuity corrections, as scipy's `mannwhitneyu` does).
public enum Significance {
    /// Regularized incomplete beta I_x(a, b) (Numerical Recipes' continued fraction,
    /// Lentz's method); nil outside its domain.
    public static func incompleteBeta(_ a: Double, _ b: Double, _ x: Double) -> Double? {
        guard a > 0, b > 0, x.isFinite, (0...1).contains(x) else { return nil }
        if x == 0 || x == 1 { return x }
        let lnGammas: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let lnPowers: Double = a * log(x) + b * log(1 - x)
        let lnFront = lnGammas + lnPowers
        func fraction(_ a: Double, _ b: Double, _ x: Double) -> Double {
            let tiny = 1e-300
            var c = 1.0, d = 1 - (a + b) * x / (a + 1)
            if abs(d) < tiny { d = tiny }
            d = 1 / d
            var h = d
            for m in 1...10_000 {
                let m = Double(m), m2 = 2 * m
                var aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2))
                d = 1 + aa * d; if abs(d) < tiny { d = tiny }
                c = 1 + aa / c; if abs(c) < tiny { c = tiny }
                d = 1 / d; h *= d * c
                aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2))
                d = 1 + aa * d; if abs(d) < tiny { d = tiny }
                c = 1 + aa / c; if abs(c) < tiny { c = tiny }
                d = 1 / d
                let delta = d * c
                h *= delta
                if abs(delta - 1) < 1e-15 { break }
            }
            return h
        }
        if x < (a + 1) / (a + b + 2) { return exp(lnFront) * fraction(a, b, x) / a }
        return 1 - exp(lnFront) * fraction(b, a, 1 - x) / b
    }

    /// P(T > t) for Student's t with `df` degrees of freedom.
    public static func studentTSurvival(_ t: Double, df: Double) -> Double {
        guard df > 0, !t.isNaN else { return .nan }
        if t == .infinity { return 0 }
        if t == -.infinity { return 1 }
        let tail = 0.5 * (incompleteBeta(df / 2, 0.5, df / (df + t * t)) ?? .nan)
        return t >= 0 ? tail : 1 - tail
    }

    /// The t value with P(T > t) = p (bisection; p in (0, 1)).
    public static func studentTQuantileUpper(_ p: Double, df: Double) -> Double {
        guard p > 0, p < 1, df > 0 else { return .nan }
        var lo = -1e6, hi = 1e6
        for _ in 0..<200 {
            let mid = (lo + hi) / 2
            if studentTSurvival(mid, df: df) > p { lo = mid } else { hi = mid }
        }
        return (lo + hi) / 2
    }

    public struct TTest: Sendable, Equatable {
        public var mean: Double
        public var t: Double
        public var df: Double
        /// One-sided: P(T ≥ t) under a zero mean (the alternative is a positive mean).
        public var p: Double
        /// Two-sided 95% interval of the mean.
        public var low: Double
        public var high: Double
    }

    /// One-sample t-test of `d` against a zero mean, alternative "greater" (scipy's
    /// `ttest_1samp(d, 0, alternative='greater')`, equal to `ttest_rel(b, a, ...)` on the
    /// differences). Nil for fewer than two values or any non-finite one. A zero spread
    /// gives p = 0 for a positive mean and 1 otherwise.
    public static func oneSampleT(_ d: [Double], level: Double = 0.95) -> TTest? {
        guard d.count >= 2, d.allSatisfy(\.isFinite) else { return nil }
        let n = Double(d.count)
        let mean = d.reduce(0, +) / n
        let sd = Statistics.standardDeviation(d)
        let df = n - 1
        guard sd > 0, sd > abs(mean) * 1e-12 else {
            return TTest(mean: mean, t: mean > 0 ? .infinity : mean < 0 ? -.infinity : 0, df: df, p: mean > 0 ? 0 : 1, low: mean, high: mean)
        }
        let se = sd / n.squareRoot()
        let t = mean / se
        let q = studentTQuantileUpper((1 - level) / 2, df: df)
        return TTest(mean: mean, t: t, df: df, p: studentTSurvival(t, df: df), low: mean - q * se, high: mean + q * se)
    }

    public struct SignedRank: Sendable, Equatable {
        /// Sum of the ranks of the positive differences (zeros dropped).
        public var statistic: Double
        /// One-sided: the chance of a statistic at least this large under symmetry about zero.
        public var p: Double
        /// Hodges–Lehmann estimate of the centre: the median of the Walsh averages.
        public var estimate: Double
        /// Its distribution-free interval (about 95%; the order statistics of the Walsh
        /// averages the exact null distribution gives), [min, max] for very few values.
        public var low: Double
        public var high: Double
        /// Nonzero differences.
        public var n: Int
    }

    /// Counts of each signed-rank sum 0...n(n+1)/2 over the 2ⁿ sign patterns.
    static func signedRankCounts(_ n: Int) -> [Double] {
        let top = n * (n + 1) / 2
        var c = [Double](repeating: 0, count: top + 1)
        c[0] = 1
        guard n > 0 else { return c }
        for k in 1...n {
            var s = k * (k + 1) / 2
            while s >= k {
                c[s] += c[s - k]
                s -= 1
            }
        }
        return c
    }

    /// One-sided Wilcoxon signed-rank test of `d` against a centre of zero, alternative
    /// "greater": zeros dropped (Wilcox's method), midranks for ties; exact when there are
    /// no ties and at most 50 nonzero values, else the normal approximation with the tie
    /// correction and no continuity correction (scipy's `wilcoxon(d, alternative='greater')`,
    /// `method='approx'` in the tied case). Nil for no values or any non-finite one.
    public static func wilcoxonGreater(_ d: [Double], level: Double = 0.95) -> SignedRank? {
        guard !d.isEmpty, d.allSatisfy(\.isFinite) else { return nil }
        // Hodges–Lehmann over all values (zeros included).
        var walsh: [Double] = []
        walsh.reserveCapacity(d.count * (d.count + 1) / 2)
        for i in d.indices { for j in i..<d.count { walsh.append((d[i] + d[j]) / 2) } }
        walsh.sort()
        let estimate = Statistics.median(sorted: walsh)
        var low = walsh[0], high = walsh[walsh.count - 1]
        if d.count <= 200 {
            let counts = signedRankCounts(d.count)
            let total = pow(2.0, Double(d.count))
            var cumulative = 0.0, c = 0
            // Largest c with P(T ≤ c − 1) ≤ (1 − level)/2: the interval [W₍c₎, W₍N+1−c₎].
            while c < counts.count, cumulative + counts[c] <= (1 - level) / 2 * total {
                cumulative += counts[c]
                c += 1
            }
            if c >= 1 && c <= walsh.count / 2 {
                low = walsh[c - 1]
                high = walsh[walsh.count - c]
            }
        }
        let nonzero = d.filter { $0 != 0 }
        let n = nonzero.count
        guard n > 0 else { return SignedRank(statistic: 0, p: 1, estimate: estimate, low: low, high: high, n: 0) }
        let order = nonzero.indices.sorted { abs(nonzero[$0]) < abs(nonzero[$1]) }
        var ranks = [Double](repeating: 0, count: n)
        var tieTerm = 0.0
        var i = 0
        while i < n {
            var j = i
            while j + 1 < n && abs(nonzero[order[j + 1]]) == abs(nonzero[order[i]]) { j += 1 }
            let r = Double(i + j + 2) / 2
            for k in i...j { ranks[order[k]] = r }
            let t = Double(j - i + 1)
            tieTerm += t * t * t - t
            i = j + 1
        }
        var tPlus = 0.0
        for k in 0..<n where nonzero[k] > 0 { tPlus += ranks[k] }
        let p: Double
        if tieTerm == 0 && n <= 50 {
            let counts = signedRankCounts(n)
            let from = max(0, min(counts.count - 1, Int(tPlus.rounded())))
            p = min(1, counts[from...].reduce(0, +) / pow(2.0, Double(n)))
        } else {
            let nn = Double(n)
            let mean: Double = nn * (nn + 1) / 4
            let base: Double = nn * (nn + 1) * (2 * nn + 1) / 24
            let variance: Double = base - tieTerm / 48
            p = variance > 0 ? 0.5 * erfc((tPlus - mean) / variance.squareRoot() / 2.0.squareRoot()) : (tPlus > mean ? 0 : 1)
        }
        return SignedRank(statistic: tPlus, p: p, estimate: estimate, low: low, high: high, n: n)
    }

    /// One-sided Mann-Whitney U test, alternative "x tends to be larger than y"; returns
    /// the p-value. Exact when there are no ties and both samples have at most 30 values,
    /// otherwise the normal approximation with tie and continuity corrections (scipy's
    /// `mannwhitneyu(x, y, alternative='greater')` with its default method). Nil when
    /// either sample is empty or holds a non-finite value.
    public static func mannWhitneyGreater(_ x: [Double], _ y: [Double]) -> Double? {
        guard !x.isEmpty, !y.isEmpty, x.allSatisfy(\.isFinite), y.allSatisfy(\.isFinite) else { return nil }
        let n1 = x.count, n2 = y.count
        // Midranks of the pooled sample.
        let pooled = (x.map { ($0, 0) } + y.map { ($0, 1) }).sorted { $0.0 < $1.0 }
        var ranks = [Double](repeating: 0, count: pooled.count)
        var tieTerm = 0.0
        var i = 0
        while i < pooled.count {
            var j = i
            while j + 1 < pooled.count && pooled[j + 1].0 == pooled[i].0 { j += 1 }
            let r = Double(i + j + 2) / 2
            for k in i...j { ranks[k] = r }
            let t = Double(j - i + 1)
            tieTerm += t * t * t - t
            i = j + 1
        }
        var r1 = 0.0
        for (k, p) in pooled.enumerated() where p.1 == 0 { r1 += ranks[k] }
        let u1 = r1 - Double(n1 * (n1 + 1)) / 2
        if tieTerm == 0 && n1 <= 30 && n2 <= 30 {
            // Exact: counts of U over all C(n1+n2, n1) arrangements, by the recurrence
            // c(m, n, u) = c(m−1, n, u−n) + c(m, n−1, u).
            let maxU = n1 * n2
            var table = [[Double]](repeating: [Double](repeating: 0, count: maxU + 1), count: n2 + 1)
            for n in 0...n2 { table[n][0] = 1 }
            for m in 1...n1 {
                var next = [[Double]](repeating: [Double](repeating: 0, count: maxU + 1), count: n2 + 1)
                next[0][0] = 1
                for n in 1...n2 {
                    for u in 0...(m * n) {
                        next[n][u] = (u >= n ? table[n][u - n] : 0) + next[n - 1][u]
                    }
                }
                table = next
            }
            let counts = table[n2]
            let total = counts.reduce(0, +)
            let k = Int(u1.rounded())
            let tail = counts[max(0, min(maxU, k))...].reduce(0, +)
            return min(1, tail / total)
        }
        let mu = Double(n1 * n2) / 2
        let n = Double(n1 + n2)
        let tieShare: Double = tieTerm / (n * (n - 1))
        let variance: Double = Double(n1 * n2) / 12 * ((n + 1) - tieShare)
        guard variance > 0 else { return u1 > mu ? 0 : 1 }
        let z = (u1 - mu - 0.5) / variance.squareRoot()
        return 0.5 * erfc(z / 2.0.squareRoot())
    }

    /// Holm's step-down adjusted p-values, in the input's order: sorted ascending,
    /// p̃₍ᵢ₎ = max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎). Rejecting every hypothesis whose
    /// adjusted p is below α holds the family-wise error rate at α under any dependence.
    /// A NaN p stays NaN (and never rejects).
    public static func holm(_ p: [Double]) -> [Double] {
        let order = p.indices.filter { !p[$0].isNaN }.sorted { p[$0] < p[$1] }
        let m = Double(order.count)
        var adjusted = p
        var running = 0.0
        for (rank, index) in order.enumerated() {
            running = max(running, min(1, (m - Double(rank)) * p[index]))
            adjusted[index] = running
        }
        return adjusted
    }
}
