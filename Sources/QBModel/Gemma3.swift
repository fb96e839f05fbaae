import QBFormats
import QBKernels

/// Gemma 3 (text): embeddings scaled by sqrt(hidden); four RMSNorms per block (before and
/// after attention, before and after the MLP) whose factor is 1 + w; per-head query and
/// key norms before RoPE; GeGLU with the tanh GELU; sliding-window attention on five of
/// every six layers, with a RoPE base of their own; a head dimension of its own; scores
/// scaled by `query_pre_attn_scalar ** -0.5`; no softcapping. transformers' Gemma3ForCausalLM,
/// llama.cpp's `gemma3` graph.
///
/// The model holds each norm's factor (1 + w): GGUF files store it as such, Hugging Face
/// files store w (`Architecture.huggingFaceNormOffset`).
public final class Gemma3Model: LanguageModel {
    public static let architecture = Architecture(
        name: "gemma3", huggingFaceTypes: ["gemma3_text"], huggingFaceClass: "Gemma3ForCausalLM",
        layerTable: [
            .attentionNorm, .wq, .wk, .wv, .qNorm, .kNorm, .wo, .postAttentionNorm, .preFFNNorm, .gate, .up, .down,
            .postFFNNorm,
        ],
        ggufRopeStyle: .halves, activations: ["gelu_pytorch_tanh"], huggingFaceNormOffset: 1,
        readGGUF: readGGUF, writeGGUF: writeGGUF, validate: validate, build: { try Gemma3Model(parts: $0) })

    public let parts: ModelParts
    /// RoPE of the sliding-window layers (the global ones use `rope`).
    let localRope: Rope
    /// The window of each layer, nil for a global one.
    let windows: [Int?]
    let attentionScale: Float
    let embeddingScale: Float
    let norms: [(q: FloatBuffer, k: FloatBuffer, postAttention: FloatBuffer, postFFN: FloatBuffer)]

    public init(parts: ModelParts) throws {
        self.parts = parts
        let c = parts.config, path = parts.source.path
        norms = try parts.weights.layers.enumerated().map { l, layer in
            guard let q = layer.qNorm, let k = layer.kNorm, let pa = layer.postAttentionNorm, let pf = layer.postFFNNorm else {
                throw ModelError.missingTensor(
                    path: path, tensor: "layer \(l) norms (query, key, post-attention and post-feed-forward)")
            }
            return (q, k, pa, pf)
        }
        localRope = Rope(headDim: c.headDimension, theta: c.localRopeTheta ?? 10000, style: parts.rope.style)
        windows = (0..<c.numHiddenLayers).map { c.isSlidingLayer($0) ? c.slidingWindow : nil }
        attentionScale = 1 / (c.queryPreAttnScalar ?? Float(c.headDimension)).squareRoot()
        // transformers multiplies by hidden ** 0.5 rounded to the weights' dtype (f32 here),
        // llama.cpp by sqrtf(n_embd): the same f32.
        embeddingScale = Float(c.hiddenSize).squareRoot()
    }

    public func forwardChunk(
        _ tokens: [Int32], state: InferenceState, logits request: LogitsRequest, isCancelled: () -> Bool
    ) -> [Float]? {
        let step = TransformerSteps(config: config, rope: rope, weights: weights, state: state, count: tokens.count)
        step.embed(tokens)
        step.scaleResidual(by: embeddingScale)
        step.ropeAngles()
        step.localRopeAngles(localRope)

        for (l, layer) in weights.layers.enumerated() {
            if isCancelled() { return nil }
            let n = norms[l], window = windows[l]
            // Attention: queries and keys normed per head, RoPE of the layer's kind, a sliding
            // window on local layers; its output normed before it joins the residual.
            step.norm(layer.attentionNorm)
            step.projectQKV(layer)
            step.normHeads(q: n.q, k: n.k)
            step.rotateQK(local: window != nil)
            step.storeKV(layer: l)
            step.attention(layer: l, scale: attentionScale, window: window)
            step.attentionOutput(layer.wo, postNorm: n.postAttention)

            // Feed-forward (GeGLU), its output normed too.
            step.norm(layer.ffnNorm)
            step.gegluMLP(layer, postNorm: n.postFFN)
        }
        step.commit()
        return step.logits(request)
    }

    // MARK: - Config

