import QBFormats
import QBKernels

/// Qwen3 (dense): Llama's block with an RMSNorm on every query and key head before RoPE,
/// no biases, and a head dimension of its own (`head_dim`, not hidden / heads).
public final class Qwen3Model: LanguageModel {
    public static let architecture = Architecture(
        name: "qwen3", huggingFaceTypes: ["qwen3"], huggingFaceClass: "Qwen3ForCausalLM",
        layerTable: [.attentionNorm, .wq, .wk, .wv, .qNorm, .kNorm, .wo, .ffnNorm, .gate, .up, .down],
        ggufRopeStyle: .halves,
        validate: { c, path in
            if c.attentionBias == true {
                throw ModelError.invalidField(path: path, field: "attention_bias", reason: "biases are not supported for qwen3")
            }
            try rejectSlidingWindow(c, path)
        },
        build: { try Qwen3Model(parts: $0) })

    public let parts: ModelParts
    let headNorms: [(q: FloatBuffer, k: FloatBuffer)]

    public init(parts: ModelParts) throws {
        self.parts = parts
        headNorms = try parts.weights.layers.enumerated().map { l, layer in
            guard let q = layer.qNorm, let k = layer.kNorm else {
                throw ModelError.missingTensor(path: parts.source.path, tensor: "layer \(l) query and key norms")
            }
            return (q, k)
        }
    }

    public func forwardChunk(
        _ tokens: [Int32], state: InferenceState, logits request: LogitsRequest, isCancelled: () -> Bool
    ) -> [Float]? {
        let step = TransformerSteps(config: config, rope: rope, weights: weights, state: state, count: tokens.count)
        step.embed(tokens)
        step.trace("the token embedding")
        step.ropeAngles()

        for (l, layer) in weights.layers.enumerated() {
            if isCancelled() { return nil }
            // Attention, with queries and keys normed per head before RoPE.
            step.norm(layer.attentionNorm)
            step.projectQKV(layer)
            step.normHeads(q: headNorms[l].q, k: headNorms[l].k)
            step.rotateQK()
            step.storeKV(layer: l)
            step.attention(layer: l)
            step.attentionOutput(layer.wo)

            // Feed-forward (SwiGLU).
            step.norm(layer.ffnNorm)
            step.swigluMLP(layer)
            step.traceLayer(l)
        }
        step.commit()
        return step.logits(request)
    }
}
