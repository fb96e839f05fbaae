import QBFormats
import QBKernels

/// One model architecture: what files call it, the tensors each of its layers holds, the
/// checks its config must pass, and how to build its model from loaded parts. The
/// registry (`ArchitectureRegistry`) maps Hugging Face `model_type` and GGUF
/// `general.architecture` to one of these.
public struct Architecture: Sendable {
    /// The name GGUF's `general.architecture` and metadata keys use ("llama", "qwen2").
    public let name: String
    /// Hugging Face `model_type` values that mean this architecture.
    public let huggingFaceTypes: [String]
    /// `architectures` as a Hugging Face config lists it for a causal LM.
    public let huggingFaceClass: String
    /// The tensors of one layer, in file order. Load, quantize, repack, export and the
    /// synthetic writer iterate this table.
    public let layerTable: [LayerTensorSpec]
    /// How the Q and K rows of a GGUF file of this architecture pair RoPE dimensions:
    /// llama.cpp's converter permutes Llama's into adjacent pairs but leaves Qwen's in
    /// Hugging Face's halves (llama.cpp runs those with NEOX RoPE).
    public let ggufRopeStyle: RopeStyle
    /// The MLP activations (`hidden_act` / `hidden_activation`) the forward pass computes.
    public let activations: [String]
    /// What Hugging Face (and MLX) files store in RMSNorm weights less than the factor the
    /// norm multiplies by: Gemma stores w and multiplies by 1 + w (GGUF files store 1 + w).
    /// Loading adds it, exporting subtracts it; the model holds the factor.
    public let huggingFaceNormOffset: Float
    /// Architecture-specific GGUF metadata (`<name>.*`) into the config, after the shared keys.
    let readGGUF: @Sendable (inout TransformerConfig, _ metadata: [String: GGUFValue], _ path: String) throws -> Void
    /// Architecture-specific GGUF metadata to write for `config`; throws for a config that
    /// llama.cpp would run differently.
    let writeGGUF: @Sendable (TransformerConfig, _ path: String) throws -> [(String, GGUFValue)]
    /// Architecture-specific config checks (the shared ones are `TransformerConfig.validate`).
    let validateConfig: @Sendable (TransformerConfig, String) throws -> Void
    let build: @Sendable (ModelParts) throws -> any LanguageModel

    public init(
        name: String, huggingFaceTypes: [String], huggingFaceClass: String, layerTable: [LayerTensorSpec],
        ggufRopeStyle: RopeStyle, activations: [String] = ["silu"], huggingFaceNormOffset: Float = 0,
        readGGUF: @escaping @Sendable (inout TransformerConfig, [String: GGUFValue], String) throws -> Void = { _, _, _ in },
        writeGGUF: @escaping @Sendable (TransformerConfig, String) throws -> [(String, GGUFValue)] = { _, _ in [] },
        validate: @escaping @Sendable (TransformerConfig, String) throws -> Void,
        build: @escaping @Sendable (ModelParts) throws -> any LanguageModel
    ) {
        self.name = name
        self.huggingFaceTypes = huggingFaceTypes
        self.huggingFaceClass = huggingFaceClass
        self.layerTable = layerTable
        self.ggufRopeStyle = ggufRopeStyle
        self.activations = activations
        self.huggingFaceNormOffset = huggingFaceNormOffset
        self.readGGUF = readGGUF
        self.writeGGUF = writeGGUF
        self.validateConfig = validate
        self.build = build
    }

    /// Throws the first way `config` (read from `path`) contradicts this architecture.
    public func validate(_ config: TransformerConfig, _ path: String) throws { try validateConfig(config, path) }

    /// The model of this architecture over `parts`.
    public func makeModel(_ parts: ModelParts) throws -> any LanguageModel { try build(parts) }
}

