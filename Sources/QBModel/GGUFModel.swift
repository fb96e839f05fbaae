import Foundation
import QBFormats
import QBKernels

/// A model from a GGUF file: the `<architecture>.*` metadata, GGML tensor names, any of
/// the block types the kernels read, used in place from the mapping.
///
/// llama.cpp's converter permutes the rows of Llama's Q and K so that RoPE pairs adjacent
/// dimensions; attention scores are invariant under that permutation as long as RoPE
/// pairs the same way, so the weights are used as stored with interleaved RoPE. Qwen's
/// rows are stored unpermuted and run with RoPE by halves (`Architecture.ggufRopeStyle`).
public enum GGUFModel {
    public static func load(path: String) throws -> any LanguageModel {
        try load(GGUFFile(path: path))
    }

    public static func load(_ gguf: GGUFFile) throws -> any LanguageModel {
        let path = gguf.file.path
        let architecture = try ArchitectureRegistry.forGGUF(gguf.metadata["general.architecture"]?.string, path: path)
        let prefix = architecture.name + "."
        func int(_ key: String, default d: Int? = nil) throws -> Int {
            if let v = gguf.metadata[prefix + key] {
                guard let i = v.int else { throw ModelError.invalidField(path: path, field: prefix + key, reason: "not an integer") }
                return i
            }
            if let d { return d }
            throw ModelError.invalidField(path: path, field: prefix + key, reason: "missing")
        }
        func float(_ key: String, default d: Double) throws -> Float {
            guard let v = gguf.metadata[prefix + key] else { return Float(d) }
            guard let f = v.double else { throw ModelError.invalidField(path: path, field: prefix + key, reason: "not a number") }
            return Float(f)
        }
        let hidden = try int("embedding_length"), heads = try int("attention.head_count")
        guard let embd = gguf.tensor("token_embd.weight"), embd.dims.count == 2 else {
            throw ModelError.missingTensor(path: path, tensor: "token_embd.weight")
        }
        let vocab = try int("vocab_size", default: embd.dims[1])
        var config = TransformerConfig(
            hiddenSize: hidden, intermediateSize: try int("feed_forward_length"),
            numHiddenLayers: try int("block_count"), numAttentionHeads: heads,
            numKeyValueHeads: try int("attention.head_count_kv", default: heads), vocabSize: vocab,
            rmsNormEps: try float("attention.layer_norm_rms_epsilon", default: 1e-5),
            ropeTheta: try float("rope.freq_base", default: 10000),
            tieWordEmbeddings: gguf.tensor("output.weight") == nil,
            maxPositionEmbeddings: try int("context_length", default: 2048))
        config.modelType = architecture.huggingFaceTypes.first
        config.architectures = [architecture.huggingFaceClass]
        if let kl = gguf.metadata[prefix + "attention.key_length"]?.int, kl != hidden / max(heads, 1) { config.headDim = kl }
        if let vl = gguf.metadata[prefix + "attention.value_length"]?.int, vl != config.headDimension {
            throw ModelError.invalidField(
                path: path, field: prefix + "attention.value_length",
                reason: "\(vl) differs from the key length \(config.headDimension); not supported")
        }
        try architecture.readGGUF(&config, gguf.metadata, path)
        let gk = [
            "hidden_size": "embedding_length", "intermediate_size": "feed_forward_length",
            "num_hidden_layers": "block_count", "num_attention_heads": "attention.head_count",
            "num_key_value_heads": "attention.head_count_kv", "vocab_size": "vocab_size",
            "max_position_embeddings": "context_length", "rms_norm_eps": "attention.layer_norm_rms_epsilon",
            "rope_theta": "rope.freq_base", "head_dim": "attention.key_length",
            "sliding_window": "attention.sliding_window", "rope_local_base_freq": "rope.freq_base_swa",
            "final_logit_softcapping": "final_logit_softcapping", "attn_logit_softcapping": "attn_logit_softcapping",
        ]
        do { try config.validate(path: path) } catch ModelError.invalidField(_, let field, let reason) {
            throw ModelError.invalidField(path: path, field: gk[field].map { prefix + $0 } ?? field, reason: reason)
        }
        if let rd = gguf.metadata[prefix + "rope.dimension_count"]?.int, rd != config.headDimension {
            throw ModelError.invalidField(
                path: path, field: prefix + "rope.dimension_count",
                reason: "\(rd) (partial rotary embedding) is not supported; head dim is \(config.headDimension)")
        }
        let bos = gguf.metadata["tokenizer.ggml.bos_token_id"]?.int
        var stops: [Int] = []
        for key in ["eos_token_id", "eot_token_id", "eom_token_id"] {
            if let id = gguf.metadata["tokenizer.ggml." + key]?.int, !stops.contains(id) { stops.append(id) }
        }
        config.bosTokenId = bos
        config.eosTokenId = stops.isEmpty ? nil : TokenIDList(stops)

        func matrix(_ name: String, _ rows: Int, _ cols: Int) throws -> Matrix { try gguf.matrix(name, rows: rows, cols: cols) }
        let weights = try ModelWeights.load(
            config: config, table: architecture.layerTable, names: .gguf, path: path, matrix: matrix)

        var rope = try config.rope(style: architecture.ggufRopeStyle, path: path)
        if gguf.tensor("rope_freqs.weight") != nil {
            let factors = try matrix("rope_freqs.weight", 1, config.headDimension / 2).toFloats()
            guard factors.allSatisfy({ $0 > 0 && $0.isFinite }) else {
                throw ModelError.invalidTensor(path: path, tensor: "rope_freqs.weight", reason: "factors must be positive")
            }
            rope = Rope(
                headDim: config.headDimension, theta: config.theta, style: architecture.ggufRopeStyle, frequencyFactors: factors)
        }
        let infos = gguf.tensors.map {
            TensorInfo(name: $0.name, dtype: $0.typeName, shape: Array($0.dims.reversed()), bytes: $0.range.count)
        }
        let source = ModelSource(
            format: .gguf, path: path, tensors: infos, directory: nil,
            fileType: gguf.metadata["general.file_type"]?.int.map(GGUFFileType.name))
        return try architecture.makeModel(ModelParts(
            config: config, rope: rope, weights: weights, source: source,
            stopTokens: stops.map { Int32(truncatingIfNeeded: $0) }, bosToken: bos.map { Int32(truncatingIfNeeded: $0) }))
    }
}
