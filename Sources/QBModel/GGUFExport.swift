import Foundation
import QBFormats
import QBKernels

/// Writes a Llama model as a GGUF file llama.cpp can run: llama.* metadata, GGML tensor
/// names, Q and K rows permuted as llama.cpp's converter does when the source pairs RoPE
/// dimensions by halves, llama3 scaling as a `rope_freqs` tensor.
public enum GGUFExport {
    /// `spec` picks each matrix's format (with llama-quantize's fallbacks); without it
    /// matrices keep their stored format. `extra` is appended to the metadata (the
    /// tokenizer's `tokenizer.ggml.*` keys, written by the text layer).
    public static func write(
        _ model: LlamaModel, spec: QuantSpec?, name: String, extra: [(String, GGUFValue)], to url: URL, pool: ThreadPool
    ) throws {
        if let spec, spec.isMLX {
            throw ModelError.invalidField(path: url.path, field: "--quant", reason: "\(spec.name) is an MLX format; GGUF holds q* and f* formats")
        }
        let c = model.config
        var w = GGUFWriter()
        w.add("general.architecture", .string("llama"))
        w.add("general.name", .string(name))
        w.add("llama.context_length", .uint32(UInt32(c.contextLength)))
        w.add("llama.embedding_length", .uint32(UInt32(c.hiddenSize)))
        w.add("llama.block_count", .uint32(UInt32(c.numHiddenLayers)))
        w.add("llama.feed_forward_length", .uint32(UInt32(c.intermediateSize)))
        w.add("llama.attention.head_count", .uint32(UInt32(c.numAttentionHeads)))
        w.add("llama.attention.head_count_kv", .uint32(UInt32(c.kvHeads)))
        w.add("llama.rope.freq_base", .float32(c.theta))
        w.add("llama.attention.layer_norm_rms_epsilon", .float32(c.eps))
        w.add("llama.rope.dimension_count", .uint32(UInt32(c.headDimension)))
        w.add("llama.vocab_size", .uint32(UInt32(c.vocabSize)))
        if c.headDimension != c.hiddenSize / c.numAttentionHeads {
            w.add("llama.attention.key_length", .uint32(UInt32(c.headDimension)))
            w.add("llama.attention.value_length", .uint32(UInt32(c.headDimension)))
        }
        w.add("general.file_type", .uint32(fileType(spec)))
        w.add("general.quantization_version", .uint32(2))
        for (k, v) in extra { w.add(k, v) }

        let permute = model.rope.style == .halves
        func matrix(_ name: String, _ m: Matrix, headRows: Bool = false) throws {
            let target = spec?.format(forCols: m.cols, stored: m.format) ?? m.format
            guard target.ggmlID >= 0 else {
                throw ModelError.invalidTensor(path: url.path, tensor: name, reason: "\(m.format.name) cannot be stored in GGUF without --quant")
            }
            let hd = c.headDimension
            w.tensors.append(.init(name: name, dims: [m.cols, m.rows], type: target.ggmlID) { buf in
                let src = target == m.format ? m : Quantizer.convert(m, to: target, pool: pool)
                let rowBytes = src.rowBytes
                for g in 0..<m.rows {
                    var r = g
                    if headRows && permute {
                        let h = g / hd, j = g % hd
                        r = h * hd + (j % 2) * (hd / 2) + j / 2
                    }
                    src.storedRows(r..<(r + 1), into: buf.baseAddress! + g * rowBytes)
                }
            })
        }
        func norm(_ name: String, _ v: FloatBuffer) {
            w.tensors.append(.init(name: name, dims: [v.count], type: 0) { buf in
                buf.baseAddress!.copyMemory(from: v.pointer, byteCount: v.count * 4)
            })
        }
        let n = TensorNames.gguf
        try matrix(n.embedding, model.weights.embedding)
        for (l, layer) in model.weights.layers.enumerated() {
            norm(n.layer(l, n.attentionNorm), layer.attentionNorm)
            try matrix(n.layer(l, n.wq), layer.wq, headRows: true)
            try matrix(n.layer(l, n.wk), layer.wk, headRows: true)
            try matrix(n.layer(l, n.wv), layer.wv)
            try matrix(n.layer(l, n.wo), layer.wo)
            norm(n.layer(l, n.ffnNorm), layer.ffnNorm)
            try matrix(n.layer(l, n.gate), layer.gate)
            try matrix(n.layer(l, n.up), layer.up)
            try matrix(n.layer(l, n.down), layer.down)
        }
        norm(n.finalNorm, model.weights.finalNorm)
        if !c.tied { try matrix(n.output, model.weights.output) }
        if let s = try c.ropeScaling?.llama3(path: url.path) {
            norm("rope_freqs.weight", FloatBuffer(frequencyFactors(config: c, scaling: s)))
        }
        try w.write(to: url)
    }

    /// llama3 scaling as per-pair divisors of the base frequencies (what llama.cpp's
    /// converter stores in `rope_freqs`).
    public static func frequencyFactors(config c: LlamaConfig, scaling s: Llama3RopeScaling) -> [Float] {
        let base = Rope(headDim: c.headDimension, theta: c.theta, style: .interleaved).inverseFrequencies
        let old = Float(s.originalMaxPositionEmbeddings)
        let lowWavelen = old / s.lowFreqFactor, highWavelen = old / s.highFreqFactor
        return base.map { f in
            let wavelen = 2 * Float.pi / f
            if wavelen < highWavelen { return 1 }
            if wavelen > lowWavelen { return s.factor }
            let smooth = (old / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor)
            return 1 / ((1 - smooth) / s.factor + smooth)
        }
    }

    /// llama.cpp's `general.file_type` (LLAMA_FTYPE_*) for a spec.
    static func fileType(_ spec: QuantSpec?) -> UInt32 {
        switch spec?.format {
        case .dense(.f16)?: return 1
        case .dense(.bf16)?: return 32
        case .ggml(.q4_0)?: return 2
        case .ggml(.q4_1)?: return 3
        case .ggml(.q8_0)?: return 7
        case .ggml(.q5_0)?: return 8
        case .ggml(.q5_1)?: return 9
        case .ggml(.q4_K)?: return 14
        default: return 0
        }
    }
}