/// Every architecture the engine runs.
public enum ArchitectureRegistry {
    public static let all: [Architecture] = [
        LlamaModel.architecture, Qwen2Model.architecture, Qwen3Model.architecture, Gemma3Model.architecture,
    ]

    public static var supportedNames: [String] { all.map(\.name) }

    /// The architecture of a Hugging Face config's `model_type`.
    public static func forHuggingFace(modelType: String, path: String) throws -> Architecture {
        if let a = all.first(where: { $0.huggingFaceTypes.contains(modelType) }) { return a }
        throw unsupported(modelType, path: path, field: "model_type")
    }

    /// The architecture of a GGUF file's `general.architecture`.
    public static func forGGUF(_ name: String?, path: String) throws -> Architecture {
        if let name, let a = all.first(where: { $0.name == name }) { return a }
        throw unsupported(name ?? "missing", path: path, field: "general.architecture")
    }

    static func unsupported(_ name: String, path: String, field: String) -> ModelError {
        .invalidField(
            path: path, field: field,
            reason: "\(name) is not a supported architecture (supported: \(supportedNames.joined(separator: ", ")))")
    }
}

/// A weight's role in a layer; the forward passes read weights by role.
public enum LayerRole: String, Sendable, CaseIterable {
    case attentionNorm = "attention_norm", wq, wk, wv, qBias = "q_bias", kBias = "k_bias", vBias = "v_bias"
    case qNorm = "q_norm", kNorm = "k_norm", wo, ffnNorm = "ffn_norm", gate, up, down
    /// Gemma's norms of the attention and MLP outputs, before each joins the residual.
    case postAttentionNorm = "post_attention_norm", postFFNNorm = "post_ffn_norm"
}

/// One row of an architecture's layer table: what each file format calls the tensor, its
/// shape for a config, and what kind of tensor it is.
public struct LayerTensorSpec: Sendable {
    public enum Kind: Sendable {
        /// A weight matrix `[out][in]`: quantizable, repacked for decode.
        case matrix
        /// An RMSNorm weight, kept in f32.
        case norm
        /// A bias added after a matrix product, kept in f32.
        case bias
    }

    public let role: LayerRole
    /// The name after `blk.N.` in GGUF.
    public let ggufName: String
    /// The name after `model.layers.N.` in Hugging Face and MLX files.
    public let huggingFaceName: String
    public let kind: Kind
    /// Rows (or values) laid out head by head with RoPE pairs inside each head: Q and K,
    /// their biases and their norms. A writer that changes the RoPE pairing permutes these.
    public let headRows: Bool
    /// `[rows, cols]` for a matrix, `[count]` for a vector.
    public let shape: @Sendable (TransformerConfig) -> [Int]

    public var isMatrix: Bool { kind == .matrix }

    static func matrix(_ role: LayerRole, _ gguf: String, _ hf: String, headRows: Bool = false,
                       _ shape: @escaping @Sendable (TransformerConfig) -> (Int, Int)) -> LayerTensorSpec {
        LayerTensorSpec(role: role, ggufName: gguf + ".weight", huggingFaceName: hf + ".weight", kind: .matrix,
                        headRows: headRows, shape: { let s = shape($0); return [s.0, s.1] })
    }

    static func vector(_ role: LayerRole, _ kind: Kind, _ gguf: String, _ hf: String, headRows: Bool = false,
                       _ count: @escaping @Sendable (TransformerConfig) -> Int) -> LayerTensorSpec {
        LayerTensorSpec(role: role, ggufName: gguf, huggingFaceName: hf, kind: kind, headRows: headRows,
                        shape: { [count($0)] })
    }

