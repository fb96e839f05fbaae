import QBFormats
import QBKernels

/// Qwen2 and Qwen2.5: Llama's block with biases on the Q, K and V projections.
public final class Qwen2Model: LanguageModel {
    public static let architecture = Architecture(
        name: "qwen2", huggingFaceTypes: ["qwen2"], huggingFaceClass: "Qwen2ForCausalLM",
        layerTable: [.attentionNorm, .wq, .qBias, .wk, .kBias, .wv, .vBias, .wo, .ffnNorm, .gate, .up, .down],
        ggufRopeStyle: .halves,
        validate: { c, path in try rejectSlidingWindow(c, path) },
        build: { try Qwen2Model(parts: $0) })

    public let parts: ModelParts
    let biases: [(q: FloatBuffer, k: FloatBuffer, v: FloatBuffer)]

    public init(parts: ModelParts) throws {
        self.parts = parts
        biases = try parts.weights.layers.enumerated().map { l, layer in
            guard let q = layer.qBias, let k = layer.kBias, let v = layer.vBias else {
                throw ModelError.missingTensor(path: parts.source.path, tensor: "layer \(l) attention biases (q, k, v)")
            }
            return (q, k, v)
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
            // Attention, with biased projections.
            step.norm(layer.attentionNorm)
            step.projectQKV(layer)
            step.addQKVBiases(q: biases[l].q, k: biases[l].k, v: biases[l].v)
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

/// Qwen configs may ask for sliding-window attention, which these forward passes do not do.
func rejectSlidingWindow(_ c: TransformerConfig, _ path: String) throws {
    if c.useSlidingWindow == true {
        throw ModelError.invalidField(path: path, field: "use_sliding_window", reason: "sliding-window attention is not supported")
    }
}
