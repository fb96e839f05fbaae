import Foundation
import QBKernels
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
            if sameTop(reference[r], candidate[r]) { agree += 1 }
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

    /// Whether two rows of logits pick the same id greedily.
    static func sameTop(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Bool {
        a.withUnsafeBufferPointer(Ops.argmax) == b.withUnsafeBufferPointer(Ops.argmax)
    }
}
