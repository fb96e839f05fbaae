import QBFormats
import QBKernels
import QBSupport

/// A quantization setting as the command line names it (`--quant SPEC`).
public struct QuantSpec: Sendable, Hashable, CustomStringConvertible {
    /// The format every weight matrix is converted to, where its width allows.
    public let format: WeightFormat
    public let name: String

    public static let all: [String] = [
        "f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k",
        "mlx-q4-g32", "mlx-q4-g64", "mlx-q4-g128", "mlx-q8-g32", "mlx-q8-g64", "mlx-q8-g128",
    ]

    public init(_ name: String) throws {
        let n = name.lowercased()
        self.name = n
        switch n {
        case "f32": format = .dense(.f32)
        case "f16": format = .dense(.f16)
        case "bf16": format = .dense(.bf16)
        case "q8_0": format = .ggml(.q8_0)
        case "q4_0": format = .ggml(.q4_0)
        case "q4_1": format = .ggml(.q4_1)
        case "q5_0": format = .ggml(.q5_0)
        case "q5_1": format = .ggml(.q5_1)
        case "q4_k": format = .ggml(.q4_K)
        default:
            let parts = n.split(separator: "-")
            guard parts.count == 3, parts[0] == "mlx", parts[1].hasPrefix("q"), parts[2].hasPrefix("g"),
                  let bits = Int(parts[1].dropFirst()), let group = Int(parts[2].dropFirst()),
                  MLXQuantization.supportedBits.contains(bits), MLXQuantization.supportedGroups.contains(group)
            else {
                throw ModelError.invalidField(
                    path: "--quant", field: name.count > 40 ? "\(name.prefix(40))... (\(name.count) characters)" : name, reason: "unknown quantization; choose one of \(Self.all.joined(separator: ", "))")
            }
            format = .mlx(MLXQuantization(bits: bits, groupSize: group, scaleType: .f32))
        }
    }

    public var description: String { name }

    public var isMLX: Bool { if case .mlx = format { return true } else { return false } }

    /// The format a matrix `cols` wide actually gets: the spec's when the width divides
    /// into its blocks, else the next that fits, as llama-quantize falls back (Q4_K to
    /// Q5_0, block formats to F16); MLX leaves such a matrix in its stored format, as
    /// mlx-lm does. `stored` is the matrix's current format.
    public func format(forCols cols: Int, stored: WeightFormat) -> WeightFormat {
        var candidates: [WeightFormat] = [format]
        if case .ggml(.q4_K) = format { candidates.append(.ggml(.q5_0)) }
        if case .mlx = format { candidates.append(stored) } else { candidates.append(.dense(.f16)) }
        return candidates.first { $0.fits(cols: cols) } ?? stored
    }
}

extension LanguageModel {
    /// This model with every weight matrix converted per `spec` (norms and biases stay
    /// f32). Matrices already in the target format are kept as they are.
    public func quantized(_ spec: QuantSpec, pool: ThreadPool) throws -> Self {
        var infos: [TensorInfo] = []
        // Progress in source bytes, one matrix at a time (LongWork; an interrupt throws).
        let sourceMatrices = [weights.embedding] + weights.layers.flatMap { $0.matrices.map(\.1) } + (config.tied ? [] : [weights.output])
        LongWork.begin("converting the weights to \(spec.name)", total: sourceMatrices.reduce(0) { $0 + $1.byteCount })
        defer { LongWork.end() }
        func convert(_ m: Matrix, _ name: String) throws -> Matrix {
            defer { try? LongWork.advance(m.byteCount) }
            try LongWork.checkpoint()
            let target = spec.format(forCols: m.cols, stored: m.format)
            let out: Matrix
            if target == m.format || (target.isMLXLike(m.format)) {
                out = m
            } else {
                out = Quantizer.convert(m, to: target, pool: pool)
            }
            infos.append(TensorInfo(name: name, dtype: out.format.name, shape: [out.rows, out.cols], bytes: out.byteCount))
            return out
        }
        let embedding = try convert(weights.embedding, "embedding")
        let layers = try weights.layers.enumerated().map { l, w in
            try w.mapMatrices { role, m in try convert(m, "layers.\(l).\(role.rawValue)") }
        }
        let output = config.tied ? embedding : try convert(weights.output, "output")
        infos.append(TensorInfo(name: "final_norm", dtype: "F32", shape: [config.hiddenSize], bytes: config.hiddenSize * 4))
        for (l, layer) in layers.enumerated() {
            for (role, v) in layer.vectors {
                infos.append(TensorInfo(name: "layers.\(l).\(role.rawValue)", dtype: "F32", shape: [v.count], bytes: v.count * 4))
            }
        }
        let source = ModelSource(
            format: self.source.format, path: self.source.path, tensors: infos, directory: self.source.directory,
            quantization: spec.name)
        return try replacing(
            weights: ModelWeights(embedding: embedding, layers: layers, finalNorm: weights.finalNorm, output: output),
            source: source)
    }
}

extension WeightFormat {
    /// MLX formats that differ only in the (in-memory) scale type count as the same.
    func isMLXLike(_ other: WeightFormat) -> Bool {
        if case .mlx(let a) = self, case .mlx(let b) = other { return a.bits == b.bits && a.groupSize == b.groupSize }
        return false
    }
}
