import Foundation
import QBKernels
import QBModel

/// The model a result was measured on: file identity, shape, and how its weights are
/// stored.
public struct ModelInfo: Codable, Sendable, Equatable {
    public var path: String
    /// llama-bench's description: "llama <size> <type>", e.g. "llama 260K F32".
    public var name: String
    /// File format (`ModelSource.Format`): "safetensors", "llama2.c", "GGUF", "MLX safetensors".
    public var format: String
    /// The --quant setting applied at load, or nil for the weights as stored.
    public var quantization: String?
    /// XXH64 of the model's files (see `FileHash.model`), 16 hex digits.
    public var fileHash: String
    public var fileBytes: Int
    public var files: [String]
    public var parameters: Int
    /// Bytes of every weight tensor as the engine holds them (after --quant), norms included.
    public var weightBytes: Int
    public var bitsPerWeight: Double
    /// Weight format name → number of tensors in it: the mix of fallbacks a setting made.
    public var tensorFormats: [String: Int]
    public var config: Shape
    /// The tokenizer's type and, when given, its path.
    public var tokenizer: String

    public struct Shape: Codable, Sendable, Equatable {
        public var hiddenSize: Int
        public var layers: Int
        public var heads: Int
        public var kvHeads: Int
        public var headDim: Int
        public var ffnSize: Int
        public var vocabSize: Int
        public var contextLength: Int
        enum CodingKeys: String, CodingKey {
            case hiddenSize = "hidden_size", layers, heads, kvHeads = "kv_heads", headDim = "head_dim", ffnSize = "ffn_size"
            case vocabSize = "vocab_size", contextLength = "context_length"
        }
    }

    enum CodingKeys: String, CodingKey {
        case path, name, format, quantization, fileHash = "file_hash", fileBytes = "file_bytes", files, parameters
        case weightBytes = "weight_bytes", bitsPerWeight = "bits_per_weight", tensorFormats = "tensor_formats", config
        case tokenizer
    }
}

extension ModelInfo {
    /// Describes `model`; `hash` is `FileHash.model(path:)` of its source.
    public init(_ model: any LanguageModel, hash: (hash: String, bytes: Int, files: [String]), tokenizer: String) {
        let c = model.config
        path = model.source.path
        format = model.source.format.rawValue
        quantization = model.source.quantization
        fileHash = hash.hash
        fileBytes = hash.bytes
        files = hash.files
        parameters = model.parameterCount
        weightBytes = model.source.tensors.reduce(0) { $0 + $1.bytes }
        bitsPerWeight = model.bitsPerWeight
        tensorFormats = model.tensorFormatMix
        name = model.llamaBenchName
        config = Shape(
            hiddenSize: c.hiddenSize, layers: c.numHiddenLayers, heads: c.numAttentionHeads, kvHeads: c.kvHeads,
            headDim: c.headDimension, ffnSize: c.intermediateSize, vocabSize: c.vocabSize, contextLength: c.contextLength)
        self.tokenizer = tokenizer
    }
}

extension LanguageModel {
    /// Weights of the model (norms included, a tied head counted once), counted as values
    /// whatever their packing: MLX's packed words, scales and biases do not add parameters.
    public var parameterCount: Int {
        logicalMatrices.reduce(0) { $0 + $1.elementCount } + vectorCount
    }

    /// Values of the f32 vectors: every layer's norms (and biases), and the final norm.
    var vectorCount: Int {
        weights.layers.reduce(weights.finalNorm.count) { n, l in l.vectors.reduce(n) { $0 + $1.1.count } }
    }

    /// Every weight matrix once (a tied head is the embedding).
    var logicalMatrices: [Matrix] {
        [weights.embedding] + weights.layers.flatMap { $0.matrices.map(\.1) } + (config.tied ? [] : [weights.output])
    }

    /// Bits per weight over all tensors, as `inspect` reports it.
    public var bitsPerWeight: Double {
        let n = parameterCount
        return n > 0 ? Double(source.tensors.reduce(0) { $0 + $1.bytes } * 8) / Double(n) : 0
    }

    /// Weight format → tensor count, e.g. ["Q4_0": 11, "F16": 5, "F32": 11].
    public var tensorFormatMix: [String: Int] {
        Dictionary(grouping: source.tensors, by: \.dtype).mapValues(\.count)
    }

    /// Bytes of the weight matrices the forward pass reads, each once (a tied head shares
    /// the embedding's bytes): the "weights" line of the memory breakdown.
    public var weightMatrixBytes: Int {
        var total = weights.embedding.byteCount
        for layer in weights.layers { total += layer.matrices.reduce(0) { $0 + $1.1.byteCount } }
        if !config.tied { total += weights.output.byteCount }
        total += vectorCount * 4  // norms and biases, widened to f32 at load
        return total
    }

    /// The most common matrix format (what llama-bench's type column names, e.g. Q4_0).
    public var dominantFormat: String {
        let byBytes = Dictionary(grouping: logicalMatrices, by: \.format.name).mapValues { $0.reduce(0) { $0 + $1.elementCount } }
        return byBytes.max { $0.value < $1.value || ($0.value == $1.value && $0.key > $1.key) }?.key ?? "F32"
    }

    /// "<architecture> <size> <type>" as llama-bench prints a model: size from the parameter count
    /// (260K, 15M, 1B), type the `--quant` setting, else the file's own type as llama.cpp names
    /// it (GGUF `general.file_type`, e.g. "Q4_K - Medium"), else the most common weight format.
    public var llamaBenchName: String {
        let n = Double(parameterCount)
        let size: String
        if n >= 1e9 {
            size = String(format: "%.0fB", n / 1e9)
        } else if n >= 1e6 {
            size = String(format: "%.0fM", n / 1e6)
        } else {
            size = String(format: "%.0fK", n / 1e3)
        }
        let type = source.quantization.map { $0.uppercased() } ?? source.fileType ?? dominantFormat.uppercased()
        return "\(architecture.name) \(size) \(type)"
    }
}
