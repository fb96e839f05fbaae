import Foundation
import QBFormats
import QBKernels
import QBSupport

/// Deterministic random-weight Llama models: the same preset, seed and dtype always give
/// byte-identical files. They exercise the real loading and compute paths at any shape;
/// random weights say nothing about quality.
public enum SyntheticModel {
    /// Named shapes.
    public enum Preset: String, CaseIterable, Sendable {
        /// Small enough for unit tests in a debug build, yet with GQA, untied head and
        /// llama3 rope scaling whose three frequency bands all occur.
        case tiny
        /// The shape of Llama 3.2 1B.
        case llama32_1b = "llama-3.2-1b"

        public var config: LlamaConfig {
            switch self {
            case .tiny:
                var c = LlamaConfig(
                    hiddenSize: 128, intermediateSize: 384, numHiddenLayers: 2, numAttentionHeads: 4,
                    numKeyValueHeads: 2, vocabSize: 1024, rmsNormEps: 1e-5, ropeTheta: 500000,
                    ropeScaling: RopeScalingConfig(llama3: .init(
                        factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64)),
                    tieWordEmbeddings: false, maxPositionEmbeddings: 2048)
                c.headDim = 32
                return c
            case .llama32_1b:
                var c = LlamaConfig(
                    hiddenSize: 2048, intermediateSize: 8192, numHiddenLayers: 16, numAttentionHeads: 32,
                    numKeyValueHeads: 8, vocabSize: 128256, rmsNormEps: 1e-5, ropeTheta: 500000,
                    ropeScaling: RopeScalingConfig(llama3: .init(
                        factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192)),
                    tieWordEmbeddings: true, maxPositionEmbeddings: 131072)
                c.headDim = 64
                return c
            }
        }
    }

    /// Writes config.json and model.safetensors into `directory` (created if needed).
    /// `bos` and `eos` are the ids the tokenizer written beside it declares.
    public static func write(
        config base: LlamaConfig, seed: UInt64, dtype: DType, to directory: URL, bos: Int?, eos: [Int]
    ) throws {
        var config = base
        config.bosTokenId = bos
        config.eosTokenId = eos.isEmpty ? nil : TokenIDList(eos)
        config.torchDtype = ["F32": "float32", "F16": "float16", "BF16": "bfloat16"][dtype.rawValue]
        try config.validate(path: directory.appendingPathComponent("config.json").path)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicWriter.write(try encoder.encode(config), to: directory.appendingPathComponent("config.json"))

        let decls = declarations(config, dtype: dtype)
        let target = directory.appendingPathComponent("model.safetensors")
        try AtomicWriter.produce(at: target) { tmp in
            try SafetensorsWriter.write(path: tmp.path, declarations: decls) { d, start, chunk in
                fill(chunk, name: d.name, start: start, config: config, seed: seed)
            }
        }
    }

    /// The tensors of a Llama checkpoint in Hugging Face naming, in file order.
    static func declarations(_ c: LlamaConfig, dtype: DType) -> [SafetensorsWriter.Declaration] {
        var d: [SafetensorsWriter.Declaration] = []
        func add(_ name: String, _ shape: [Int]) { d.append(.init(name: name, dtype: dtype, shape: shape)) }
        let n = TensorNames.huggingFace
        add(n.embedding, [c.vocabSize, c.hiddenSize])
        for l in 0..<c.numHiddenLayers {
            add(n.layer(l, n.attentionNorm), [c.hiddenSize])
            add(n.layer(l, n.wq), [c.qDim, c.hiddenSize])
            add(n.layer(l, n.wk), [c.kvDim, c.hiddenSize])
            add(n.layer(l, n.wv), [c.kvDim, c.hiddenSize])
            add(n.layer(l, n.wo), [c.hiddenSize, c.qDim])
            add(n.layer(l, n.ffnNorm), [c.hiddenSize])
            add(n.layer(l, n.gate), [c.intermediateSize, c.hiddenSize])
            add(n.layer(l, n.up), [c.intermediateSize, c.hiddenSize])
            add(n.layer(l, n.down), [c.hiddenSize, c.intermediateSize])
        }
        add(n.finalNorm, [c.hiddenSize])
        if !c.tied { add(n.output, [c.vocabSize, c.hiddenSize]) }
        return d
    }

    /// Values for a chunk of tensor `name`. Matrices are uniform with the variance of
    /// 1/fan_in, so activations stay near unit scale at any width and attention scores
    /// are neither flat nor one-hot; the residual outputs (o_proj, down_proj) are scaled
    /// down by the depth; norms scatter around 1 so a missing norm weight shows.
    static func fill(_ out: UnsafeMutableBufferPointer<Float>, name: String, start: Int, config c: LlamaConfig, seed: UInt64) {
        var rng = SplitMix64(seed: seed ^ FNV1a.hash(name) &+ UInt64(start) &* 0x9E37_79B9_7F4A_7C15)
        let isNorm = name.hasSuffix("norm.weight")
        let fanIn: Int
        if name.contains("o_proj") { fanIn = c.qDim } else if name.contains("down_proj") { fanIn = c.intermediateSize } else { fanIn = c.hiddenSize }
        var scale = (3.0 / Double(fanIn)).squareRoot()
        if name.contains("o_proj") || name.contains("down_proj") { scale /= Double(2 * c.numHiddenLayers).squareRoot() }
        for i in 0..<out.count {
            let u = rng.nextUnit() * 2 - 1  // uniform in [-1, 1)
            out[i] = isNorm ? Float(1 + 0.25 * u) : Float(u * scale)
        }
    }

}
