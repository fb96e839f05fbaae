import Foundation
import QBRunner

/// A series with the change points found in it.
public struct HistoryAnalysis: Sendable {
    public var series: HistorySeries
    public var changePoints: [ChangePoint]

    public init(series: HistorySeries, changePoints: [ChangePoint]) {
        self.series = series
        self.changePoints = changePoints
    }

    /// The first commit after each step.
    public var changeCommits: [String] { changePoints.compactMap { $0.index < series.points.count ? series.points[$0.index].commit : nil } }
}

/// What `history` prints and draws.
public enum HistoryReport {
    public static func analyze(_ series: [HistorySeries], detector: EDivisive) -> [HistoryAnalysis] {
        series.map { HistoryAnalysis(series: $0, changePoints: detector.changePoints($0.values)) }
    }

    /// Whether a larger value of `metric` is an improvement (bench's speeds, eval's top-1
    /// agreement); nil when neither direction is better (bits per weight, sizes).
    public static func higherIsBetter(_ metric: String) -> Bool? {
        if let m = Metric(rawValue: metric) { return m.higherIsBetter }
        switch metric {
        case "top1_agreement": return true
        case "perplexity", "mean_nll", "delta_nll", "mean_kl": return false
        case "bits_per_weight", "weight_bytes": return nil
        default: return metric.hasSuffix("_per_s") ? true : false
        }
    }

    static func short(_ commit: String) -> String { commit.count > 10 ? String(commit.prefix(10)) : commit }

    static func number(_ v: Double) -> String { String(format: "%.6g", v) }

    static func percent(_ v: Double) -> String { String(format: "%+.1f%%", v * 100) }

    static func pValue(_ p: Double) -> String { p < 1e-4 ? String(format: "%.1e", p) : String(format: "%.4f", p) }

    /// "worse", "better" or "" for a step of `change` in `metric`.
    static func verdict(_ change: Double, _ metric: String) -> String {
        guard let higher = higherIsBetter(metric), change != 0 else { return "" }
        return (change > 0) == higher ? "better" : "worse"
    }

    public static func describe(_ detector: EDivisive) -> String {
        "e-divisive means with a t-test (as Apache Otava): window \(detector.windowLength), p ≤ \(detector.maxPValue) (weak points at p ≤ \(detector.firstPassPValue)), minimum step \(String(format: "%g", detector.minMagnitude * 100))%"
    }

