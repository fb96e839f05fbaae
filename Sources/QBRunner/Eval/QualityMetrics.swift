import Foundation
import QBSupport

/// How far one setting's next-token distributions are from a reference's, position by
/// position: the quantities `eval` reports (KL divergence, top-1 agreement, perplexity).
public enum QualityMetrics {
    /// log softmax in Double (logits of a 128k vocabulary lose digits in f32 sums).
    public static func logSoftmax(_ logits: ArraySlice<Float>) -> [Double] {
        let m = Double(logits.max() ?? 0)
        var sum = 0.0
        for v in logits { sum += exp(Double(v) - m) }
        let lse = m + log(sum)
        return logits.map { Double($0) - lse }
    }

    /// KL(reference ‖ candidate) in nats for one position.
    public static func klDivergence(reference: ArraySlice<Float>, candidate: ArraySlice<Float>) -> Double {
        let p = logSoftmax(reference), q = logSoftmax(candidate)
        var kl = 0.0
        for i in p.indices { kl += exp(p[i]) * (p[i] - q[i]) }
        return max(kl, 0)
    }

    /// Per-position comparison of two `[positions][vocab]` logit arrays.
    public struct Comparison: Sendable, Codable {
        public var positions: Int
        public var meanKL: Double
        /// Standard error of the mean KL over positions.
        public var klStandardError: Double
        public var maxKL: Double
        public var top1Agreement: Double
    }

    public static func compare(reference: [Float], candidate: [Float], vocab: Int) -> Comparison {
        let n = min(reference.count, candidate.count) / vocab
        var kls: [Double] = []
        var agree = 0
        for t in 0..<n {
            let r = (t * vocab)..<((t + 1) * vocab)
            kls.append(klDivergence(reference: reference[r], candidate: candidate[r]))
            if argmax(reference[r]) == argmax(candidate[r]) { agree += 1 }
        }
        let mean = kls.reduce(0, +) / Double(max(n, 1))
        let variance = kls.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(max(n - 1, 1))
        return Comparison(
            positions: n, meanKL: mean, klStandardError: (variance / Double(max(n, 1))).squareRoot(),
            maxKL: kls.max() ?? 0, top1Agreement: Double(agree) / Double(max(n, 1)))
    }

    /// Negative log-likelihood (nats) of `targets[t]` under position t's logits.
    public static func negativeLogLikelihoods(logits: [Float], targets: [Int32], vocab: Int) -> [Double] {
        targets.enumerated().map { t, id in
            -logSoftmax(logits[(t * vocab)..<((t + 1) * vocab)])[Int(id)]
        }
    }

    static func argmax(_ v: ArraySlice<Float>) -> Int {
        var best = v.startIndex
        for i in v.indices where v[i] > v[best] { best = i }
        return best - v.startIndex
    }
}

/// What `llama-perplexity --kl-divergence` prints for one setting against the reference,
/// with the same definitions: KL(reference ‖ setting) per position (mean ± standard error,
/// median, percentiles), Δp = p_setting(next id) − p_reference(next id) per position (mean
/// ± standard error, RMS ± standard error, percentiles), the share of positions whose most
/// likely id is the same (± binomial standard error), and the perplexity ratio
/// exp(mean ΔNLL) ± its standard error (delta method on the paired ΔNLL).
public struct ReferenceStatistics: Codable, Sendable, Equatable {
    public struct Distribution: Codable, Sendable, Equatable {
        public var mean: Double
        public var standardError: Double
        public var median: Double
        public var minimum: Double
        public var maximum: Double
        /// llama-perplexity's percentiles: 0.1, 1, 5, 10, 90, 95, 99, 99.9.
        public var p001: Double, p01: Double, p05: Double, p10: Double, p90: Double, p95: Double, p99: Double, p999: Double
        enum CodingKeys: String, CodingKey {
            case mean, standardError = "se", median, minimum = "min", maximum = "max"
            case p001 = "p0.1", p01 = "p1", p05 = "p5", p10 = "p10", p90 = "p90", p95 = "p95", p99 = "p99", p999 = "p99.9"
        }

        public init(_ v: [Double]) {
            let n = Double(max(v.count, 1))
            mean = v.reduce(0, +) / n
            standardError = v.count > 1 ? Statistics.standardDeviation(v) / n.squareRoot() : 0
            let s = v.sorted()
            func q(_ p: Double) -> Double { Quantiles.quantile(s, p) ?? 0 }
            median = q(0.5)
            minimum = s.first ?? 0
            maximum = s.last ?? 0
            p001 = q(0.001); p01 = q(0.01); p05 = q(0.05); p10 = q(0.10)
            p90 = q(0.90); p95 = q(0.95); p99 = q(0.99); p999 = q(0.999)
        }
    }

    public var positions: Int
    public var klDivergence: Distribution
    public var deltaP: Distribution
    public var rmsDeltaP: Double
    public var rmsDeltaPStandardError: Double
    public var sameTopP: Double
    public var sameTopPStandardError: Double
    public var perplexityRatio: Double
    public var perplexityRatioStandardError: Double

    enum CodingKeys: String, CodingKey {
        case positions, klDivergence = "kl_divergence", deltaP = "delta_p", rmsDeltaP = "rms_delta_p"
        case rmsDeltaPStandardError = "rms_delta_p_se", sameTopP = "same_top_p", sameTopPStandardError = "same_top_p_se"
        case perplexityRatio = "ppl_ratio", perplexityRatioStandardError = "ppl_ratio_se"
    }

    public init(kl: [Double], deltaP dp: [Double], sameTop: Int, deltaNLL: Double, deltaNLLStandardError: Double) {
        positions = kl.count
        klDivergence = Distribution(kl)
        deltaP = Distribution(dp)
        let n = Double(max(dp.count, 1))
        let squares = dp.map { $0 * $0 }
        let meanSquare = squares.reduce(0, +) / n
        rmsDeltaP = meanSquare.squareRoot()
        let squareSE = squares.count > 1 ? Statistics.standardDeviation(squares) / n.squareRoot() : 0
        rmsDeltaPStandardError = rmsDeltaP > 0 ? squareSE / (2 * rmsDeltaP) : 0
        let m = Double(max(kl.count, 1))
        sameTopP = Double(sameTop) / m
        sameTopPStandardError = (sameTopP * (1 - sameTopP) / m).squareRoot()
        perplexityRatio = exp(deltaNLL)
        perplexityRatioStandardError = perplexityRatio * deltaNLLStandardError
    }
}
