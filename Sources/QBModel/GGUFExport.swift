import Foundation
import QBFormats
import QBKernels

/// Writes a model as a GGUF file llama.cpp can run: `<architecture>.*` metadata, GGML
/// tensor names from the architecture's layer table, Q and K rows permuted as llama.cpp's
/// converter does when the file's RoPE pairing (`Architecture.ggufRopeStyle`) differs from
/// the model's, llama3 scaling as a `rope_freqs` tensor.
public enum GGUFExport {
    /// `spec` picks each matrix's format (with llama-quantize's fallbacks); without it
    /// matrices keep their stored format. `extra` is appended to the metadata (the
    /// tokenizer's `tokenizer.ggml.*` keys, written by the text layer).
    public static func write(
        _ model: any LanguageModel, spec: QuantSpec?, name: String, extra: [(String, GGUFValue)], to url: URL, pool: ThreadPool
    ) throws {
        if let spec, spec.isMLX {
            throw ModelError.invalidField(path: url.path, field: "--quant", reason: "\(spec.name) is an MLX format; GGUF holds q* and f* formats")
        }
        let c = model.config
        var w = GGUFWriter()
        let arch = model.architecture
        let p = arch.name + "."
        w.add("general.architecture", .string(arch.name))
        w.add("general.name", .string(name))
        w.add(p + "context_length", .uint32(UInt32(c.contextLength)))
        w.add(p + "embedding_length", .uint32(UInt32(c.hiddenSize)))
        w.add(p + "block_count", .uint32(UInt32(c.numHiddenLayers)))
        w.add(p + "feed_forward_length", .uint32(UInt32(c.intermediateSize)))
        w.add(p + "attention.head_count", .uint32(UInt32(c.numAttentionHeads)))
        w.add(p + "attention.head_count_kv", .uint32(UInt32(c.kvHeads)))
        w.add(p + "rope.freq_base", .float32(c.theta))
        w.add(p + "attention.layer_norm_rms_epsilon", .float32(c.eps))
        w.add(p + "rope.dimension_count", .uint32(UInt32(c.headDimension)))
        w.add(p + "vocab_size", .uint32(UInt32(c.vocabSize)))
        // llama.cpp's converter writes these whenever the config states head_dim.
        if c.headDimension != c.hiddenSize / c.numAttentionHeads || (arch.name != "llama" && c.headDim != nil) {
            w.add(p + "attention.key_length", .uint32(UInt32(c.headDimension)))
            w.add(p + "attention.value_length", .uint32(UInt32(c.headDimension)))
        }
        for (k, v) in try arch.writeGGUF(c, url.path) { w.add(p + k, v) }
        w.add("general.file_type", .uint32(fileType(spec)))
        w.add("general.quantization_version", .uint32(2))
        for (k, v) in extra { w.add(k, v) }

        // Rows laid out head by head are reordered when the file pairs RoPE dimensions
        // differently from the model: halves (i, i + d/2) into adjacent pairs (2i, 2i + 1).
        let permute = model.rope.style != arch.ggufRopeStyle
        let hd = c.headDimension
        func sourceRow(_ g: Int, headRows: Bool) -> Int {
            guard headRows && permute else { return g }
            let h = g / hd, j = g % hd
            return h * hd + (j % 2) * (hd / 2) + j / 2
        }
        func matrix(_ name: String, _ m: Matrix, source: String, headRows: Bool = false) throws {
            let target = spec?.format(forCols: m.cols, stored: m.format) ?? m.format
            guard target.ggmlID >= 0 else {
                throw ModelError.invalidTensor(path: url.path, tensor: name, reason: "\(m.format.name) cannot be stored in GGUF without --quant")
            }
            w.tensors.append(.init(name: name, dims: [m.cols, m.rows], type: target.ggmlID) { buf in
                guard let base = buf.baseAddress else { return }
                let src = target == m.format ? m : try model.convertChecked(m, tensor: source, to: target, pool: pool)
                let rowBytes = src.rowBytes
                for g in 0..<m.rows {
                    let r = sourceRow(g, headRows: headRows)
                    src.storedRows(r..<(r + 1), into: base + g * rowBytes)
                }
            })
        }
        func vector(_ name: String, _ v: FloatBuffer, headRows: Bool = false) {
            w.tensors.append(.init(name: name, dims: [v.count], type: 0) { buf in
                let out = buf.bindMemory(to: Float.self)
                for g in 0..<min(v.count, out.count) { out[g] = v.pointer[sourceRow(g, headRows: headRows)] }
            })
        }
        let n = TensorNames.gguf
        let sn = model.sourceTensorNames
        try matrix(n.embedding, model.weights.embedding, source: sn.embedding)
        for (l, layer) in model.weights.layers.enumerated() {
            for spec in arch.layerTable {
                switch layer[spec.role] {
                case .matrix(let m)?: try matrix(n.layer(l, spec), m, source: sn.layer(l, spec), headRows: spec.headRows)
                case .vector(let v)?: vector(n.layer(l, spec), v, headRows: spec.headRows)
                case nil: throw ModelError.missingTensor(path: model.source.path, tensor: n.layer(l, spec))
                }
            }
        }
        vector(n.finalNorm, model.weights.finalNorm)
        if !c.tied { try matrix(n.output, model.weights.output, source: sn.output) }
        if let s = try c.ropeScalingEntry?.llama3(path: url.path) {
            vector("rope_freqs.weight", FloatBuffer(frequencyFactors(config: c, scaling: s)))
        }
        try w.write(to: url)
    }

    /// llama3 scaling as per-pair divisors of the base frequencies (what llama.cpp's
    /// converter stores in `rope_freqs`).
    public static func frequencyFactors(config c: TransformerConfig, scaling s: Llama3RopeScaling) -> [Float] {
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
