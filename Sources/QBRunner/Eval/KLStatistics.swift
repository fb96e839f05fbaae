import Foundation

/// llama-perplexity's `--kl-divergence` statistics, the one implementation behind both
/// `eval --kl-base` (our logits against llama.cpp's stored log-probabilities) and
/// `eval --models/--reference` (`EvalSetting.vsReference`): the running sums of
/// perplexity.cpp's `kl_divergence_result` plus the per-position KL and Δp values it keeps
/// for percentiles. Callers compute the per-position figures as their source allows and add
/// them here; every aggregate (means, standard errors, median, percentiles, RMS Δp, same
/// top, PPL ratio) is derived below and nowhere else.
///
/// The sums are f64 as in perplexity.cpp. One deliberate difference: perplexity.cpp squares
/// its f32 NLL and Δp in f32 before adding (`nll*nll`, `p_diff*p_diff`); here squares and
/// products are taken in f64 of the values as given, so the paired PPL-ratio error of two
/// close models does not lose digits to f32 rounding (the sums agree with perplexity.cpp's
/// to about 1e-7 relative).
public struct LlamaKLDivergence: Sendable, Codable {
    public private(set) var count = 0
    var sumNLL = 0.0, sumNLL2 = 0.0, sumNLLBase = 0.0, sumNLLBase2 = 0.0, sumNLLNLLBase = 0.0
    var sumKLD = 0.0, sumKLD2 = 0.0, sumPDiff = 0.0, sumPDiff2 = 0.0, sumPDiff4 = 0.0
    public private(set) var maxPDiff: Float = 0
    public private(set) var sameTop = 0
    /// Per position, in order added; f32 as perplexity.cpp keeps them (its percentiles are
    /// taken on these f32 values).
    public private(set) var klValues: [Float] = []
    public private(set) var pDiffValues: [Float] = []

    public init() {}

    /// One scored position. `kl`: KL(base ‖ candidate) in nats; `nll`, `nllBase`: −log p of
    /// the id that came next under the candidate and the base; `pDiff`: p_candidate(next) −
    /// p_base(next); `sameTop`: whether both put the same id first.
    public mutating func add(kl: Double, nll: Double, nllBase: Double, pDiff: Float, sameTop same: Bool) {
        sumNLL += nll; sumNLL2 += nll * nll
        sumNLLBase += nllBase; sumNLLBase2 += nllBase * nllBase
        sumNLLNLLBase += nll * nllBase
        sumKLD += kl; sumKLD2 += kl * kl
        count += 1
        if same { sameTop += 1 }
        let d = Double(pDiff)
        sumPDiff += d
        sumPDiff2 += d * d; sumPDiff4 += d * d * d * d
        maxPDiff = max(maxPDiff, abs(pDiff))
        klValues.append(Float(kl))
        pDiffValues.append(pDiff)
    }

    /// perplexity.cpp's `mean_and_uncertainty`: the mean, and sqrt((E[x²] − E[x]²)/(n − 1))
    /// as its standard error, 0 for 10 values or fewer (too few to say).
    static func meanAndUncertainty(_ sum: Double, _ sum2: Double, _ count: Int) -> (value: Double, uncertainty: Double) {
        guard count >= 1 else { return (0, 0) }
        let f = sum / Double(count)
        let df = sum2 / Double(count) - f * f
        return (f, df > 0 && count > 10 ? (df / Double(count - 1)).squareRoot() : 0)
    }

    /// perplexity.cpp's `covariance` of the two means: (E[ab] − E[a]E[b])/(n − 1), 0 below
    /// 10 values.
    static func covariance(_ sumA: Double, _ sumB: Double, _ sumAB: Double, _ count: Int) -> Double {
        guard count >= 10 else { return 0 }
        let n = Double(count)
        return (sumAB / n - (sumA / n) * (sumB / n)) / (n - 1)
    }

    /// perplexity.cpp's `percentile` lambda on ascending values, in f32 as it computes it:
    /// position p = fraction·(n − 1), linear between the values at ⌊p⌋ and ⌊p⌋ + 1; the
    /// first value for fraction ≤ 0, the last for fraction ≥ 1. 0 for no values (where
    /// perplexity.cpp prints nothing).
    public static func percentile(_ sorted: [Float], _ fraction: Float) -> Float {
        guard let first = sorted.first, let last = sorted.last else { return 0 }
        if fraction <= 0 { return first }
        if fraction >= 1 { return last }
        var p = fraction * Float(sorted.count - 1)
        let ip = Int(p)
        p -= Float(ip)
        return (1 - p) * sorted[ip] + p * sorted[min(ip + 1, sorted.count - 1)]
    }

