import Foundation
import QBSupport
import QBFormats
import QBKernels

/// A decoder-only transformer's shape as a Hugging Face config.json spells it (or as a GGUF
/// file or llama2.c header fills it in). Llama, Qwen2 and Qwen3 configs share these fields;
/// `model_type` names the architecture (`ArchitectureRegistry`), which adds its own checks.
public struct TransformerConfig: Codable, Sendable, Equatable {
    public var hiddenSize: Int
    public var intermediateSize: Int
    public var numHiddenLayers: Int
    public var numAttentionHeads: Int
    public var numKeyValueHeads: Int?
    public var headDim: Int?
    public var vocabSize: Int
    public var rmsNormEps: Float?
    public var ropeTheta: Float?
    public var ropeScaling: RopeScalingConfig?
    /// transformers 5 writes `rope_theta` and the scaling here instead of at the top level.
    public var ropeParameters: RopeScalingConfig?
    public var useSlidingWindow: Bool?
    public var tieWordEmbeddings: Bool?
    public var maxPositionEmbeddings: Int?
    public var bosTokenId: Int?
    public var eosTokenId: TokenIDList?
    public var hiddenAct: String?
    public var attentionBias: Bool?
    public var mlpBias: Bool?
    public var modelType: String?
    public var architectures: [String]?
    public var torchDtype: String?
    /// MLX quantization (`quantization` in mlx-community configs).
    public var quantization: MLXQuantizationConfig?
    /// Gemma's name for the MLP activation (`hidden_act` elsewhere).
    public var hiddenActivation: String?
    /// Gemma: attention scores are scaled by `query_pre_attn_scalar ** -0.5`.
    public var queryPreAttnScalar: Float?
    /// Gemma 3: positions a sliding-window layer attends to (t - p < window).
    public var slidingWindow: Int?
    /// Gemma 3: "sliding_attention" or "full_attention" per layer (transformers writes it).
    public var layerTypes: [String]?
    /// Gemma 3 configs without `layer_types`: every `pattern`-th layer is global.
    public var slidingWindowPattern: Int?
    /// The same under the name transformers 4.5x wrote.
    public var privateSlidingWindowPattern: Int?
    /// Gemma 3: RoPE base of the sliding-window layers (transformers 4).
    public var ropeLocalBaseFreq: Float?
    /// Softcapping (Gemma 2); rejected by Gemma 3, which has none.
    public var finalLogitSoftcapping: Float?
    public var attnLogitSoftcapping: Float?

    enum CodingKeys: String, CodingKey {
        case hiddenSize = "hidden_size"
        case intermediateSize = "intermediate_size"
        case numHiddenLayers = "num_hidden_layers"
        case numAttentionHeads = "num_attention_heads"
        case numKeyValueHeads = "num_key_value_heads"
        case headDim = "head_dim"
        case vocabSize = "vocab_size"
        case rmsNormEps = "rms_norm_eps"
        case ropeTheta = "rope_theta"
        case ropeScaling = "rope_scaling"
        case ropeParameters = "rope_parameters"
        case useSlidingWindow = "use_sliding_window"
        case tieWordEmbeddings = "tie_word_embeddings"
        case maxPositionEmbeddings = "max_position_embeddings"
        case bosTokenId = "bos_token_id"
        case eosTokenId = "eos_token_id"
        case hiddenAct = "hidden_act"
        case attentionBias = "attention_bias"
        case mlpBias = "mlp_bias"
        case modelType = "model_type"
        case architectures
        case torchDtype = "torch_dtype"
        case quantization
        case hiddenActivation = "hidden_activation"
        case queryPreAttnScalar = "query_pre_attn_scalar"
        case slidingWindow = "sliding_window"
        case layerTypes = "layer_types"
        case slidingWindowPattern = "sliding_window_pattern"
        case privateSlidingWindowPattern = "_sliding_window_pattern"
        case ropeLocalBaseFreq = "rope_local_base_freq"
        case finalLogitSoftcapping = "final_logit_softcapping"
        case attnLogitSoftcapping = "attn_logit_softcapping"
    }

