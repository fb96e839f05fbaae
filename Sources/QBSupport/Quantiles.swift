/// Medians and quantiles of samples, shared by reports, comparisons, roofline probes and
/// the tokenizer benchmark so that every figure called a median is computed one way.
public enum Quantiles {
    /// The median: the middle value, or the mean of the two middle values of an even count;
    /// nil for no values.
    public static func median(_ values: [Double]) -> Double? {
        values.isEmpty ? nil : median(sorted: values.sorted())
    }

    /// The median of values already in ascending order (at least one).
    public static func median(sorted s: [Double]) -> Double {
        let n = s.count
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2
    }

    /// The q-th quantile (q in [0, 1], clamped) by linear interpolation between closest
    /// ranks (numpy's default, "linear"); nil for no values.
    public static func quantile(_ values: [Double], _ q: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let s = values.sorted()
        let position = min(max(q, 0), 1) * Double(s.count - 1)
        let i = Int(position.rounded(.down))
        let frac = position - Double(i)
        return i + 1 < s.count ? s[i] + (s[i + 1] - s[i]) * frac : s[i]
    }
}
