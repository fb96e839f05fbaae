import CQBKernels

/// Converts weight matrices between formats: the core of quantize-at-load and of the
/// writers. Rows are converted independently (in parallel), each through f32.
public enum Quantizer {
    /// Formats the quantizers can produce (GGML's reference quantizers, MLX's affine one).
    public static func canProduce(_ format: WeightFormat) -> Bool {
        switch format {
        case .dense: return true
        case .ggml(let t): return [.q8_0, .q4_0, .q4_1, .q5_0, .q5_1, .q4_K].contains(t)
        case .mlx(let q): return MLXQuantization.supportedBits.contains(q.bits) && MLXQuantization.supportedGroups.contains(q.groupSize)
        }
    }

    /// `m` re-encoded in `format` (which must fit its width and be producible), in memory
    /// owned by the result. MLX scales and biases are kept in f32.
    public static func convert(_ m: Matrix, to format: WeightFormat, pool: ThreadPool) -> Matrix {
        var target = format
        if case .mlx(var q) = format { q.scaleType = .f32; target = .mlx(q) }
        let rowBytes = target.rowBytes(cols: m.cols)
        let data = FloatBuffer(count: (m.rows * rowBytes + 3) / 4 + 16, zeroed: true)
        let raw = UnsafeMutableRawPointer(data.pointer)
        var scales: FloatBuffer?, biases: FloatBuffer?
        var groups = 0
        if case .mlx(let q) = target {
            groups = m.cols / q.groupSize
            scales = FloatBuffer(count: m.rows * groups)
            biases = FloatBuffer(count: m.rows * groups)
        }
        let cols = m.cols
        pool.parallelFor(m.rows, grain: max(1, 1 << 16 / max(cols, 1))) { range, thread in
            let row = pool.scratch(thread: thread, floats: cols)
            for r in range {
                m.row(r, into: row)
                let dst = raw + r * rowBytes
                switch target {
                case .dense(.bf16):
                    qb_f32_to_bf16(row, dst.assumingMemoryBound(to: UInt16.self), Int64(cols))
                case .dense, .ggml:
                    qb_quantize_row(target.ggmlID, row, dst, Int64(cols))
                case .mlx(let q):
                    qb_quantize_row_mlx(
                        Int32(q.bits), Int64(q.groupSize), row, dst.assumingMemoryBound(to: UInt32.self),
                        scales!.pointer + r * groups, biases!.pointer + r * groups, Int64(cols))
                }
            }
        }
        let owner = QuantizedStorage(data: data, scales: scales, biases: biases)
        return Matrix(
            format: target, rows: m.rows, cols: m.cols, base: UnsafeRawPointer(raw),
            scales: scales.map { UnsafeRawPointer($0.pointer) }, biases: biases.map { UnsafeRawPointer($0.pointer) },
            owner: owner)
    }

    /// Quantizes f32 values into a new matrix (tests, synthetic weights).
    public static func quantize(_ values: [Float], rows: Int, cols: Int, to format: WeightFormat, pool: ThreadPool) -> Matrix {
        let src = FloatBuffer(values)
        return convert(src.matrix(rows: rows, cols: cols), to: format, pool: pool)
    }
}

/// Owns the buffers of a converted matrix.
final class QuantizedStorage: @unchecked Sendable {
    let data: FloatBuffer
    let scales: FloatBuffer?
    let biases: FloatBuffer?
    init(data: FloatBuffer, scales: FloatBuffer?, biases: FloatBuffer?) {
        self.data = data
        self.scales = scales
        self.biases = biases
    }
}