    public init(
        hiddenSize: Int, intermediateSize: Int, numHiddenLayers: Int, numAttentionHeads: Int,
        numKeyValueHeads: Int, vocabSize: Int, rmsNormEps: Float = 1e-5, ropeTheta: Float = 10000,
        ropeScaling: RopeScalingConfig? = nil, tieWordEmbeddings: Bool = false,
        maxPositionEmbeddings: Int = 2048, headDim: Int? = nil
    ) {
        self.hiddenSize = hiddenSize
        self.intermediateSize = intermediateSize
        self.numHiddenLayers = numHiddenLayers
        self.numAttentionHeads = numAttentionHeads
        self.numKeyValueHeads = numKeyValueHeads
        self.vocabSize = vocabSize
        self.rmsNormEps = rmsNormEps
        self.ropeTheta = ropeTheta
        self.ropeScaling = ropeScaling
        self.tieWordEmbeddings = tieWordEmbeddings
        self.maxPositionEmbeddings = maxPositionEmbeddings
        self.headDim = headDim
        self.hiddenAct = "silu"
        self.modelType = "llama"
        self.architectures = ["LlamaForCausalLM"]
    }

    // Defaults are Hugging Face TransformerConfig's.
    public var kvHeads: Int { numKeyValueHeads ?? numAttentionHeads }
    public var headDimension: Int { headDim ?? (numAttentionHeads > 0 ? hiddenSize / numAttentionHeads : 0) }
    public var qDim: Int { numAttentionHeads * headDimension }
    public var kvDim: Int { kvHeads * headDimension }
    public var eps: Float { rmsNormEps ?? 1e-6 }
    /// The RoPE base (of the global layers, where layers differ).
    public var theta: Float {
        ropeTheta ?? ropeParameters?.ropeTheta ?? ropeParameters?.perLayerType?["full_attention"]?.ropeTheta ?? 10000
    }
    /// The RoPE base of sliding-window layers, for configs that give them their own
    /// (Gemma 3: `rope_local_base_freq`, or transformers 5's
    /// `rope_parameters.sliding_attention.rope_theta`, default 10,000); nil for the others.
    public var localRopeTheta: Float? {
        if let t = ropeLocalBaseFreq ?? ropeParameters?.perLayerType?["sliding_attention"]?.ropeTheta { return t }
        return modelType == "gemma3_text" ? 10000 : nil
    }

    /// Whether layer `l` attends through a sliding window of `slidingWindow` positions: per
    /// `layer_types` when the config lists them, else every layer but each
    /// `sliding_window_pattern`-th (6 by default, Gemma 3's; layer l is global when
    /// (l + 1) % pattern == 0). False for every layer without a window.
    public func isSlidingLayer(_ l: Int) -> Bool {
        guard let w = slidingWindow, w > 0 else { return false }
        if let types = layerTypes, l < types.count { return types[l] == "sliding_attention" }
        let pattern = slidingWindowPattern ?? privateSlidingWindowPattern ?? 6
        return pattern <= 0 || (l + 1) % pattern != 0
    }
    /// The scaling entry, wherever the config put it.
    public var ropeScalingEntry: RopeScalingConfig? { ropeScaling ?? ropeParameters }
    public var tied: Bool { tieWordEmbeddings ?? false }
    public var contextLength: Int { maxPositionEmbeddings ?? 2048 }

