import QBKernels

/// One transformer block's weights. Matrices are views into the model file; norm weights are
/// widened to f32 once at load (they are tiny and read every token).
public struct LayerWeights: Sendable {
    public let attentionNorm: FloatBuffer
    public let wq: Matrix
    public let wk: Matrix
    public let wv: Matrix
    public let wo: Matrix
    public let ffnNorm: FloatBuffer
    /// SwiGLU: down(silu(gate x) * up x)
    public let gate: Matrix
    public let up: Matrix
    public let down: Matrix

    public init(
        attentionNorm: FloatBuffer, wq: Matrix, wk: Matrix, wv: Matrix, wo: Matrix,
        ffnNorm: FloatBuffer, gate: Matrix, up: Matrix, down: Matrix
    ) {
        self.attentionNorm = attentionNorm
        self.wq = wq
        self.wk = wk
        self.wv = wv
        self.wo = wo
        self.ffnNorm = ffnNorm
        self.gate = gate
        self.up = up
        self.down = down
    }

    public var matrices: [(String, Matrix)] {
        [("wq", wq), ("wk", wk), ("wv", wv), ("wo", wo), ("gate", gate), ("up", up), ("down", down)]
    }
}

/// All weights of a Llama model.
public struct LlamaWeights: Sendable {
    public let embedding: Matrix
    public let layers: [LayerWeights]
    public let finalNorm: FloatBuffer
    /// The output head; the same view as `embedding` when the model ties them.
    public let output: Matrix

    public init(embedding: Matrix, layers: [LayerWeights], finalNorm: FloatBuffer, output: Matrix) {
        self.embedding = embedding
        self.layers = layers
        self.finalNorm = finalNorm
        self.output = output
    }
}

/// Where a model came from and what it holds, for `inspect` and reports.
public struct ModelSource: Sendable {
    public enum Format: String, Sendable { case llama2c = "llama2.c", huggingFace = "safetensors", gguf = "GGUF", mlx = "MLX safetensors" }
    public let format: Format
    public let path: String
    public let tensors: [TensorInfo]
    /// Folder that may hold tokenizer files (nil for a bare checkpoint file).
    public let directory: String?
    /// The `--quant` setting applied at load, if any.
    public let quantization: String?

    public init(format: Format, path: String, tensors: [TensorInfo], directory: String?, quantization: String? = nil) {
        self.format = format
        self.path = path
        self.tensors = tensors
        self.directory = directory
        self.quantization = quantization
    }
}

/// One stored tensor as `inspect` lists it.
public struct TensorInfo: Sendable {
    public let name: String
    public let dtype: String
    public let shape: [Int]
    public let bytes: Int
    public var elements: Int { shape.reduce(1, *) }
}

/// What one checkpoint family calls each weight of a Llama model.
public struct TensorNames: Sendable {
    public let embedding: String
    public let finalNorm: String
    public let output: String
    public let layerPrefix: String
    // Per-layer names, after "<layerPrefix><index>.".
    public let attentionNorm, wq, wk, wv, wo, ffnNorm, gate, up, down: String

    /// Hugging Face transformers (and MLX) names.
    public static let huggingFace = TensorNames(
        embedding: "model.embed_tokens.weight", finalNorm: "model.norm.weight", output: "lm_head.weight",
        layerPrefix: "model.layers.", attentionNorm: "input_layernorm.weight", wq: "self_attn.q_proj.weight",
        wk: "self_attn.k_proj.weight", wv: "self_attn.v_proj.weight", wo: "self_attn.o_proj.weight",
        ffnNorm: "post_attention_layernorm.weight", gate: "mlp.gate_proj.weight", up: "mlp.up_proj.weight",
        down: "mlp.down_proj.weight")

    /// GGML/GGUF names.
    public static let gguf = TensorNames(
        embedding: "token_embd.weight", finalNorm: "output_norm.weight", output: "output.weight", layerPrefix: "blk.",
        attentionNorm: "attn_norm.weight", wq: "attn_q.weight", wk: "attn_k.weight", wv: "attn_v.weight",
        wo: "attn_output.weight", ffnNorm: "ffn_norm.weight", gate: "ffn_gate.weight", up: "ffn_up.weight",
        down: "ffn_down.weight")

    public func layer(_ l: Int, _ name: String) -> String { "\(layerPrefix)\(l).\(name)" }
}

extension LlamaWeights {
    /// Gathers a model's weights by asking `matrix(name, rows, cols)` for each tensor,
    /// checked against the shapes `config` implies; norms are widened to f32.
    static func load(
        config c: LlamaConfig, names n: TensorNames, matrix: (String, Int, Int) throws -> Matrix
    ) throws -> LlamaWeights {
        let dim = c.hiddenSize
        func norm(_ name: String) throws -> FloatBuffer { FloatBuffer(try matrix(name, 1, dim).toFloats()) }
        let embedding = try matrix(n.embedding, c.vocabSize, dim)
        let layers = try (0..<c.numHiddenLayers).map { l in
            LayerWeights(
                attentionNorm: try norm(n.layer(l, n.attentionNorm)),
                wq: try matrix(n.layer(l, n.wq), c.qDim, dim),
                wk: try matrix(n.layer(l, n.wk), c.kvDim, dim),
                wv: try matrix(n.layer(l, n.wv), c.kvDim, dim),
                wo: try matrix(n.layer(l, n.wo), dim, c.qDim),
                ffnNorm: try norm(n.layer(l, n.ffnNorm)),
                gate: try matrix(n.layer(l, n.gate), c.intermediateSize, dim),
                up: try matrix(n.layer(l, n.up), c.intermediateSize, dim),
                down: try matrix(n.layer(l, n.down), dim, c.intermediateSize))
        }
        let output = c.tied ? embedding : try matrix(n.output, c.vocabSize, dim)
        return LlamaWeights(embedding: embedding, layers: layers, finalNorm: try norm(n.finalNorm), output: output)
    }
}
