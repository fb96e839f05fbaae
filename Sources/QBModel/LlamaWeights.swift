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
