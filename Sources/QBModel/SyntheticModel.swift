import Foundation
import QBFormats
import QBKernels
import QBSupport

/// Deterministic random-weight models of any supported architecture: the same preset, seed and dtype always give
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
        /// Qwen2 for unit tests: Q, K and V biases, GQA, tied head.
        case tinyQwen2 = "tiny-qwen2"
        /// Qwen3 for unit tests: per-head query and key norms, a head dimension (32) that is
        /// not hidden / heads (16), untied head.
        case tinyQwen3 = "tiny-qwen3"
        /// The shape of Qwen2.5 0.5B.
        case qwen25_05b = "qwen2.5-0.5b"
        /// The shape of Qwen3 0.6B.
        case qwen3_06b = "qwen3-0.6b"
        /// `ab`'s default CI model: a Llama of about 125 M parameters (GPT-2 small's width
        /// and depth, GQA, untied head), big enough at q4_0 that the kernels, not the
        /// harness, dominate every timed operation, small enough to generate in seconds.
        case ci = "ci-125m"
        /// Gemma 3 for unit tests: seven layers (five sliding, the sixth global, one more
        /// sliding) with a window of 16, so short tests cross it; GQA; a head dimension (32)
        /// that is not hidden / heads (16); tied head.
        case tinyGemma3 = "tiny-gemma3"
        /// The shape of Gemma 3 270M.
        case gemma3_270m = "gemma3-270m"

        public var config: TransformerConfig {
            switch self {
            case .tiny:
                var c = TransformerConfig(
                    hiddenSize: 128, intermediateSize: 384, numHiddenLayers: 2, numAttentionHeads: 4,
                    numKeyValueHeads: 2, vocabSize: 1024, rmsNormEps: 1e-5, ropeTheta: 500000,
                    ropeScaling: RopeScalingConfig(llama3: .init(
                        factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64)),
                    tieWordEmbeddings: false, maxPositionEmbeddings: 2048)
                c.headDim = 32
                return c
            case .llama32_1b:
                var c = TransformerConfig(
                    hiddenSize: 2048, intermediateSize: 8192, numHiddenLayers: 16, numAttentionHeads: 32,
                    numKeyValueHeads: 8, vocabSize: 128256, rmsNormEps: 1e-5, ropeTheta: 500000,
                    ropeScaling: RopeScalingConfig(llama3: .init(
                        factor: 32, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192)),
                    tieWordEmbeddings: true, maxPositionEmbeddings: 131072)
                c.headDim = 64
                return c
            case .tinyQwen2:
                return qwen(2, hidden: 64, ffn: 160, layers: 2, heads: 4, kvHeads: 2, vocab: 1024, tied: true, context: 2048)
            case .tinyQwen3:
                return qwen(3, hidden: 64, ffn: 160, layers: 2, heads: 4, kvHeads: 2, vocab: 1024, tied: false, context: 2048, headDim: 32)
            case .qwen25_05b:
                return qwen(2, hidden: 896, ffn: 4864, layers: 24, heads: 14, kvHeads: 2, vocab: 151936, tied: true, context: 32768)
            case .ci:
                var c = TransformerConfig(
                    hiddenSize: 768, intermediateSize: 2048, numHiddenLayers: 12, numAttentionHeads: 12,
                    numKeyValueHeads: 4, vocabSize: 32000, rmsNormEps: 1e-5, ropeTheta: 500000,
                    tieWordEmbeddings: false, maxPositionEmbeddings: 2048)
                c.headDim = 64
                return c
            case .qwen3_06b:
                return qwen(3, hidden: 1024, ffn: 3072, layers: 28, heads: 16, kvHeads: 8, vocab: 151936, tied: true, context: 40960, headDim: 128)
            case .tinyGemma3:
                return gemma3(hidden: 64, ffn: 160, layers: 7, heads: 4, kvHeads: 2, headDim: 32, vocab: 1024, window: 16, context: 2048)
            case .gemma3_270m:
                return gemma3(hidden: 640, ffn: 2048, layers: 18, heads: 4, kvHeads: 1, headDim: 256, vocab: 262144, window: 512, context: 32768)
            }
        }

        /// A Gemma 3 text config as the released models state it: RoPE 1e6 on global layers
        /// and 1e4 on sliding ones, every sixth layer global, eps 1e-6, query_pre_attn_scalar
        /// the head dimension, tied head.
        private func gemma3(
            hidden: Int, ffn: Int, layers: Int, heads: Int, kvHeads: Int, headDim: Int, vocab: Int, window: Int, context: Int
        ) -> TransformerConfig {
            var c = TransformerConfig(
                hiddenSize: hidden, intermediateSize: ffn, numHiddenLayers: layers, numAttentionHeads: heads,
                numKeyValueHeads: kvHeads, vocabSize: vocab, rmsNormEps: 1e-6, ropeTheta: 1_000_000,
                tieWordEmbeddings: true, maxPositionEmbeddings: context, headDim: headDim)
            c.modelType = "gemma3_text"
            c.architectures = ["Gemma3ForCausalLM"]
            c.hiddenAct = nil
            c.hiddenActivation = "gelu_pytorch_tanh"
            c.attentionBias = false
            c.queryPreAttnScalar = Float(headDim)
            c.slidingWindow = window
            c.slidingWindowPattern = 6
            c.ropeLocalBaseFreq = 10000
            return c
        }

        /// A Qwen2 or Qwen3 config as the released models state it (rope_theta 1e6, eps 1e-6).
        private func qwen(
            _ version: Int, hidden: Int, ffn: Int, layers: Int, heads: Int, kvHeads: Int, vocab: Int, tied: Bool,
            context: Int, headDim: Int? = nil
        ) -> TransformerConfig {
            var c = TransformerConfig(
                hiddenSize: hidden, intermediateSize: ffn, numHiddenLayers: layers, numAttentionHeads: heads,
                numKeyValueHeads: kvHeads, vocabSize: vocab, rmsNormEps: 1e-6, ropeTheta: 1_000_000,
                tieWordEmbeddings: tied, maxPositionEmbeddings: context, headDim: headDim)
            c.modelType = "qwen\(version)"
            c.architectures = ["Qwen\(version)ForCausalLM"]
            if version == 3 { c.attentionBias = false }
            return c
        }
    }

    /// Writes config.json and model.safetensors into `directory` (created if needed).
    /// `bos` and `eos` are the ids the tokenizer written beside it declares.
    public static func write(
        config base: TransformerConfig, seed: UInt64, dtype: DType, to directory: URL, bos: Int?, eos: [Int]
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

        let decls = try declarations(config, dtype: dtype)
        let target = directory.appendingPathComponent("model.safetensors")
        try AtomicWriter.produce(at: target) { tmp in
            try SafetensorsWriter.write(path: tmp.path, declarations: decls) { d, start, chunk in
                fill(chunk, name: d.name, start: start, config: config, seed: seed)
            }
        }
    }

    /// The tensors of a checkpoint of `c`'s architecture in Hugging Face naming, in file order.
    static func declarations(_ c: TransformerConfig, dtype: DType) throws -> [SafetensorsWriter.Declaration] {
        var d: [SafetensorsWriter.Declaration] = []
        func add(_ name: String, _ shape: [Int]) { d.append(.init(name: name, dtype: dtype, shape: shape)) }
        let n = TensorNames.huggingFace
        let table = try c.architecture(path: "config").layerTable
        add(n.embedding, [c.vocabSize, c.hiddenSize])
        for l in 0..<c.numHiddenLayers {
            for spec in table { add(n.layer(l, spec), spec.shape(c)) }
        }
        add(n.finalNorm, [c.hiddenSize])
        if !c.tied { add(n.output, [c.vocabSize, c.hiddenSize]) }
        return d
    }

    /// Values for a chunk of tensor `name`. Matrices are uniform with the variance of
    /// 1/fan_in, so activations stay near unit scale at any width and attention scores
    /// are neither flat nor one-hot; the residual outputs (o_proj, down_proj) are scaled
    /// down by the depth; norms scatter around 1 so a missing norm weight shows; biases are
    /// uniform in ±0.5, large enough that a dropped bias moves the logits.
    static func fill(_ out: UnsafeMutableBufferPointer<Float>, name: String, start: Int, config c: TransformerConfig, seed: UInt64) {
        var rng = SplitMix64(seed: seed ^ FNV1a.hash(name) &+ UInt64(start) &* 0x9E37_79B9_7F4A_7C15)
        // The stored value of a norm factor around 1 (Gemma stores w for a factor of 1 + w).
        let normBase = 1 - Double((try? c.architecture(path: "config"))?.huggingFaceNormOffset ?? 0)
        let isNorm = name.hasSuffix("norm.weight"), isBias = name.hasSuffix(".bias")
        let fanIn: Int
        if name.contains("o_proj") { fanIn = c.qDim } else if name.contains("down_proj") { fanIn = c.intermediateSize } else { fanIn = c.hiddenSize }
        var scale = (3.0 / Double(fanIn)).squareRoot()
        if name.contains("o_proj") || name.contains("down_proj") { scale /= Double(2 * c.numHiddenLayers).squareRoot() }
        for i in 0..<out.count {
            let u = rng.nextUnit() * 2 - 1  // uniform in [-1, 1)
            out[i] = isNorm ? Float(normBase + 0.25 * u) : isBias ? Float(0.5 * u) : Float(u * scale)
        }
    }

}
