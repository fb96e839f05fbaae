import QBFormats
import QBKernels

/// llama2.c checkpoints (Karpathy's run.c format), read in place.
///
/// - legacy: seven int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
///   seq_len; a negative vocab_size means an unshared classifier), then f32 tensors in the
///   order tok_emb, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3, rms_final, freq_cis
///   (real, imag), [wcls].
/// - version 1: a 256-byte header (magic "ak42", version 1, the seven params,
///   shared_classifier byte), then rms_att, rms_ffn, rms_final, tok_emb, wq, wk, wv, wo,
///   w1, w2, w3, [wcls].
/// Its RoPE pairs adjacent dimensions (Meta's layout), and generation ends on BOS,
/// which is how run.c was trained to stop.
public enum Llama2cCheckpoint {
    static let magic: UInt32 = 0x616b_3432

    public static func load(path: String) throws -> LlamaModel {
        let file = try MappedFile(path: path)
        let first = try file.load(UInt32.self, at: 0, item: "header")
        let version1 = first == magic
        if version1 {
            let version = try file.load(Int32.self, at: 4, item: "version")
            guard version == 1 else { throw ModelError.unsupportedVersion(path: path, version: Int(version)) }
        }
        let p0 = version1 ? 8 : 0
        let names = ["dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads", "vocab_size", "seq_len"]
        var v: [Int] = []
        for (i, name) in names.enumerated() {
            v.append(Int(try file.load(Int32.self, at: p0 + 4 * i, item: name)))
        }
        let shared: Bool
        let vocab: Int
        if version1 {
            shared = try file.load(UInt8.self, at: 36, item: "shared_classifier") != 0
            vocab = v[5]
        } else {
            shared = v[5] > 0
            vocab = abs(v[5])
        }
        var config = TransformerConfig(
            hiddenSize: v[0], intermediateSize: v[1], numHiddenLayers: v[2], numAttentionHeads: v[3],
            numKeyValueHeads: v[4], vocabSize: vocab, rmsNormEps: 1e-5, ropeTheta: 10000,
            tieWordEmbeddings: shared, maxPositionEmbeddings: v[6])
        config.bosTokenId = 1
        config.eosTokenId = TokenIDList([2])
        // llama2.c headers carry no names; report the header fields under llama2.c's own names.
        do { try config.validate(path: path) } catch ModelError.invalidField(_, let field, let reason) {
            let map = [
                "hidden_size": "dim", "intermediate_size": "hidden_dim", "num_hidden_layers": "n_layers",
                "num_attention_heads": "n_heads", "num_key_value_heads": "n_kv_heads",
                "vocab_size": "vocab_size", "max_position_embeddings": "seq_len", "head_dim": "dim / n_heads",
            ]
            throw ModelError.invalidField(path: path, field: "header " + (map[field] ?? field), reason: reason)
        }

        let dim = config.hiddenSize, hidden = config.intermediateSize, layers = config.numHiddenLayers
        let kvDim = config.kvDim, hd = config.headDimension, seq = config.contextLength
        var offset = version1 ? 256 : 28
        var tensors: [TensorInfo] = []

        func take(_ name: String, rows: Int, cols: Int, count: Int = 1) throws -> [Matrix] {
            var out: [Matrix] = []
            let bytes = rows * cols * 4
            for i in 0..<count {
                let label = count > 1 ? "\(name)[\(i)]" : name
                try file.check(offset: offset, count: bytes, item: label)
                out.append(Matrix(dtype: .f32, rows: rows, cols: cols, base: file.base + offset, owner: file))
                offset += bytes
            }
            tensors.append(TensorInfo(name: name, dtype: "F32", shape: count > 1 ? [count, rows, cols] : [rows, cols], bytes: bytes * count))
            return out
        }
        func norms(_ ms: [Matrix]) -> [FloatBuffer] { ms.map { FloatBuffer($0.toFloats()) } }

        var emb: Matrix, rmsAtt: [Matrix], rmsFfn: [Matrix], rmsFinal: Matrix
        let wq, wk, wv, wo, w1, w2, w3: [Matrix]
        if version1 {
            rmsAtt = try take("rms_att", rows: 1, cols: dim, count: layers)
            rmsFfn = try take("rms_ffn", rows: 1, cols: dim, count: layers)
            rmsFinal = try take("rms_final", rows: 1, cols: dim)[0]
            emb = try take("tok_embeddings", rows: vocab, cols: dim)[0]
            wq = try take("wq", rows: config.qDim, cols: dim, count: layers)
            wk = try take("wk", rows: kvDim, cols: dim, count: layers)
            wv = try take("wv", rows: kvDim, cols: dim, count: layers)
            wo = try take("wo", rows: dim, cols: config.qDim, count: layers)
            w1 = try take("w1", rows: hidden, cols: dim, count: layers)
            w2 = try take("w2", rows: dim, cols: hidden, count: layers)
            w3 = try take("w3", rows: hidden, cols: dim, count: layers)
        } else {
            emb = try take("tok_embeddings", rows: vocab, cols: dim)[0]
            rmsAtt = try take("rms_att", rows: 1, cols: dim, count: layers)
            wq = try take("wq", rows: config.qDim, cols: dim, count: layers)
            wk = try take("wk", rows: kvDim, cols: dim, count: layers)
            wv = try take("wv", rows: kvDim, cols: dim, count: layers)
            wo = try take("wo", rows: dim, cols: config.qDim, count: layers)
            rmsFfn = try take("rms_ffn", rows: 1, cols: dim, count: layers)
            w1 = try take("w1", rows: hidden, cols: dim, count: layers)
            w2 = try take("w2", rows: dim, cols: hidden, count: layers)
            w3 = try take("w3", rows: hidden, cols: dim, count: layers)
            rmsFinal = try take("rms_final", rows: 1, cols: dim)[0]
            // Precomputed RoPE tables, unused: angles are recomputed exactly as run.c does.
            _ = try take("freq_cis_real", rows: seq, cols: hd / 2)
            _ = try take("freq_cis_imag", rows: seq, cols: hd / 2)
        }
        let output = shared ? emb : try take("wcls", rows: vocab, cols: dim)[0]
        guard offset == file.size else {
            throw ModelError.invalidField(
                path: path, field: "file size",
                reason: "header describes \(offset) bytes, file has \(file.size) (wrong header or trailing data)")
        }
        let attNorms = norms(rmsAtt), ffnNorms = norms(rmsFfn)
        let layerWeights = (0..<layers).map { l in
            LayerWeights(
                attentionNorm: attNorms[l], wq: wq[l], wk: wk[l], wv: wv[l], wo: wo[l],
                ffnNorm: ffnNorms[l], gate: w1[l], up: w3[l], down: w2[l])
        }
        let weights = LlamaWeights(
            embedding: emb, layers: layerWeights, finalNorm: FloatBuffer(rmsFinal.toFloats()), output: output)
        let source = ModelSource(format: .llama2c, path: path, tensors: tensors, directory: nil)
        return try LlamaModel(
            config: config, ropeStyle: .interleaved, weights: weights, source: source, stopTokens: [1], bosToken: 1)
    }
}
