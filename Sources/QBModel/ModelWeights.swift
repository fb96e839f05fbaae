import QBFormats
import QBKernels

/// A layer tensor as the model holds it.
public enum LayerTensor: Sendable {
    case matrix(Matrix)
    /// Norm weights and biases, widened to f32 once at load (tiny, read every token).
    case vector(FloatBuffer)
}

/// One transformer block's weights. Matrices are views into the model file; norm weights
/// and biases are widened to f32 once at load. Which optional roles are present is what
/// the architecture's layer table says.
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
    /// Added to the Q, K and V projections (Qwen2).
    public let qBias: FloatBuffer?, kBias: FloatBuffer?, vBias: FloatBuffer?
    /// Per-head RMSNorm weights of queries and keys, before RoPE (Qwen3, Gemma 3).
    public let qNorm: FloatBuffer?, kNorm: FloatBuffer?
    /// RMSNorm weights of the attention and MLP outputs before the residual adds (Gemma 3).
    public let postAttentionNorm: FloatBuffer?, postFFNNorm: FloatBuffer?

    public init(
        attentionNorm: FloatBuffer, wq: Matrix, wk: Matrix, wv: Matrix, wo: Matrix,
        ffnNorm: FloatBuffer, gate: Matrix, up: Matrix, down: Matrix,
        qBias: FloatBuffer? = nil, kBias: FloatBuffer? = nil, vBias: FloatBuffer? = nil,
        qNorm: FloatBuffer? = nil, kNorm: FloatBuffer? = nil,
        postAttentionNorm: FloatBuffer? = nil, postFFNNorm: FloatBuffer? = nil
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
        self.qBias = qBias
        self.kBias = kBias
        self.vBias = vBias
        self.qNorm = qNorm
        self.kNorm = kNorm
        self.postAttentionNorm = postAttentionNorm
        self.postFFNNorm = postFFNNorm
    }

    /// A layer from its tensors by role; `missing(role)` is the error for a role the
    /// forward pass cannot do without, or a tensor of the wrong kind.
    public init(tensor: (LayerRole) throws -> LayerTensor?, missing: (LayerRole) -> Error) throws {
        func m(_ r: LayerRole) throws -> Matrix {
            guard case .matrix(let x)? = try tensor(r) else { throw missing(r) }
            return x
        }
        func v(_ r: LayerRole) throws -> FloatBuffer? {
            switch try tensor(r) {
            case nil: return nil
            case .vector(let x)?: return x
            case .matrix?: throw missing(r)
            }
        }
        func nv(_ r: LayerRole) throws -> FloatBuffer {
            guard let x = try v(r) else { throw missing(r) }
            return x
        }
        self.init(
            attentionNorm: try nv(.attentionNorm), wq: try m(.wq), wk: try m(.wk), wv: try m(.wv), wo: try m(.wo),
            ffnNorm: try nv(.ffnNorm), gate: try m(.gate), up: try m(.up), down: try m(.down),
            qBias: try v(.qBias), kBias: try v(.kBias), vBias: try v(.vBias), qNorm: try v(.qNorm), kNorm: try v(.kNorm),
            postAttentionNorm: try v(.postAttentionNorm), postFFNNorm: try v(.postFFNNorm))
    }

    /// The tensor in `role`, nil when this layer has none.
    public subscript(role: LayerRole) -> LayerTensor? {
        switch role {
        case .attentionNorm: return .vector(attentionNorm)
        case .wq: return .matrix(wq)
        case .wk: return .matrix(wk)
        case .wv: return .matrix(wv)
        case .wo: return .matrix(wo)
        case .ffnNorm: return .vector(ffnNorm)
        case .gate: return .matrix(gate)
        case .up: return .matrix(up)
        case .down: return .matrix(down)
        case .qBias: return qBias.map { .vector($0) }
        case .kBias: return kBias.map { .vector($0) }
        case .vBias: return vBias.map { .vector($0) }
        case .qNorm: return qNorm.map { .vector($0) }
        case .kNorm: return kNorm.map { .vector($0) }
        case .postAttentionNorm: return postAttentionNorm.map { .vector($0) }
        case .postFFNNorm: return postFFNNorm.map { .vector($0) }
        }
    }

    /// This layer with every matrix replaced by `transform(role, matrix)`; vectors are kept.
    public func mapMatrices(_ transform: (LayerRole, Matrix) throws -> Matrix) throws -> LayerWeights {
        try LayerWeights(
            tensor: { r in
                switch self[r] {
                case .matrix(let m)?: return .matrix(try transform(r, m))
                case let other: return other
                }
            },
            missing: { r in ModelError.missingTensor(path: "layer", tensor: r.rawValue) })
    }

    /// The weight matrices, in forward order.
    public var matrices: [(String, Matrix)] {
        [("wq", wq), ("wk", wk), ("wv", wv), ("wo", wo), ("gate", gate), ("up", up), ("down", down)]
    }

    /// The f32 vectors (norms and biases) this layer holds.
    public var vectors: [(LayerRole, FloatBuffer)] {
        LayerRole.allCases.compactMap { r in if case .vector(let v)? = self[r] { return (r, v) } else { return nil } }
    }
}

