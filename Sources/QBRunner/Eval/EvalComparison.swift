import Foundation

/// `compare` on two `eval` results: each setting both files hold, figure by figure, with
/// the uncertainty each file recorded, and whether the difference exceeds it.
///
/// The two must have measured the same thing, or a difference means nothing: the same
/// text (by hash), the same windows, the same reference setting and the same base model
/// (by hash). Anything else is a `LocatedError` naming the file and the field.
///
/// A figure with a standard error in both files differs when |new − base| exceeds 1.96
/// times the combined error sqrt(se_base² + se_new²) (two-sided, 5%). The files hold no
/// per-token values, so the test cannot pair tokens: both runs scored the same text, so
/// their errors are strongly correlated and this unpaired test is conservative (it flags
/// only clear differences). Speeds differ when their 95% intervals of the median do not
/// overlap (with fewer than two repetitions they are shown, not judged). Sizes and bits per weight are exact: any change is reported. Percentiles
/// (median and p99 KL) carry no error and are shown, not judged.
public struct EvalComparison: Sendable {
    public enum Verdict: String, Sendable {
        /// Within the uncertainty (or exactly equal for exact figures).
        case same
        /// Beyond the uncertainty, in the better direction.
        case better
        /// Beyond the uncertainty, in the worse direction.
        case worse
        /// Beyond the uncertainty (or changed, for exact figures) where neither direction
        /// is better.
        case changed
        /// Shown without a judgement (no uncertainty recorded).
        case shown
        /// NaN, infinite or missing in one file: cannot be judged, and never passes.
        case invalid
    }

    public struct Row: Sendable {
        public var setting: String
        public var metric: String
        public var base: String
        public var new: String
        public var difference: String
        public var verdict: Verdict
        /// A quality figure (perplexity, KL, Δp, same top): `worse` here fails the comparison.
        public var gates: Bool
    }

    public var rows: [Row] = []
    public var onlyInBase: [String] = []
    public var onlyInNew: [String] = []

    /// Figures that got worse beyond their uncertainty (quality only).
    public var regressions: [Row] { rows.filter { $0.gates && $0.verdict == .worse } }
    public var invalid: [Row] { rows.filter { $0.verdict == .invalid } }

    /// Exit status as `compare` uses it: 0 nothing worse, 1 a quality figure worse beyond
    /// its uncertainty (0 with `reportOnly`), 2 a figure that cannot be judged.
    /// Two files with no setting in common compared nothing: 2, never a pass.
    public func status(reportOnly: Bool) -> Int32 {
        if !invalid.isEmpty || rows.isEmpty { return 2 }
        if !regressions.isEmpty && !reportOnly { return 1 }
        return 0
    }

    /// Refuses two results that did not measure the same thing, naming the field.
    public static func checkComparable(base: EvalResult, basePath: String, new: EvalResult, newPath: String) throws {
        func mismatch(_ what: String, _ a: String, _ b: String, _ why: String) -> LocatedError {
            LocatedError(path: newPath, "\(what) is \(b) where \(basePath) has \(a); \(why)")
        }
        if base.text.hash != new.text.hash {
            throw mismatch("text.hash", "\(base.text.hash) (\(base.text.path))", "\(new.text.hash) (\(new.text.path))", "perplexity and KL compare only on the same text")
        }
        let bw = base.window, nw = new.window
        if bw.context != nw.context || bw.stride != nw.stride || bw.bos != nw.bos || bw.predictedTokens != nw.predictedTokens {
            throw mismatch(
                "window", "ctx \(bw.context), \(bw.predictedTokens) ids scored", "ctx \(nw.context), \(nw.predictedTokens) ids scored",
                "the ids scored must be the same")
        }
        if base.reference != new.reference {
            throw mismatch("reference", "'\(base.reference)'", "'\(new.reference)'", "KL, Δp and same top are measured against the reference, so it must be the same")
        }
        if base.model.fileHash != new.model.fileHash {
            throw mismatch(
                "model.file_hash", "\(base.model.fileHash) (\(base.model.path))", "\(new.model.fileHash) (\(new.model.path))",
                "the settings are made from (and the reference is) that model")
        }
    }