    /// perplexity.cpp's median (not its percentile at 0.5): the middle value, or 0.5f times
    /// the sum of the two middle values, in f32. 0 for no values.
    public static func median(_ sorted: [Float]) -> Float {
        guard !sorted.isEmpty else { return 0 }
        let n = sorted.count
        return n % 2 == 0 ? 0.5 * (sorted[n / 2] + sorted[n / 2 - 1]) : sorted[n / 2]
    }

    public var meanKL: (value: Double, uncertainty: Double) { Self.meanAndUncertainty(sumKLD, sumKLD2, count) }
    public var sameTopFraction: Double { Double(sameTop) / Double(max(count, 1)) }
    /// Mean NLL of the candidate's and the base's next ids, each ± its uncertainty.
    var logPerplexity: (ours: (value: Double, uncertainty: Double), base: (value: Double, uncertainty: Double)) {
        (Self.meanAndUncertainty(sumNLL, sumNLL2, count), Self.meanAndUncertainty(sumNLLBase, sumNLLBase2, count))
    }
    /// exp of the mean NLL of the candidate's and of the base's.
    public var perplexity: (ours: Double, base: Double) {
        let l = logPerplexity
        return (exp(l.ours.value), exp(l.base.value))
    }
    /// perplexity.cpp's covariance of the two mean NLLs.
    var logPerplexityCovariance: Double { Self.covariance(sumNLL, sumNLLBase, sumNLLNLLBase, count) }
    /// ln(PPL(Q)/PPL(base)) ± sqrt(se_Q² + se_base² − 2·cov), as perplexity.cpp; the
    /// radicand floored at 0 (perplexity.cpp gives NaN at exactly 10 values, where the
    /// covariance is counted but the errors are not).
    var logPerplexityRatio: (value: Double, uncertainty: Double) {
        let l = logPerplexity
        let v = l.ours.uncertainty * l.ours.uncertainty + l.base.uncertainty * l.base.uncertainty - 2 * logPerplexityCovariance
        return (l.ours.value - l.base.value, max(v, 0).squareRoot())
    }

    /// The summary `eval` writes.
    public var statistics: ReferenceStatistics { ReferenceStatistics(self) }

    /// The statistics blocks llama-perplexity prints after `--kl-divergence`, its formats.
    public var report: String {
        guard count > 0 else { return "no positions scored\n" }
        var out: [String] = []
        func line(_ s: String) { out.append(s) }
        let s = statistics
        let l = logPerplexity
        let cov = logPerplexityCovariance
        let ratio = logPerplexityRatio
        line("====== Perplexity statistics ======")
        line(String(format: "Mean PPL(Q)                   : %10.6f ± %10.6f", exp(l.ours.value), exp(l.ours.value) * l.ours.uncertainty))
        line(String(format: "Mean PPL(base)                : %10.6f ± %10.6f", exp(l.base.value), exp(l.base.value) * l.base.uncertainty))
        line(String(format: "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%", 100 * cov / (l.ours.uncertainty * l.base.uncertainty)))
        line(String(format: "Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f", ratio.value, ratio.uncertainty))
        line(String(format: "Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f", s.perplexityRatio, s.perplexityRatioStandardError))
        // The difference's error by the delta method, with the covariance of the two
        // perplexities ppl·ppl_base·cov, as perplexity.cpp (radicand floored at 0 as above).
        let ppl = exp(l.ours.value), pplBase = exp(l.base.value)
        let pplUnc = ppl * l.ours.uncertainty, pplBaseUnc = pplBase * l.base.uncertainty
        let diffVar = pplUnc * pplUnc + pplBaseUnc * pplBaseUnc - 2 * ppl * pplBase * cov
        line(String(format: "Mean PPL(Q)-PPL(base)         : %10.6f ± %10.6f", ppl - pplBase, max(diffVar, 0).squareRoot()))
        line("")
        line("====== KL divergence statistics ======")
        let k = s.klDivergence
        line(String(format: "Mean    KLD: %10.6f ± %10.6f", k.mean, k.standardError))
        line(String(format: "Maximum KLD: %10.6f", k.maximum))
        for (label, v) in [("99.9%", k.p999), ("99.0%", k.p99), ("95.0%", k.p95), ("90.0%", k.p90)] {
            line(label + String(format: "   KLD: %10.6f", v))
        }
        line(String(format: "Median  KLD: %10.6f", k.median))
        for (label, v) in [("10.0%", k.p10), (" 5.0%", k.p05), (" 1.0%", k.p01), (" 0.1%", k.p001)] {
            line(label + String(format: "   KLD: %10.6f", v))
        }
        line(String(format: "Minimum KLD: %10.6f", k.minimum))
        line("")
        line("====== Token probability statistics ======")
        let d = s.deltaP
        // The quartiles are printed for Δp only, so the summary does not carry them.
        let pd = pDiffValues.sorted()
        line(String(format: "Mean    Δp: %6.3f ± %5.3f %%", 100 * d.mean, 100 * d.standardError))
        line(String(format: "Maximum Δp: %6.3f%%", 100 * d.maximum))
        for (label, v) in [("99.9%", d.p999), ("99.0%", d.p99), ("95.0%", d.p95), ("90.0%", d.p90), ("75.0%", Double(Self.percentile(pd, 0.75)))] {
            line(label + String(format: "   Δp: %6.3f%%", 100 * v))
        }
        line(String(format: "Median  Δp: %6.3f%%", 100 * d.median))
        for (label, v) in [("25.0%", Double(Self.percentile(pd, 0.25))), ("10.0%", d.p10), (" 5.0%", d.p05), (" 1.0%", d.p01), (" 0.1%", d.p001)] {
            line(label + String(format: "   Δp: %6.3f%%", 100 * v))
        }
        line(String(format: "Minimum Δp: %6.3f%%", 100 * d.minimum))
        line(String(format: "RMS Δp    : %6.3f ± %5.3f %%", 100 * s.rmsDeltaP, 100 * s.rmsDeltaPStandardError))
        line(String(format: "Same top p: %6.3f ± %5.3f %%", 100 * s.sameTopP, 100 * s.sameTopPStandardError))
        return out.joined(separator: "\n") + "\n"
    }
}