    static func validate(_ c: TransformerConfig, _ path: String) throws {
        func bad(_ field: String, _ reason: String) -> ModelError { .invalidField(path: path, field: field, reason: reason) }
        if c.attentionBias == true { throw bad("attention_bias", "biases are not supported for gemma3") }
        // Gemma 2's softcapping is gone from Gemma 3; a config asking for it is another model.
        for (field, value) in [("final_logit_softcapping", c.finalLogitSoftcapping), ("attn_logit_softcapping", c.attnLogitSoftcapping)] {
            if let v = value, v != 0 { throw bad(field, "softcapping (\(v)) is not supported for gemma3") }
        }
        for (kind, entry) in c.ropeParameters?.perLayerType ?? [:] {
            let type = entry.ropeType ?? entry.type ?? "default"
            if type != "default" { throw bad("rope_parameters.\(kind).rope_type", "\(type) is not supported for gemma3") }
        }
        if let s = c.ropeScalingEntry, let type = s.ropeType ?? s.type, type != "default" {
            throw bad(c.ropeScaling != nil ? "rope_scaling" : "rope_parameters", "\(type) scaling is not supported for gemma3")
        }
        if let w = c.slidingWindow {
            if w <= 0 { throw bad("sliding_window", "must be positive, is \(w)") }
            if w > c.contextLength {
                throw bad("sliding_window", "\(w) is larger than the context (max_position_embeddings \(c.contextLength))")
            }
        } else if c.layerTypes?.contains("sliding_attention") == true {
            throw bad("sliding_window", "missing, but layer_types has sliding_attention layers")
        }
        if let types = c.layerTypes {
            if types.count != c.numHiddenLayers {
                throw bad("layer_types", "\(types.count) entries for \(c.numHiddenLayers) layers")
            }
            if let t = types.first(where: { $0 != "sliding_attention" && $0 != "full_attention" }) {
                throw bad("layer_types", "\(t) is not sliding_attention or full_attention")
            }
        }
        if let q = c.queryPreAttnScalar, !(q > 0 && q.isFinite) { throw bad("query_pre_attn_scalar", "\(q) must be positive") }
        if let t = c.localRopeTheta, !(t > 1 && t.isFinite) { throw bad("rope_local_base_freq", "\(t) must be a finite number > 1") }
    }

    /// llama.cpp's gemma3 keys: the window (`attention.sliding_window`; none means every
    /// layer is global), its pattern (a period or one flag per layer, 6 by default), the
    /// local RoPE base (`rope.freq_base_swa`, 10,000 by default) and the attention scale
    /// llama.cpp derives: 1/sqrt(head dim), 1/sqrt(hidden / heads) for the 62-layer 27B.
    static func readGGUF(_ c: inout TransformerConfig, _ meta: [String: GGUFValue], _ path: String) throws {
        let p = "gemma3."
        c.hiddenAct = nil
        c.hiddenActivation = "gelu_pytorch_tanh"
        func number(_ key: String) throws -> Double? {
            guard let v = meta[p + key] else { return nil }
            guard let d = v.double else { throw ModelError.invalidField(path: path, field: p + key, reason: "not a number") }
            return d
        }
        if let w = try number("attention.sliding_window"), w > 0 {
            guard let window = Int(exactly: w) else {
                throw ModelError.invalidField(path: path, field: p + "attention.sliding_window", reason: "\(w) is not an integer")
            }
            c.slidingWindow = window
            if case .array(let flags)? = meta[p + "attention.sliding_window_pattern"] {
                c.layerTypes = flags.map { flag in
                    let sliding: Bool
                    if case .bool(let b) = flag { sliding = b } else { sliding = (flag.int ?? 0) != 0 }
                    return sliding ? "sliding_attention" : "full_attention"
                }
            } else if let n = try number("attention.sliding_window_pattern") {
                c.slidingWindowPattern = Int(n)
            }
            c.ropeLocalBaseFreq = Float(try number("rope.freq_base_swa") ?? 10000)
        }
        c.finalLogitSoftcapping = (try number("final_logit_softcapping")).map { Float($0) }
        c.queryPreAttnScalar = Float(c.numHiddenLayers == 62 ? c.hiddenSize / c.numAttentionHeads : c.headDimension)
    }

    /// The keys `readGGUF` reads. A config whose attention scale llama.cpp would not derive
    /// from the head dimension cannot be written (llama.cpp has no key for it).
    static func writeGGUF(_ c: TransformerConfig, _ path: String) throws -> [(String, GGUFValue)] {
        let llamaCppScalar = Float(c.numHiddenLayers == 62 ? c.hiddenSize / c.numAttentionHeads : c.headDimension)
        if let q = c.queryPreAttnScalar, q != llamaCppScalar {
            throw ModelError.invalidField(
                path: path, field: "query_pre_attn_scalar",
                reason: "\(q): llama.cpp scales gemma3 attention by 1/sqrt(\(llamaCppScalar)) and GGUF has no key for another value")
        }
        // (attention.key_length and value_length are written for every architecture that
        // states head_dim.)
        var out: [(String, GGUFValue)] = []
        if let w = c.slidingWindow, w > 0 {
            out.append(("attention.sliding_window", .uint32(UInt32(w))))
            let flags = (0..<c.numHiddenLayers).map { c.isSlidingLayer($0) }
            let period6 = (0..<c.numHiddenLayers).map { ($0 + 1) % 6 != 0 }
            if flags != period6 {
                out.append(("attention.sliding_window_pattern", .array(.bool, flags.map { .bool($0) })))
            }
            out.append(("rope.freq_base_swa", .float32(c.localRopeTheta ?? 10000)))
        }
        return out
    }
}