    /// Reads and validates config.json.
    public static func load(path: String) throws -> TransformerConfig {
        guard let data = FileManager.default.contents(atPath: path) else {
            if !FileManager.default.fileExists(atPath: path) { throw ModelError.notFound(path: path) }
            throw ModelError.unreadable(path: path, reason: "cannot read file")
        }
        let config: TransformerConfig
        do {
            try NestingDepth.checkJSON(data)
        } catch {
            throw ModelError.invalidField(path: path, field: "JSON", reason: error.description)
        }
        do {
            config = try JSONDecoder().decode(TransformerConfig.self, from: data)
        } catch let DecodingError.keyNotFound(key, ctx) {
            throw ModelError.invalidField(path: path, field: fieldPath(ctx.codingPath + [key]), reason: "missing")
        } catch let DecodingError.typeMismatch(_, ctx) {
            throw ModelError.invalidField(path: path, field: fieldPath(ctx.codingPath), reason: ctx.debugDescription)
        } catch let DecodingError.valueNotFound(_, ctx) {
            throw ModelError.invalidField(path: path, field: fieldPath(ctx.codingPath), reason: "null")
        } catch let DecodingError.dataCorrupted(ctx) {
            throw ModelError.invalidField(
                path: path, field: ctx.codingPath.isEmpty ? "JSON" : fieldPath(ctx.codingPath),
                reason: ctx.debugDescription)
        } catch {
            throw ModelError.unreadable(path: path, reason: "\(error)")
        }
        try config.validate(path: path)
        return config
    }

    private static func fieldPath(_ keys: [CodingKey]) -> String {
        keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
    }

    /// Rejects shapes the forward pass cannot run (or that no real model has), naming the field.
    public func validate(path: String) throws {
        func bad(_ field: String, _ reason: String) -> ModelError {
            .invalidField(path: path, field: field, reason: reason)
        }
        let limits: [(String, Int, Int)] = [
            ("hidden_size", hiddenSize, 1 << 17), ("intermediate_size", intermediateSize, 1 << 19),
            ("num_hidden_layers", numHiddenLayers, 4096), ("num_attention_heads", numAttentionHeads, 4096),
            ("num_key_value_heads", kvHeads, 4096), ("vocab_size", vocabSize, 1 << 24),
            ("head_dim", headDimension, 1 << 12),
        ]
        for (field, value, limit) in limits {
            if value <= 0 { throw bad(field, "must be positive, is \(value)") }
            if value > limit { throw bad(field, "\(value) is beyond any supported model (limit \(limit))") }
        }
        if headDim == nil && hiddenSize % numAttentionHeads != 0 {
            throw bad("hidden_size", "\(hiddenSize) is not divisible by num_attention_heads \(numAttentionHeads)")
        }
        if numAttentionHeads % kvHeads != 0 {
            throw bad("num_key_value_heads", "num_attention_heads \(numAttentionHeads) is not a multiple of \(kvHeads)")
        }
        if headDimension % 2 != 0 { throw bad("head_dim", "\(headDimension) is odd; RoPE rotates pairs") }
        if let m = maxPositionEmbeddings, m <= 0 { throw bad("max_position_embeddings", "must be positive, is \(m)") }
        // No model has a context of more than 16 M positions; more is a corrupt or hostile
        // file, and sizing a KV cache from it would overflow.
        if let m = maxPositionEmbeddings, m > 1 << 24 { throw bad("max_position_embeddings", "\(m) is more than \(1 << 24) positions") }
        if let e = rmsNormEps, !(e > 0 && e < 1) { throw bad("rms_norm_eps", "\(e) is not in (0, 1)") }
        if let t = ropeTheta ?? ropeParameters?.ropeTheta, !(t > 1 && t.isFinite) {
            throw bad("rope_theta", "\(t) must be a finite number > 1")
        }
        let arch = try architecture(path: path)
        for (field, act) in [("hidden_act", hiddenAct), ("hidden_activation", hiddenActivation)] {
            if let act, !arch.activations.contains(act) {
                throw bad(field, "\(act) is not supported for \(arch.name) (only \(arch.activations.joined(separator: ", ")))")
            }
        }
        if let s = ropeScalingEntry { _ = try s.llama3(path: path) }
        try arch.validate(self, path)
    }

