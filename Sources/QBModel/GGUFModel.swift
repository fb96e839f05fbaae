import Foundation
import QBFormats
import QBKernels

/// A Llama model from a GGUF file: the `llama.*` metadata, GGML tensor names, any of the
/// block types the kernels read, used in place from the mapping.
///
/// llama.cpp's converter permutes the rows of Q and K so that RoPE pairs adjacent
/// dimensions; attention scores are invariant under that permutation as long as RoPE
/// pairs the same way, so the weights are used as stored with interleaved RoPE.
public enum GGUFModel {
    public static func load(path: String) throws -> LlamaModel {
        try load(GGUFFile(path: path))
    }

    public static func load(_ gguf: GGUFFile) throws -> LlamaModel {
        let path = gguf.file.path
        let arch = gguf.metadata["general.architecture"]?.string
        guard arch == "llama" else {
            throw ModelError.invalidField(path: path, field: "general.architecture", reason: "\(arch ?? "missing") is not llama")
        }
        func int(_ key: String, default d: Int? = nil) throws -> Int {
            if let v = gguf.metadata["llama." + key] {
                guard let i = v.int else { throw ModelError.invalidField(path: path, field: "llama." + key, reason: "not an integer") }
                return i
            }
            if let d { return d }
            throw ModelError.invalidField(path: path, field: "llama." + key, reason: "missing")
        }
        func float(_ key: String, default d: Double) throws -> Float {
            guard let v = gguf.metadata["llama." + key] else { return Float(d) }
            guard let f = v.double else { throw ModelError.invalidField(path: path, field: "llama." + key, reason: "not a number") }
            return Float(f)
        }
        let hidden = try int("embedding_length"), heads = try int("attention.head_count")
        guard let embd = gguf.tensor("token_embd.weight"), embd.dims.count == 2 else {
            throw ModelError.missingTensor(path: path, tensor: "token_embd.weight")
        }
        let vocab = try int("vocab_size", default: embd.dims[1])
        var config = LlamaConfig(
            hiddenSize: hidden, intermediateSize: try int("feed_forward_length"),
            numHiddenLayers: try int("block_count"), numAttentionHeads: heads,
            numKeyValueHeads: try int("attention.head_count_kv", default: heads), vocabSize: vocab,
            rmsNormEps: try float("attention.layer_norm_rms_epsilon", default: 1e-5),
            ropeTheta: try float("rope.freq_base", default: 10000),
            tieWordEmbeddings: gguf.tensor("output.weight") == nil,
            maxPositionEmbeddings: try int("context_length", default: 2048))
        if let kl = gguf.metadata["llama.attention.key_length"]?.int, kl != hidden / max(heads, 1) { config.headDim = kl }
        let gk = [
            "hidden_size": "llama.embedding_length", "intermediate_size": "llama.feed_forward_length",
            "num_hidden_layers": "llama.block_count", "num_attention_heads": "llama.attention.head_count",
            "num_key_value_heads": "llama.attention.head_count_kv", "vocab_size": "llama.vocab_size",
            "max_position_embeddings": "llama.context_length", "rms_norm_eps": "llama.attention.layer_norm_rms_epsilon",
            "rope_theta": "llama.rope.freq_base", "head_dim": "llama.attention.key_length",
        ]
        do { try config.validate(path: path) } catch ModelError.invalidField(_, let field, let reason) {
            throw ModelError.invalidField(path: path, field: gk[field] ?? field, reason: reason)
        }
        if let rd = gguf.metadata["llama.rope.dimension_count"]?.int, rd != config.headDimension {
            throw ModelError.invalidField(
                path: path, field: "llama.rope.dimension_count",
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
        let weights = try LlamaWeights.load(config: config, names: .gguf, matrix: matrix)

        var rope: Rope?
        if gguf.tensor("rope_freqs.weight") != nil {
            let factors = try matrix("rope_freqs.weight", 1, config.headDimension / 2).toFloats()
            guard factors.allSatisfy({ $0 > 0 && $0.isFinite }) else {
                throw ModelError.invalidTensor(path: path, tensor: "rope_freqs.weight", reason: "factors must be positive")
            }
            rope = Rope(headDim: config.headDimension, theta: config.theta, style: .interleaved, frequencyFactors: factors)
        }
        let infos = gguf.tensors.map {
            TensorInfo(name: $0.name, dtype: $0.typeName, shape: Array($0.dims.reversed()), bytes: $0.range.count)
        }
        let source = ModelSource(format: .gguf, path: path, tensors: infos, directory: nil)
        return try LlamaModel(
            config: config, ropeStyle: .interleaved, weights: weights, source: source,
            stopTokens: stops.map { Int32(truncatingIfNeeded: $0) }, bosToken: bos.map { Int32(truncatingIfNeeded: $0) },
            rope: rope)
    }
}
