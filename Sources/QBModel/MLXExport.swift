import Foundation
import QBFormats
import QBKernels
import QBSupport

/// Writes a model as an MLX-quantized Hugging Face folder (the layout mlx-community
/// publishes): config.json with a `quantization` entry, and model.safetensors holding
/// uint32-packed weights with scales and biases beside them.
public enum MLXExport {
    public static func write(_ model: any LanguageModel, spec: QuantSpec, to directory: URL, pool: ThreadPool) throws {
        guard case .mlx(let q) = spec.format else {
            throw ModelError.invalidField(path: directory.path, field: "--quant", reason: "\(spec.name) is not an MLX format")
        }
        let c = model.config
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var config = c
        var quant = MLXQuantizationConfig(groupSize: q.groupSize, bits: q.bits)
        // An MLX folder is a Hugging Face folder: RoPE pairs dimensions by halves, so rows
        // of Q and K from an interleaved source are permuted into that order.
        let permute = model.rope.style == .interleaved
        let hd = c.headDimension
        func headRowSource(_ r: Int, headRows: Bool) -> Int {
            guard headRows && permute else { return r }
            let h = r / hd, j = r % hd, half = j / (hd / 2), i = j % (hd / 2)
            return h * hd + 2 * i + half
        }

        struct Entry {
            let name: String
            let dtypeName: String
            let elementSize: Int
            let shape: [Int]
            let data: (UnsafeMutableRawPointer) -> Void
            init(name: String, dtype: DType, shape: [Int], data: @escaping (UnsafeMutableRawPointer) -> Void) {
                self.init(name: name, dtypeName: dtype.rawValue, elementSize: dtype.size, shape: shape, data: data)
            }
            init(name: String, dtypeName: String, elementSize: Int, shape: [Int], data: @escaping (UnsafeMutableRawPointer) -> Void) {
                self.name = name
                self.dtypeName = dtypeName
                self.elementSize = elementSize
                self.shape = shape
                self.data = data
            }
        }
        var entries: [Entry] = []
        // Norm weights go back to what Hugging Face files store (Gemma: w for a factor 1 + w).
        let normOffset = model.architecture.huggingFaceNormOffset
        func vector(_ name: String, _ v: FloatBuffer, headRows: Bool = false, isNorm: Bool = false) {
            let minus = isNorm ? normOffset : 0
            entries.append(Entry(name: name, dtype: .f32, shape: [v.count]) { dst in
                let f = dst.assumingMemoryBound(to: Float.self)
                for r in 0..<v.count { f[r] = v.pointer[headRowSource(r, headRows: headRows)] - minus }
            })
        }
        func linear(_ module: String, _ m: Matrix, source: String, headRows: Bool = false) throws {
            func sourceRow(_ r: Int) -> Int { headRowSource(r, headRows: headRows) }
            guard q.groupSize <= m.cols, m.cols % q.groupSize == 0 else {
                // Left in full precision, as mlx-lm leaves modules whose width does not divide.
                quant.overrides[module] = .some(nil)
                entries.append(Entry(name: module + ".weight", dtype: .f32, shape: [m.rows, m.cols]) { dst in
                    let f = dst.assumingMemoryBound(to: Float.self)
                    for r in 0..<m.rows { m.row(sourceRow(r), into: f + r * m.cols) }
                })
                return
            }
            let scaleType: DType = m.dtype == .bf16 ? .bf16 : (m.dtype == .f16 ? .f16 : .f32)
            let converted = try model.convertChecked(m, tensor: source, to: .mlx(q), pool: pool)
            guard let scales = converted.scales, let biases = converted.biases else {
                throw ModelError.invalidTensor(path: directory.path, tensor: module, reason: "MLX conversion left no scales")
            }
            let words = m.cols * q.bits / 32, groups = m.cols / q.groupSize
            entries.append(Entry(name: module + ".weight", dtypeName: "U32", elementSize: 4, shape: [m.rows, words]) { dst in
                for r in 0..<m.rows {
                    (dst + r * words * 4).copyMemory(from: converted.base + sourceRow(r) * words * 4, byteCount: words * 4)
                }
            })
            for (suffix, p) in [(".scales", scales), (".biases", biases)] {
                entries.append(Entry(name: module + suffix, dtype: scaleType, shape: [m.rows, groups]) { dst in
                    let src = p.assumingMemoryBound(to: Float.self)
                    for r in 0..<m.rows {
                        let from = src + sourceRow(r) * groups
                        switch scaleType {
                        case .f32: (dst + r * groups * 4).copyMemory(from: from, byteCount: groups * 4)
                        case .f16: Convert.f32ToF16(from, (dst + r * groups * 2).assumingMemoryBound(to: UInt16.self), count: groups)
                        case .bf16: Convert.f32ToBF16(from, (dst + r * groups * 2).assumingMemoryBound(to: UInt16.self), count: groups)
                        }
                    }
                })
            }
        }
        // MLX names modules: the Hugging Face tensor names without ".weight".
        let n = TensorNames.huggingFace
        func module(_ name: String) -> String { String(name.dropLast(".weight".count)) }
        let sn = model.sourceTensorNames
        try linear(module(n.embedding), model.weights.embedding, source: sn.embedding)
        for (l, layer) in model.weights.layers.enumerated() {
            for spec in model.architecture.layerTable {
                switch layer[spec.role] {
                case .matrix(let m)?: try linear(module(n.layer(l, spec)), m, source: sn.layer(l, spec), headRows: spec.headRows)
                case .vector(let v)?: vector(n.layer(l, spec), v, headRows: spec.headRows, isNorm: spec.kind == .norm)
                case nil: throw ModelError.missingTensor(path: model.source.path, tensor: n.layer(l, spec))
                }
            }
        }
        vector(n.finalNorm, model.weights.finalNorm, isNorm: true)
        if !c.tied { try linear(module(n.output), model.weights.output, source: sn.output) }

        config.quantization = quant
        config.torchDtype = "float32"
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try AtomicWriter.write(try encoder.encode(config), to: directory.appendingPathComponent("config.json"))

        let target = directory.appendingPathComponent("model.safetensors")
        try AtomicWriter.produce(at: target) { tmp in
            try SafetensorsWriter.writeRaw(
                path: tmp.path,
                tensors: entries.map {
                    .init(name: $0.name, dtypeName: $0.dtypeName, shape: $0.shape, byteCount: $0.shape.reduce(1, *) * $0.elementSize)
                }
            ) { i, buffer in entries[i].data(buffer) }
        }
    }
}