    /// The architecture `model_type` names (Llama when the config names none, as llama2.c
    /// headers and old Llama configs do).
    public func architecture(path: String) throws -> Architecture {
        try ArchitectureRegistry.forHuggingFace(modelType: modelType ?? "llama", path: path)
    }

    /// The rotary embedding this config describes.
    public func rope(style: RopeStyle, path: String = "config") throws -> Rope {
        Rope(headDim: headDimension, theta: theta, style: style, scaling: try ropeScalingEntry?.llama3(path: path))
    }
}

/// `rope_scaling` as config.json spells it.
public struct RopeScalingConfig: Codable, Sendable, Equatable {
    public var ropeType: String?
    public var type: String?
    public var factor: Float?
    public var lowFreqFactor: Float?
    public var highFreqFactor: Float?
    public var originalMaxPositionEmbeddings: Int?
    /// Only in `rope_parameters`.
    public var ropeTheta: Float?
    /// transformers 5's `rope_parameters` of models whose layer types differ (Gemma 3):
    /// one entry per layer type ("full_attention", "sliding_attention") instead of one
    /// for all.
    public var perLayerType: [String: RopeScalingConfig]?

    static let layerTypeKeys = ["full_attention", "sliding_attention"]

    enum CodingKeys: String, CodingKey {
        case ropeTheta = "rope_theta"
        case ropeType = "rope_type"
        case type
        case factor
        case lowFreqFactor = "low_freq_factor"
        case highFreqFactor = "high_freq_factor"
        case originalMaxPositionEmbeddings = "original_max_position_embeddings"
        case fullAttention = "full_attention"
        case slidingAttention = "sliding_attention"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        ropeTheta = try c.decodeIfPresent(Float.self, forKey: .ropeTheta)
        ropeType = try c.decodeIfPresent(String.self, forKey: .ropeType)
        type = try c.decodeIfPresent(String.self, forKey: .type)
        factor = try c.decodeIfPresent(Float.self, forKey: .factor)
        lowFreqFactor = try c.decodeIfPresent(Float.self, forKey: .lowFreqFactor)
        highFreqFactor = try c.decodeIfPresent(Float.self, forKey: .highFreqFactor)
        originalMaxPositionEmbeddings = try c.decodeIfPresent(Int.self, forKey: .originalMaxPositionEmbeddings)
        var perType: [String: RopeScalingConfig] = [:]
        for key in [CodingKeys.fullAttention, .slidingAttention] {
            if let entry = try c.decodeIfPresent(RopeScalingConfig.self, forKey: key) { perType[key.rawValue] = entry }
        }
        perLayerType = perType.isEmpty ? nil : perType
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(ropeTheta, forKey: .ropeTheta)
        try c.encodeIfPresent(ropeType, forKey: .ropeType)
        try c.encodeIfPresent(type, forKey: .type)
        try c.encodeIfPresent(factor, forKey: .factor)
        try c.encodeIfPresent(lowFreqFactor, forKey: .lowFreqFactor)
        try c.encodeIfPresent(highFreqFactor, forKey: .highFreqFactor)
        try c.encodeIfPresent(originalMaxPositionEmbeddings, forKey: .originalMaxPositionEmbeddings)
        try c.encodeIfPresent(perLayerType?["full_attention"], forKey: .fullAttention)
        try c.encodeIfPresent(perLayerType?["sliding_attention"], forKey: .slidingAttention)
    }

    public init(llama3 s: Llama3RopeScaling) {
        ropeType = "llama3"
        factor = s.factor
        lowFreqFactor = s.lowFreqFactor
        highFreqFactor = s.highFreqFactor
        originalMaxPositionEmbeddings = s.originalMaxPositionEmbeddings
    }

