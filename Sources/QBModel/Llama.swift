import QBFormats
import QBKernels

/// Llama 2 / 3 / 3.1 / 3.2 (and llama2.c's models): pre-norm attention with RoPE and
/// grouped-query attention, a SwiGLU MLP, no biases.
public final class LlamaModel: LanguageModel {
    public static let architecture = Architecture(
        name: "llama", huggingFaceTypes: ["llama"], huggingFaceClass: "LlamaForCausalLM",
        layerTable: LayerTensorSpec.llamaLayer, ggufRopeStyle: .interleaved,
        validate: { c, path in
            if c.attentionBias == true {
                throw ModelError.invalidField(path: path, field: "attention_bias", reason: "biases are not supported")
            }
            if c.mlpBias == true { throw ModelError.invalidField(path: path, field: "mlp_bias", reason: "biases are not supported") }
        },
        build: { try LlamaModel(parts: $0) })

    public let parts: ModelParts

    public init(parts: ModelParts) throws {
        self.parts = parts
    }

    public convenience init(
        config: TransformerConfig, ropeStyle: RopeStyle, weights: ModelWeights, source: ModelSource,
        stopTokens: [Int32], bosToken: Int32?, rope: Rope? = nil
    ) throws {
        try self.init(parts: ModelParts(
            config: config, rope: try rope ?? config.rope(style: ropeStyle, path: source.path), weights: weights,
            source: source, stopTokens: stopTokens, bosToken: bosToken))
    }

    // One chunk, top to bottom as the paper draws it.
    public func forwardChunk(
        _ tokens: [Int32], state: InferenceState, logits request: LogitsRequest, isCancelled: () -> Bool
    ) -> [Float]? {
        let step = TransformerSteps(config: config, rope: rope, weights: weights, state: state, count: tokens.count)
        step.embed(tokens)
        step.trace("the token embedding")
        step.ropeAngles()

        for (l, layer) in weights.layers.enumerated() {
            if isCancelled() { return nil }
            // Attention.
            step.norm(layer.attentionNorm)
            step.projectQKV(layer)
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