    /// The comparison of every setting `base` and `new` share (after `checkComparable`).
    public static func compare(base: EvalResult, new: EvalResult) -> EvalComparison {
        var c = EvalComparison()
        let newByName = Dictionary(new.settings.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let baseNames = Set(base.settings.map(\.name))
        c.onlyInBase = base.settings.map(\.name).filter { newByName[$0] == nil }
        c.onlyInNew = new.settings.map(\.name).filter { !baseNames.contains($0) }
        for b in base.settings {
            guard let n = newByName[b.name] else { continue }
            c.rows += rows(b, n, isReference: b.name == base.reference)
        }
        return c
    }

    /// A figure with a standard error in each file; `lowerIsBetter` nil when neither
    /// direction is better.
    static func judged(
        _ setting: String, _ metric: String, base: (Double, Double), new: (Double, Double), lowerIsBetter: Bool?,
        gates: Bool, format: (Double) -> String, shownBase: (Double, Double)? = nil, shownNew: (Double, Double)? = nil
    ) -> Row {
        let values = [base.0, base.1, new.0, new.1]
        let showB = shownBase ?? base, showN = shownNew ?? new
        let b = "\(format(showB.0)) ± \(format(showB.1))", n = "\(format(showN.0)) ± \(format(showN.1))"
        guard values.allSatisfy(\.isFinite), base.1 >= 0, new.1 >= 0 else {
            return Row(setting: setting, metric: metric, base: b, new: n, difference: "–", verdict: .invalid, gates: gates)
        }
        let d = new.0 - base.0
        let combined = (base.1 * base.1 + new.1 * new.1).squareRoot()
        let verdict: Verdict
        let difference: String
        if combined > 0 {
            let z = abs(d) / combined
            difference = String(format: "%+.3g (%.1f σ)", d, z)
            if z <= 1.96 {
                verdict = .same
            } else if let lower = lowerIsBetter {
                verdict = (d < 0) == lower ? .better : .worse
            } else {
                verdict = .changed
            }
        } else {
            // No uncertainty in either file (the reference against itself): exact.
            difference = String(format: "%+.3g", d)
            if d == 0 { verdict = .same } else if let lower = lowerIsBetter { verdict = (d < 0) == lower ? .better : .worse } else { verdict = .changed }
        }
        return Row(setting: setting, metric: metric, base: b, new: n, difference: difference, verdict: verdict, gates: gates)
    }

    static func exact(_ setting: String, _ metric: String, _ base: Double, _ new: Double, format: (Double) -> String) -> Row {
        let ok = base.isFinite && new.isFinite
        return Row(
            setting: setting, metric: metric, base: format(base), new: format(new),
            difference: ok ? String(format: "%+.3g", new - base) : "–",
            verdict: !ok ? .invalid : (base == new ? .same : .changed), gates: false)
    }

    static func shown(_ setting: String, _ metric: String, _ base: Double, _ new: Double, format: (Double) -> String) -> Row {
        let ok = base.isFinite && new.isFinite
        return Row(
            setting: setting, metric: metric, base: format(base), new: format(new),
            difference: ok ? String(format: "%+.3g", new - base) : "–", verdict: ok ? .shown : .invalid, gates: false)
    }

    /// A speed: the median with its 95% interval; differs when the intervals do not overlap.
    static func speed(_ setting: String, _ metric: String, _ base: Estimate?, _ new: Estimate?) -> Row? {
        guard base != nil || new != nil else { return nil }
        func show(_ e: Estimate?) -> String { e.map { String(format: "%.1f [%.1f, %.1f]", $0.median, $0.low, $0.high) } ?? "missing" }
        guard let b = base, let n = new, [b.median, b.low, b.high, n.median, n.low, n.high].allSatisfy(\.isFinite) else {
            return Row(setting: setting, metric: metric, base: show(base), new: show(new), difference: "–", verdict: .invalid, gates: false)
        }
        // One repetition has no interval (its "interval" is the point): shown, not judged.
        let judgeable = b.count >= 2 && n.count >= 2 && b.confidence > 0 && n.confidence > 0
        let verdict: Verdict = !judgeable ? .shown : (n.low > b.high ? .better : (n.high < b.low ? .worse : .same))
        let ratio = b.median > 0 ? String(format: "%+.1f%%", 100 * (n.median / b.median - 1)) : "–"
        return Row(setting: setting, metric: metric, base: show(b), new: show(n), difference: ratio, verdict: verdict, gates: false)
    }

    static func rows(_ b: EvalSetting, _ n: EvalSetting, isReference: Bool) -> [Row] {
        let s = b.name
        func g(_ v: Double) -> String { String(format: "%.4g", v) }
        func pct(_ v: Double) -> String { String(format: "%.3f%%", 100 * v) }
        func sci(_ v: Double) -> String { String(format: "%.3e", v) }
        // Perplexity is judged on the mean NLL it is exp() of (where the error is symmetric),
        // and shown as perplexity ± its delta-method error.
        var out: [Row] = [
            judged(
                s, "perplexity", base: (b.meanNLL, b.nllStandardError), new: (n.meanNLL, n.nllStandardError), lowerIsBetter: true, gates: true,
                format: g, shownBase: (b.perplexity, b.perplexity * b.nllStandardError), shownNew: (n.perplexity, n.perplexity * n.nllStandardError)),
        ]
        if !isReference, let vb = b.vsReference, let vn = n.vsReference {
            out.append(judged(
                s, "PPL ratio vs reference", base: (vb.perplexityRatio, vb.perplexityRatioStandardError),
                new: (vn.perplexityRatio, vn.perplexityRatioStandardError), lowerIsBetter: true, gates: true, format: g))
            out.append(judged(
                s, "mean KL (nats)", base: (vb.klDivergence.mean, vb.klDivergence.standardError),
                new: (vn.klDivergence.mean, vn.klDivergence.standardError), lowerIsBetter: true, gates: true, format: sci))
            out.append(shown(s, "median KL", vb.klDivergence.median, vn.klDivergence.median, format: sci))
            out.append(shown(s, "KL p99", vb.klDivergence.p99, vn.klDivergence.p99, format: sci))
            out.append(judged(
                s, "mean Δp", base: (vb.deltaP.mean, vb.deltaP.standardError), new: (vn.deltaP.mean, vn.deltaP.standardError),
                lowerIsBetter: nil, gates: true, format: pct))
            out.append(judged(
                s, "RMS Δp", base: (vb.rmsDeltaP, vb.rmsDeltaPStandardError), new: (vn.rmsDeltaP, vn.rmsDeltaPStandardError),
                lowerIsBetter: true, gates: true, format: pct))
            out.append(judged(
                s, "same top p", base: (vb.sameTopP, vb.sameTopPStandardError), new: (vn.sameTopP, vn.sameTopPStandardError),
                lowerIsBetter: false, gates: true, format: pct))
        }
        out.append(exact(s, "bits per weight", b.bitsPerWeight, n.bitsPerWeight) { String(format: "%.3f", $0) })
        out.append(exact(s, "weight bytes", Double(b.weightBytes), Double(n.weightBytes)) { String(format: "%.0f", $0) })
        if let r = speed(s, "prefill t/s", b.prefillTokensPerSecond, n.prefillTokensPerSecond) { out.append(r) }
        if let r = speed(s, "decode t/s", b.decodeTokensPerSecond, n.decodeTokensPerSecond) { out.append(r) }
        return out
    }

    /// The Markdown report: one row per setting and figure.
    public func markdown(baseName: String, newName: String, reportOnly: Bool) -> String {
        var out: [String] = []
        out.append("# QuantBench eval comparison")
        out.append("")
        out.append("- **base**: `\(baseName)`")
        out.append("- **new**: `\(newName)`")
        out.append("- ± is one standard error; a figure differs when the gap exceeds 1.96 combined errors (unpaired, so conservative); speeds when their 95% intervals do not overlap")
        out.append("")
        out.append("| setting | figure | base | new | difference | verdict |")
        out.append("| --- | --- | ---: | ---: | ---: | --- |")
        for r in rows {
            let v: String
            switch r.verdict {
            case .worse where r.gates: v = "**WORSE**"
            case .invalid: v = "**INVALID**"
            case .shown: v = "–"
            default: v = r.verdict.rawValue
            }
            out.append("| \(r.setting) | \(r.metric) | \(r.base) | \(r.new) | \(r.difference) | \(v) |")
        }
        if !onlyInBase.isEmpty { out.append(""); out.append("Only in base: \(onlyInBase.joined(separator: ", ")).") }
        if !onlyInNew.isEmpty { out.append(""); out.append("Only in new: \(onlyInNew.joined(separator: ", ")).") }
        out.append("")
        if rows.isEmpty {
            out.append("**Nothing compared**: the two files share no setting.")
        } else if !invalid.isEmpty {
            out.append("**Cannot be judged**: \(invalid.map { "\($0.setting) \($0.metric)" }.joined(separator: ", ")) (NaN, infinite or missing).")
        } else if regressions.isEmpty {
            out.append("No quality figure is worse beyond its uncertainty.")
        } else {
            out.append("**Worse beyond the uncertainty**: \(regressions.map { "\($0.setting) \($0.metric)" }.joined(separator: ", "))" + (reportOnly ? " (report only)." : "."))
        }
        return out.joined(separator: "\n") + "\n"
    }
}