    /// The scaling to apply, nil for the plain ("default") rope, or an error for kinds the
    /// engine does not implement.
    public func llama3(path: String) throws -> Llama3RopeScaling? {
        let kind = ropeType ?? type ?? "default"
        switch kind {
        case "default": return nil
        case "llama3":
            guard let f = factor, let lo = lowFreqFactor, let hi = highFreqFactor,
                  let orig = originalMaxPositionEmbeddings
            else {
                throw ModelError.invalidField(
                    path: path, field: "rope_scaling",
                    reason: "llama3 scaling needs factor, low_freq_factor, high_freq_factor, original_max_position_embeddings")
            }
            guard f >= 1, lo > 0, hi > lo, orig > 0 else {
                throw ModelError.invalidField(path: path, field: "rope_scaling", reason: "inconsistent llama3 parameters")
            }
            return Llama3RopeScaling(factor: f, lowFreqFactor: lo, highFreqFactor: hi, originalMaxPositionEmbeddings: orig)
        default:
            throw ModelError.invalidField(path: path, field: "rope_scaling.rope_type", reason: "\(kind) is not supported")
        }
    }
}

/// `eos_token_id` may be one id or a list of them.
public struct TokenIDList: Codable, Sendable, Equatable {
    public var ids: [Int]
    public init(_ ids: [Int]) { self.ids = ids }
    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let one = try? c.decode(Int.self) { ids = [one] } else { ids = try c.decode([Int].self) }
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        if ids.count == 1 { try c.encode(ids[0]) } else { try c.encode(ids) }
    }
}

/// MLX's `quantization` entry: default `group_size` and `bits`, and per-module overrides
/// keyed by module path (an object with its own group_size/bits, or false for a module
/// left unquantized).
public struct MLXQuantizationConfig: Codable, Sendable, Equatable {
    public struct Override: Codable, Sendable, Equatable {
        public var groupSize: Int
        public var bits: Int
    }
    public var groupSize: Int
    public var bits: Int
    /// Module path to its setting; nil value means "not quantized".
    public var overrides: [String: Override?]

    public init(groupSize: Int, bits: Int, overrides: [String: Override?] = [:]) {
        self.groupSize = groupSize
        self.bits = bits
        self.overrides = overrides
    }

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: Key.self)
        groupSize = try c.decode(Int.self, forKey: Key(stringValue: "group_size"))
        bits = try c.decode(Int.self, forKey: Key(stringValue: "bits"))
        var o: [String: Override?] = [:]
        for k in c.allKeys where k.stringValue != "group_size" && k.stringValue != "bits" {
            if let b = try? c.decode(Bool.self, forKey: k) {
                if !b { o[k.stringValue] = .some(nil) }
                continue
            }
            if let sub = try? c.nestedContainer(keyedBy: Key.self, forKey: k) {
                let g = try sub.decode(Int.self, forKey: Key(stringValue: "group_size"))
                let b = try sub.decode(Int.self, forKey: Key(stringValue: "bits"))
                o[k.stringValue] = Override(groupSize: g, bits: b)
            }
            // Other keys (e.g. "mode": "affine") carry no per-module setting.
        }
        overrides = o
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: Key.self)
        try c.encode(groupSize, forKey: Key(stringValue: "group_size"))
        try c.encode(bits, forKey: Key(stringValue: "bits"))
        for (k, v) in overrides {
            if let v {
                var sub = c.nestedContainer(keyedBy: Key.self, forKey: Key(stringValue: k))
                try sub.encode(v.groupSize, forKey: Key(stringValue: "group_size"))
                try sub.encode(v.bits, forKey: Key(stringValue: "bits"))
            } else {
                try c.encode(false, forKey: Key(stringValue: k))
            }
        }
    }

    /// The setting of module `path` (e.g. "model.layers.0.mlp.down_proj"): nil when the
    /// module is left unquantized.
    public func setting(for path: String) -> (groupSize: Int, bits: Int)? {
        if let o = overrides[path] { return o.map { ($0.groupSize, $0.bits) } }
        return (groupSize, bits)
    }
}

/// The name this type had while Llama was the only architecture.
public typealias LlamaConfig = TransformerConfig