/// What `llama-perplexity --kl-divergence` prints for one setting against the reference,
/// as `eval` writes it (`vs_reference`; field names documented in results/README.md), all
/// derived from `LlamaKLDivergence`'s sums and values with perplexity.cpp's definitions:
/// KL(reference ‖ setting) per position (mean ± standard error, median, percentiles), Δp =
/// p_setting(next id) − p_reference(next id) per position (the same), RMS Δp ± its
/// delta-method error (0.5/RMS times the error of the mean square), the share of positions
/// whose most likely id is the same ± sqrt(p(1 − p)/(n − 1)), and the perplexity ratio
/// exp(mean NLL − mean NLL_ref) ± ratio × the error of the log ratio.
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

        /// `mean` ± `standardError` from the sums; the order statistics from `values`.
        init(mean: (value: Double, uncertainty: Double), values: [Float]) {
            let s = values.sorted()
            func q(_ f: Float) -> Double { Double(LlamaKLDivergence.percentile(s, f)) }
            self.mean = mean.value
            standardError = mean.uncertainty
            median = Double(LlamaKLDivergence.median(s))
            minimum = Double(s.first ?? 0)
            maximum = Double(s.last ?? 0)
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

    public init(_ k: LlamaKLDivergence) {
        typealias L = LlamaKLDivergence
        positions = k.count
        klDivergence = Distribution(mean: k.meanKL, values: k.klValues)
        deltaP = Distribution(mean: L.meanAndUncertainty(k.sumPDiff, k.sumPDiff2, k.count), values: k.pDiffValues)
        let mse = L.meanAndUncertainty(k.sumPDiff2, k.sumPDiff4, k.count)
        rmsDeltaP = mse.value.squareRoot()
        // perplexity.cpp divides by the RMS unguarded; 0 when every Δp is 0 keeps JSON finite.
        rmsDeltaPStandardError = rmsDeltaP > 0 ? 0.5 / rmsDeltaP * mse.uncertainty : 0
        sameTopP = k.sameTopFraction
        // n − 1 as perplexity.cpp; 0 for a single position rather than a division by zero.
        sameTopPStandardError = k.count > 1 ? (sameTopP * (1 - sameTopP) / Double(k.count - 1)).squareRoot() : 0
        let ratio = k.logPerplexityRatio
        perplexityRatio = exp(ratio.value)
        perplexityRatioStandardError = perplexityRatio * ratio.uncertainty
    }
}