    /// One section per series: its context, each commit's value, the change points.
    public static func text(_ analyses: [HistoryAnalysis], database: String, runs: Int, detector: EDivisive) -> String {
        var out: [String] = []
        let flagged = analyses.reduce(0) { $0 + $1.changePoints.count }
        out.append("history \(database): \(runs) run\(runs == 1 ? "" : "s"), \(analyses.count) series, \(flagged) change point\(flagged == 1 ? "" : "s")")
        out.append("change points: \(describe(detector))")
        if analyses.isEmpty { out.append("(no series match)") }
        for a in analyses {
            let k = a.series.key, c = a.series.context
            out.append("")
            let direction = higherIsBetter(k.metric).map { $0 ? " (higher is better)" : " (lower is better)" } ?? ""
            out.append("## \(k.caseID) · \(k.metric)\(direction)")
            out.append("\(k.kind) \(k.suiteName) [suite \(k.suiteHash)] · model \(k.modelHash) \(c.modelName)\(k.quantization.isEmpty ? "" : " --quant \(k.quantization)")"
                + " · machine \(k.machine) (\(c.cpuModel), \(c.logicalCores) cores, \(c.threads) threads, kernel \(c.kernel)) · \(k.buildConfiguration)")
            let steps = Dictionary(a.changePoints.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
            let width = max(12, a.series.points.map { number($0.value).count }.max() ?? 0)
            out.append("  " + "commit".padding(toLength: 12, withPad: " ", startingAt: 0) + "first run".padding(toLength: 22, withPad: " ", startingAt: 0)
                + "value".padding(toLength: width + 2, withPad: " ", startingAt: 0) + "runs")
            for (i, p) in a.series.points.enumerated() {
                var line = "  " + (short(p.commit) + (p.dirty ? "+" : "")).padding(toLength: 12, withPad: " ", startingAt: 0)
                    + p.firstRecorded.padding(toLength: 22, withPad: " ", startingAt: 0)
                    + number(p.value).padding(toLength: width + 2, withPad: " ", startingAt: 0) + String(p.runs)
                if let s = steps[i] {
                    line += "   <- change point: \(number(s.meanBefore)) -> \(number(s.meanAfter)) (\(percent(s.relativeChange)))"
                }
                out.append(line)
            }
            if a.changePoints.isEmpty {
                out.append("no change point in \(a.series.points.count) commit\(a.series.points.count == 1 ? "" : "s")")
            }
            for s in a.changePoints where s.index < a.series.points.count {
                let v = verdict(s.relativeChange, k.metric)
                out.append("change point at \(a.series.points[s.index].commit) (first commit after the step, \(s.index + 1) of \(a.series.points.count)): "
                    + "\(number(s.meanBefore)) -> \(number(s.meanAfter)), \(percent(s.relativeChange))\(v.isEmpty ? "" : " (\(v))"), p = \(pValue(s.pValue))")
            }
        }
        return out.joined(separator: "\n") + "\n"
    }
}

/// The trend of each series as plain SVG: one panel per series, the values per commit, the
/// mean of each segment between change points, and a marker with the commit and the step
/// at each change point.
public enum TrendChart {
    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func f(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Round tick positions spanning [low, high].
    static func ticks(_ low: Double, _ high: Double, count: Int = 5) -> [Double] {
        let span = high - low
        guard span > 0, span.isFinite else { return [low] }
        let raw = span / Double(count)
        let magnitude = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        var out: [Double] = []
        var t = ceil(low / step) * step
        while t <= high + step * 1e-9, out.count < 50 {
            out.append(t)
            t += step
        }
        return out
    }

    public static func svg(_ analyses: [HistoryAnalysis]) -> String {
        let width = 960.0, panelHeight = 300.0
        let left = 90.0, right = 30.0, top = 48.0, bottom = 70.0
        let height = max(1, Double(analyses.count)) * panelHeight
        var out: [String] = []
        out.append(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="sans-serif" font-size="12">"##)
        out.append(##"<rect width="100%" height="100%" fill="white"/>"##)
        if analyses.isEmpty {
            out.append(##"<text x="20" y="40">no series match</text>"##)
        }
        for (panel, a) in analyses.enumerated() {
            let y0 = Double(panel) * panelHeight
            let plotTop = y0 + top, plotBottom = y0 + panelHeight - bottom
            let plotLeft = left, plotRight = width - right
            let values = a.series.values
            let k = a.series.key
            out.append(##"<g class="series">"##)
            out.append(##"<text x="\##(f(plotLeft))" y="\##(f(y0 + 20))" font-size="14" font-weight="bold">\##(escape("\(k.caseID) · \(k.metric)"))</text>"##)
            out.append(##"<text x="\##(f(plotLeft))" y="\##(f(y0 + 36))" fill="#555">\##(escape("\(k.suiteName) · model \(k.modelHash)\(k.quantization.isEmpty ? "" : " " + k.quantization) · machine \(k.machine) (\(a.series.context.cpuModel), \(a.series.context.threads) threads) · \(k.buildConfiguration)"))</text>"##)
            guard let lo = values.min(), let hi = values.max() else {
                out.append("</g>")
                continue
            }
            let pad = hi > lo ? (hi - lo) * 0.1 : max(abs(hi) * 0.05, 1e-9)
            let yLow = lo - pad, yHigh = hi + pad
            let n = values.count
            func x(_ i: Double) -> Double { n == 1 ? (plotLeft + plotRight) / 2 : plotLeft + (plotRight - plotLeft) * i / Double(n - 1) }
            func y(_ v: Double) -> Double { plotBottom - (plotBottom - plotTop) * (v - yLow) / (yHigh - yLow) }
            // Axes, ticks and labels.
            out.append(##"<line x1="\##(f(plotLeft))" y1="\##(f(plotBottom))" x2="\##(f(plotRight))" y2="\##(f(plotBottom))" stroke="black"/>"##)
            out.append(##"<line x1="\##(f(plotLeft))" y1="\##(f(plotTop))" x2="\##(f(plotLeft))" y2="\##(f(plotBottom))" stroke="black"/>"##)
            for t in ticks(yLow, yHigh) {
                out.append(##"<line x1="\##(f(plotLeft - 4))" y1="\##(f(y(t)))" x2="\##(f(plotRight))" y2="\##(f(y(t)))" stroke="#e5e5e5"/>"##)
                out.append(##"<text x="\##(f(plotLeft - 6))" y="\##(f(y(t) + 4))" text-anchor="end">\##(escape(String(format: "%.4g", t)))</text>"##)
            }
            let every = max(1, Int((Double(n) / 12).rounded(.up)))
            for i in stride(from: 0, to: n, by: every) {
                let label = escape(String(a.series.points[i].commit.prefix(7)))
                out.append(##"<text x="\##(f(x(Double(i))))" y="\##(f(plotBottom + 14))" text-anchor="end" transform="rotate(-35 \##(f(x(Double(i)))) \##(f(plotBottom + 14)))" font-size="10">\##(label)</text>"##)
            }
            out.append(##"<text x="\##(f((plotLeft + plotRight) / 2))" y="\##(f(y0 + panelHeight - 12))" text-anchor="middle">commit (oldest to newest, \##(n) commits)</text>"##)
            out.append(##"<text x="\##(f(16))" y="\##(f((plotTop + plotBottom) / 2))" text-anchor="middle" transform="rotate(-90 16 \##(f((plotTop + plotBottom) / 2)))">\##(escape(k.metric))</text>"##)
            // Segment means between change points.
            let bounds = [0] + a.changePoints.map(\.index) + [n]
            for (s, e) in zip(bounds, bounds.dropFirst()) where s < e {
                let m = values[s..<e].reduce(0, +) / Double(e - s)
                out.append(##"<line class="segment-mean" x1="\##(f(x(Double(s))))" y1="\##(f(y(m)))" x2="\##(f(x(Double(e - 1))))" y2="\##(f(y(m)))" stroke="#2a7" stroke-width="2" opacity="0.7"/>"##)
            }
            // The values.
            let path = values.enumerated().map { "\(f(x(Double($0.offset)))),\(f(y($0.element)))" }.joined(separator: " ")
            out.append(##"<polyline points="\##(path)" fill="none" stroke="#36c" stroke-width="1.5"/>"##)
            for (i, v) in values.enumerated() {
                out.append(##"<circle cx="\##(f(x(Double(i))))" cy="\##(f(y(v)))" r="2.5" fill="#36c"><title>\##(escape("\(a.series.points[i].commit): \(v)"))</title></circle>"##)
            }
            // A marker per change point, between the last commit before and the first after.
            for cp in a.changePoints where cp.index < n && cp.index > 0 {
                let cx = (x(Double(cp.index - 1)) + x(Double(cp.index))) / 2
                let commit = String(a.series.points[cp.index].commit.prefix(10))
                let label = "\(commit) \(HistoryReport.percent(cp.relativeChange))"
                out.append(##"<g class="change-point"><line x1="\##(f(cx))" y1="\##(f(plotTop))" x2="\##(f(cx))" y2="\##(f(plotBottom))" stroke="#d22" stroke-dasharray="4 3"/>"##
                    + ##"<path d="M \##(f(cx - 6)) \##(f(plotTop - 2)) L \##(f(cx + 6)) \##(f(plotTop - 2)) L \##(f(cx)) \##(f(plotTop + 8)) Z" fill="#d22"/>"##
                    + ##"<text x="\##(f(cx + 8))" y="\##(f(plotTop + 10))" fill="#d22">\##(escape(label))</text></g>"##)
            }
            out.append("</g>")
        }
        out.append("</svg>")
        return out.joined(separator: "\n") + "\n"
    }
}