/// All weights of a model.
public struct ModelWeights: Sendable {
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

/// The name this type had while Llama was the only architecture.
public typealias LlamaWeights = ModelWeights

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
    /// What the file says its type is, as llama.cpp names it (a GGUF file's
    /// `general.file_type`, e.g. "Q4_K - Medium"); nil when the file does not say.
    public let fileType: String?

    public init(format: Format, path: String, tensors: [TensorInfo], directory: String?, quantization: String? = nil, fileType: String? = nil) {
        self.format = format
        self.path = path
        self.tensors = tensors
        self.directory = directory
        self.quantization = quantization
        self.fileType = fileType
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

extension ModelWeights {
    /// Gathers a model's weights by asking `matrix(name, rows, cols)` for each tensor of
    /// `table`, checked against the shapes `config` implies (a vector is one row); norms
    /// and biases are widened to f32, `normOffset` added to every norm weight (Gemma's
    /// Hugging Face files store w for a factor of 1 + w). `path` names the file in errors.
    static func load(
        config c: TransformerConfig, table: [LayerTensorSpec], names n: TensorNames, path: String, normOffset: Float = 0,
        matrix: (String, Int, Int) throws -> Matrix
    ) throws -> ModelWeights {
        let dim = c.hiddenSize
        func offset(_ v: [Float]) -> [Float] { normOffset == 0 ? v : v.map { $0 + normOffset } }
        func norm(_ name: String) throws -> FloatBuffer { FloatBuffer(offset(try matrix(name, 1, dim).toFloats())) }
        let embedding = try matrix(n.embedding, c.vocabSize, dim)
        let layers = try (0..<c.numHiddenLayers).map { l in
            var loaded: [LayerRole: LayerTensor] = [:]
            for spec in table {
                let shape = spec.shape(c), name = n.layer(l, spec)
                if spec.isMatrix, shape.count == 2 {
                    loaded[spec.role] = .matrix(try matrix(name, shape[0], shape[1]))
                } else {
                    let values = try matrix(name, 1, shape.reduce(1, *)).toFloats()
                    loaded[spec.role] = .vector(FloatBuffer(spec.kind == .norm ? offset(values) : values))
                }
            }
            return try LayerWeights(tensor: { loaded[$0] }) { role in
                let spec = table.first { $0.role == role }
                return ModelError.missingTensor(path: path, tensor: spec.map { n.layer(l, $0) } ?? role.rawValue)
            }
        }
        let output = c.tied ? embedding : try matrix(n.output, c.vocabSize, dim)
        return ModelWeights(embedding: embedding, layers: layers, finalNorm: try norm(n.finalNorm), output: output)
    }
}
