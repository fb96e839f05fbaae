import Foundation
import QBModel

/// What `inspect` prints about a model.
public enum ModelReport {
    public static func describe(_ model: any LanguageModel) -> String {
        let c = model.config
        var lines: [String] = []
        lines.append("model: \(model.source.path)")
        lines.append("format: \(model.source.format.rawValue)")
        if let q = model.source.quantization {
            lines.append("quantized at load: \(q) (matrices whose width does not fit fall back; the mix is below)")
        }
        lines.append("architecture: \(model.architecture.name)")
        lines.append("  hidden \(c.hiddenSize), layers \(c.numHiddenLayers), heads \(c.numAttentionHeads), kv heads \(c.kvHeads), head dim \(c.headDimension)")
        lines.append("  ffn \(c.intermediateSize), vocab \(c.vocabSize), context \(c.contextLength), rms eps \(c.eps)")
        var rope = "  rope theta \(c.theta), style \(model.rope.style.rawValue)"
        if let s = c.ropeScalingEntry, let kind = s.ropeType ?? s.type {
            rope += ", scaling \(kind) (factor \(s.factor ?? 1), low \(s.lowFreqFactor ?? 0), high \(s.highFreqFactor ?? 0), original context \(s.originalMaxPositionEmbeddings ?? 0))"
        }
        lines.append(rope)
        lines.append("  output head: \(c.tied ? "tied to the embedding" : "separate")")
        let tensors = model.source.tensors
        let params = tensors.reduce(0) { $0 + $1.elements }
        let bytes = tensors.reduce(0) { $0 + $1.bytes }
        let byType = Dictionary(grouping: tensors, by: \.dtype)
        lines.append(String(format: "parameters: %d (%.2f M), %@, %.3f bits per weight", params, Double(params) / 1e6,
                            formatBytes(bytes), params > 0 ? Double(bytes * 8) / Double(params) : 0))
        for (dtype, ts) in byType.sorted(by: { $0.key < $1.key }) {
            let n = ts.reduce(0) { $0 + $1.elements }, b = ts.reduce(0) { $0 + $1.bytes }
            lines.append(String(format: "  %@: %d tensors, %d weights, %@", dtype, ts.count, n, formatBytes(b)))
        }
        lines.append("tensors:")
        let width = tensors.map(\.name.count).max() ?? 0
        for t in tensors {
            let name = t.name.padding(toLength: width, withPad: " ", startingAt: 0)
            let bpw = t.elements > 0 ? Double(t.bytes * 8) / Double(t.elements) : 0
            lines.append(String(format: "  %@  %@  %@  %.2f bpw  %@", name, t.dtype, "\(t.shape)", bpw, formatBytes(t.bytes)))
        }
        return lines.joined(separator: "\n")
    }

    public static func formatBytes(_ n: Int) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var v = Double(n), i = 0
        while v >= 1024 && i < units.count - 1 { v /= 1024; i += 1 }
        return i == 0 ? "\(n) B" : String(format: "%.2f %@", v, units[i])
    }
}
