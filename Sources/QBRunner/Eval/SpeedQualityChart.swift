import Foundation

/// The size-against-quality picture of an `eval`: a hand-written SVG (no dependencies)
/// with three panels sharing the x axis, bits per weight (the trade-off users choose on).
/// Left: KL divergence against the reference on a log scale, ± one standard error as a
/// vertical bar (the reference itself, at KL = 0, sits on the bottom edge, marked "= 0").
/// Middle: perplexity with its 95% interval. Right: decode tokens/s with its interval. One
/// labelled point per setting; better settings are to the left and lower (and higher on
/// the right).
public enum SpeedQualityChart {
    public static func svg(_ r: EvalResult) -> String {
        // Only finite measurements are drawn: a NaN or infinite one would make the axes
        // (and the tick loops over them) meaningless. Such a setting is listed as not shown.
        let all = r.settings.map { s in
            (name: s.name, speed: s.decodeTokensPerSecond?.median ?? 0, speedLow: s.decodeTokensPerSecond?.low ?? 0,
             speedHigh: s.decodeTokensPerSecond?.high ?? 0, bits: s.bitsPerWeight, kl: s.meanKL, klSE: s.klStandardError,
             ppl: s.perplexity, low: s.perplexityLow, high: s.perplexityHigh, isReference: s.name == r.reference)
        }
        let finite = { (p: (name: String, speed: Double, speedLow: Double, speedHigh: Double, bits: Double, kl: Double, klSE: Double, ppl: Double, low: Double, high: Double, isReference: Bool)) in
            [p.speed, p.speedLow, p.speedHigh, p.bits, p.kl, p.klSE, p.ppl, p.low, p.high].allSatisfy(\.isFinite)
        }
        let points = all.filter(finite)
        let omitted = all.filter { !finite($0) }.map(\.name)
        let panelW = 360.0, panelH = 300.0, left = 70.0, top = 50.0, gap = 90.0
        let width = left + 3 * panelW + 2 * gap + 30, height = top + panelH + 70

        // x: bits per weight, padded by 10% on each side and widened to round ticks.
        let speeds = points.map(\.bits)
        var xMin = speeds.min() ?? 0, xMax = speeds.max() ?? 1
        if xMax - xMin < 1e-9 { xMin -= 1; xMax += 1 }
        let xPad = (xMax - xMin) * 0.1
        let xStep = niceStep((xMax - xMin + 2 * xPad) / 4)
        xMin = max(0, ((xMin - xPad) / xStep).rounded(.down) * xStep)
        xMax = ((xMax + xPad) / xStep).rounded(.up) * xStep

        // Left y: log10 KL; the floor is a decade below the smallest positive KL.
        let positive = points.map(\.kl).filter { $0 > 0 }
        let klHigh = log10(positive.max() ?? 1e-3).rounded(.up)
        var klLow = log10(positive.min() ?? 1e-4).rounded(.down) - 1
        if klHigh - klLow < 2 { klLow = klHigh - 2 }
        // Right y: perplexity, intervals included.
        var pMin = points.map(\.low).min() ?? 1, pMax = points.map(\.high).max() ?? 2
        let pStep = niceStep(max((pMax - pMin) * 1.2, 1e-4) / 4)
        pMin = ((pMin - pStep / 4) / pStep).rounded(.down) * pStep
        pMax = ((pMax + pStep / 4) / pStep).rounded(.up) * pStep

        var s: [String] = []
        s.append(#"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))" font-family="sans-serif" font-size="12">"#)
        s.append(#"<rect width="100%" height="100%" fill="white"/>"#)
        s.append(#"<text x="\#(Int(width / 2))" y="22" text-anchor="middle" font-size="15">\#(escape("Size against quality and speed: \(URL(fileURLWithPath: r.model.path).lastPathComponent), reference \(r.reference)"))</text>"#)

        func panel(_ x0: Double, title: String, yLabel: String, ticks: [(Double, String)], place: (Double) -> Double,
                   dots: [(x: Double, y: Double, label: String, bar: (Double, Double)?, floor: Bool)]) {
            s.append(#"<g transform="translate(\#(x0),\#(top))">"#)
            s.append(#"<rect width="\#(panelW)" height="\#(panelH)" fill="none" stroke="dimgray"/>"#)
            s.append(#"<text x="\#(panelW / 2)" y="-8" text-anchor="middle">\#(escape(title))</text>"#)
            for (v, label) in ticks {
                let y = place(v)
                s.append(#"<line x1="0" x2="\#(panelW)" y1="\#(fmt(y))" y2="\#(fmt(y))" stroke="gainsboro"/>"#)
                s.append(#"<text x="-6" y="\#(fmt(y + 4))" text-anchor="end">\#(escape(label))</text>"#)
            }
            for v in Self.ticks(from: xMin, through: xMax + xStep / 2, by: xStep) {
                let x = (v - xMin) / (xMax - xMin) * panelW
                s.append(#"<line x1="\#(fmt(x))" x2="\#(fmt(x))" y1="\#(panelH)" y2="\#(panelH + 5)" stroke="dimgray"/>"#)
                s.append(#"<text x="\#(fmt(x))" y="\#(panelH + 18)" text-anchor="middle">\#(xStep >= 1 ? String(format: "%.0f", v) : BenchReport.format(v))</text>"#)
            }
            s.append(#"<text x="\#(panelW / 2)" y="\#(panelH + 38)" text-anchor="middle">bits per weight</text>"#)
            s.append(#"<text transform="translate(-52,\#(panelH / 2)) rotate(-90)" text-anchor="middle">\#(escape(yLabel))</text>"#)
            // Points at the same spot share one label; a label that would cover another is
            // moved down a line at a time.
            var groups: [(x: Double, y: Double, labels: [String], bar: (Double, Double)?, floor: Bool)] = []
            for d in dots {
                let x = (d.x - xMin) / (xMax - xMin) * panelW, y = place(d.y)
                if let i = groups.firstIndex(where: { abs($0.x - x) < 3 && abs($0.y - y) < 3 }) {
                    groups[i].labels.append(d.label)
                } else {
                    groups.append((x, y, [d.label], d.bar, d.floor))
                }
            }
            var placed: [(x0: Double, x1: Double, y: Double)] = []
            for g in groups {
                if let (lo, hi) = g.bar {
                    s.append(#"<line x1="\#(fmt(g.x))" x2="\#(fmt(g.x))" y1="\#(fmt(place(lo)))" y2="\#(fmt(place(hi)))" stroke="steelblue" stroke-width="2"/>"#)
                }
                s.append(#"<circle cx="\#(fmt(g.x))" cy="\#(fmt(g.y))" r="4.5" fill="\#(g.floor ? "white" : "steelblue")" stroke="steelblue" stroke-width="1.5"/>"#)
                let label = g.labels.joined(separator: " = ")
                let w = Double(label.count) * 7
                // Right above, left above, right below, left below; else further down.
                let candidates: [(x0: Double, y: Double, anchor: String)] = [
                    (g.x + 7, g.y - 6, "start"), (g.x - 7 - w, g.y - 6, "end"), (g.x + 7, g.y + 16, "start"),
                    (g.x - 7 - w, g.y + 16, "end"),
                ]
                func free(_ x0: Double, _ y: Double) -> Bool {
                    !placed.contains { abs($0.y - y) < 13 && x0 < $0.x1 && $0.x0 < x0 + w }
                }
                var spot = candidates.first { free($0.x0, $0.y) } ?? candidates[0]
                while !free(spot.x0, spot.y) { spot.y += 13 }
                placed.append((spot.x0, spot.x0 + w, spot.y))
                let tx = spot.anchor == "end" ? spot.x0 + w : spot.x0
                s.append(#"<text x="\#(fmt(tx))" y="\#(fmt(spot.y))" text-anchor="\#(spot.anchor)">\#(escape(label))</text>"#)
            }
            s.append("</g>")
        }

        let klTicks = Self.ticks(from: klLow, through: klHigh, by: 1).map { ($0, "1e\(Int($0))") }
        let klPlace = { (v: Double) in panelH - (v - klLow) / (klHigh - klLow) * panelH }
        // Error bars on the log scale: mean ± one standard error, the lower end clamped to the floor.
        panel(left, title: "KL divergence vs reference (log scale, ± SE)", yLabel: "mean KL (nats)", ticks: klTicks, place: klPlace,
              dots: points.map { p in
                  let bar: (Double, Double)? = p.kl > 0
                      ? (max(klLow, log10(max(p.kl - p.klSE, 1e-300))), min(klHigh, log10(p.kl + p.klSE))) : nil
                  return (p.bits, p.kl > 0 ? log10(p.kl) : klLow, p.isReference || p.kl <= 0 ? "\(p.name) (= 0)" : p.name, bar, p.kl <= 0)
              })
        let decimals = max(0, Int(-log10(pStep).rounded(.down)))
        let pTicks = Self.ticks(from: pMin, through: pMax + pStep / 2, by: pStep).map { v in (v, String(format: "%.\(decimals)f", v)) }
        let pPlace = { (v: Double) in panelH - (v - pMin) / (pMax - pMin) * panelH }
        panel(left + panelW + gap, title: "Perplexity (95% interval)", yLabel: "perplexity", ticks: pTicks, place: pPlace,
              dots: points.map { p in (p.bits, p.ppl, p.name, (p.low, p.high), false) })
        // Decode speed with its interval over the repetitions.
        var sMin = points.map { min($0.speedLow, $0.speed) }.min() ?? 0, sMax = points.map { max($0.speedHigh, $0.speed) }.max() ?? 1
        let sStep = niceStep(max((sMax - sMin) * 1.2, 1e-4) / 4)
        sMin = max(0, ((sMin - sStep / 4) / sStep).rounded(.down) * sStep)
        sMax = ((sMax + sStep / 4) / sStep).rounded(.up) * sStep
        let sTicks = stride(from: sMin, through: sMax + sStep / 2, by: sStep).map { v in (v, sStep >= 1 ? String(format: "%.0f", v) : BenchReport.format(v)) }
        let sPlace = { (v: Double) in panelH - (v - sMin) / (sMax - sMin) * panelH }
        panel(left + 2 * (panelW + gap), title: "Decode speed (interval)", yLabel: "decode tokens/s", ticks: sTicks, place: sPlace,
              dots: points.map { p in (p.bits, p.speed, p.name, p.speedHigh > 0 ? (p.speedLow, p.speedHigh) : nil, false) })
        if !omitted.isEmpty {
            s.append(#"<text x="\#(Int(width / 2))" y="\#(Int(height - 8))" text-anchor="middle" fill="firebrick">\#(escape("not shown (NaN or infinite measurements): " + omitted.joined(separator: ", ")))</text>"#)
        }
        s.append("</svg>")
        return s.joined(separator: "\n") + "\n"
    }

    static func fmt(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Axis values from `start` through `end`: at most 50 of them, and none unless all three
    /// numbers are finite and the step moves (a step lost in rounding once looped forever).
    static func ticks(from start: Double, through end: Double, by step: Double) -> [Double] {
        guard start.isFinite, end.isFinite, step.isFinite, step > 0 else { return [] }
        var out: [Double] = []
        var i = 0.0
        while out.count < 50 {
            let v = start + i * step
            guard v <= end else { break }
            if let last = out.last, v <= last { break }
            out.append(v)
            i += 1
        }
        return out
    }

    /// 1, 2 or 5 times a power of ten, at least `raw`.
    static func niceStep(_ raw: Double) -> Double {
        guard raw > 0, raw.isFinite else { return 1 }
        let p = pow(10, (log10(raw)).rounded(.down))
        for m in [1.0, 2, 5, 10] where m * p >= raw { return m * p }
        return 10 * p
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