    // The tensors the supported architectures share, under llama.cpp's and transformers' names.
    public static let attentionNorm = vector(.attentionNorm, .norm, "attn_norm.weight", "input_layernorm.weight") { $0.hiddenSize }
    public static let wq = matrix(.wq, "attn_q", "self_attn.q_proj", headRows: true) { ($0.qDim, $0.hiddenSize) }
    public static let wk = matrix(.wk, "attn_k", "self_attn.k_proj", headRows: true) { ($0.kvDim, $0.hiddenSize) }
    public static let wv = matrix(.wv, "attn_v", "self_attn.v_proj") { ($0.kvDim, $0.hiddenSize) }
    public static let qBias = vector(.qBias, .bias, "attn_q.bias", "self_attn.q_proj.bias", headRows: true) { $0.qDim }
    public static let kBias = vector(.kBias, .bias, "attn_k.bias", "self_attn.k_proj.bias", headRows: true) { $0.kvDim }
    public static let vBias = vector(.vBias, .bias, "attn_v.bias", "self_attn.v_proj.bias") { $0.kvDim }
    public static let qNorm = vector(.qNorm, .norm, "attn_q_norm.weight", "self_attn.q_norm.weight", headRows: true) { $0.headDimension }
    public static let kNorm = vector(.kNorm, .norm, "attn_k_norm.weight", "self_attn.k_norm.weight", headRows: true) { $0.headDimension }
    public static let wo = matrix(.wo, "attn_output", "self_attn.o_proj") { ($0.hiddenSize, $0.qDim) }
    public static let ffnNorm = vector(.ffnNorm, .norm, "ffn_norm.weight", "post_attention_layernorm.weight") { $0.hiddenSize }
    public static let gate = matrix(.gate, "ffn_gate", "mlp.gate_proj") { ($0.intermediateSize, $0.hiddenSize) }
    public static let up = matrix(.up, "ffn_up", "mlp.up_proj") { ($0.intermediateSize, $0.hiddenSize) }
    public static let down = matrix(.down, "ffn_down", "mlp.down_proj") { ($0.hiddenSize, $0.intermediateSize) }

    // Gemma's block norms: llama.cpp's `ffn_norm` is transformers' pre-feed-forward norm, and
    // transformers' `post_attention_layernorm` is a norm of attention's output (llama.cpp's
    // `post_attention_norm`), not the pre-MLP norm it is in Llama.
    public static let postAttentionNorm = vector(
        .postAttentionNorm, .norm, "post_attention_norm.weight", "post_attention_layernorm.weight") { $0.hiddenSize }
    public static let preFFNNorm = vector(.ffnNorm, .norm, "ffn_norm.weight", "pre_feedforward_layernorm.weight") { $0.hiddenSize }
    public static let postFFNNorm = vector(.postFFNNorm, .norm, "post_ffw_norm.weight", "post_feedforward_layernorm.weight") { $0.hiddenSize }

    /// Llama's layer: pre-norm attention and SwiGLU MLP, no biases.
    public static let llamaLayer: [LayerTensorSpec] = [attentionNorm, wq, wk, wv, wo, ffnNorm, gate, up, down]
}

/// The model-wide tensors' names in one file family; a layer's tensors are named by the
/// architecture's `layerTable` under `layerPrefix`.
public struct TensorNames: Sendable {
    public let embedding: String
    public let finalNorm: String
    public let output: String
    public let layerPrefix: String
    let layerName: @Sendable (LayerTensorSpec) -> String

    /// Hugging Face transformers (and MLX) names.
    public static let huggingFace = TensorNames(
        embedding: "model.embed_tokens.weight", finalNorm: "model.norm.weight", output: "lm_head.weight",
        layerPrefix: "model.layers.", layerName: { $0.huggingFaceName })

    /// GGML/GGUF names.
    public static let gguf = TensorNames(
        embedding: "token_embd.weight", finalNorm: "output_norm.weight", output: "output.weight", layerPrefix: "blk.",
        layerName: { $0.ggufName })

    /// The full name of `spec`'s tensor in layer `l`.
    public func layer(_ l: Int, _ spec: LayerTensorSpec) -> String { "\(layerPrefix)\(l).\(layerName(spec))" }
}
