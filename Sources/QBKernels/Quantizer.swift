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
    ///
    /// Throws `UnquantizableWeight` for the first value (lowest row, then column) that is
    /// NaN or infinite, or finite but beyond what the format holds (a block scale past
    /// f16's range, a value past f16's): the quantizers would otherwise store a finite code
    /// for NaN (amax ignores it) or an infinite scale, and the output would look valid.
    /// Each row is checked before it is encoded and after, decoded again; a clean row
    /// costs one extra dequantization, small beside the quantizer's own work.
    public static func convert(_ m: Matrix, to format: WeightFormat, pool: ThreadPool) throws -> Matrix {
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
        // Per row, written only by the thread converting it: -1 clean, c >= 0 the source is
        // non-finite at column c, c <= -2 column -(c + 2) decodes to a non-finite value.
        let verdicts = UnsafeMutableBufferPointer<Int>.allocate(capacity: max(m.rows, 1))
        verdicts.initialize(repeating: -1)
        defer { verdicts.deallocate() }
        pool.parallelFor(m.rows, grain: max(1, 1 << 16 / max(cols, 1))) { range, thread in
            let row = pool.scratch(thread: thread, floats: 2 * cols)
            let back = row + cols
            for r in range {
                m.row(r, into: row)
                let bad = qb_first_beyond(row, Int64(cols), .greatestFiniteMagnitude)
                if bad >= 0 { verdicts[r] = Int(bad); continue }
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
                switch target {
                case .mlx(let q):
                    qb_dequantize_row_mlx(
                        Int32(q.bits), Int64(q.groupSize), dst.assumingMemoryBound(to: UInt32.self),
                        scales!.pointer + r * groups, biases!.pointer + r * groups, DType.f32.ggmlID, back, Int64(cols))
                default:
                    qb_dequantize_row(target.ggmlID, dst, back, Int64(cols))
                }
                let over = qb_first_beyond(back, Int64(cols), .greatestFiniteMagnitude)
                if over >= 0 { verdicts[r] = -Int(over) - 2 }
            }
        }
        if let r = verdicts.firstIndex(where: { $0 != -1 }) {
            let overflows = verdicts[r] <= -2
            var c = overflows ? -verdicts[r] - 2 : verdicts[r]
            let values = m.toFloats(row: r)
            if overflows {
                // The first decoded element that came out infinite starts its block (the
                // shared scale overflowed): the value to blame is the block's largest.
                let block: Int
                switch target {
                case .ggml: block = Int(WeightFormat.blockSize(ggmlID: target.ggmlID))
                case .mlx(let q): block = q.groupSize
                case .dense: block = 1
                }
                let start = c / max(block, 1) * max(block, 1)
                c = (start..<min(start + max(block, 1), cols)).max { abs(values[$0]) < abs(values[$1]) } ?? c
            }
            let value = values[c]
            throw UnquantizableWeight(row: r, column: c, columns: cols, value: value, format: target.name, overflows: overflows)
        }
        let owner = QuantizedStorage(data: data, scales: scales, biases: biases)
        return Matrix(
            format: target, rows: m.rows, cols: m.cols, base: UnsafeRawPointer(raw),
            scales: scales.map { UnsafeRawPointer($0.pointer) }, biases: biases.map { UnsafeRawPointer($0.pointer) },
            owner: owner)
    }

    /// Quantizes f32 values into a new matrix (tests, synthetic weights).
    public static func quantize(_ values: [Float], rows: Int, cols: Int, to format: WeightFormat, pool: ThreadPool) throws -> Matrix {
        let src = FloatBuffer(values)
        return try convert(src.matrix(rows: rows, cols: cols), to: format, pool: pool)
    }
}

/// A weight a quantizer cannot encode faithfully: NaN or infinite in the source, or finite
/// but decoding as infinite in `format` (its block scale overflows). Row and column are the
/// matrix's (row-major `[out][in]`); `index` is the flat element index.
public struct UnquantizableWeight: Error, Sendable, CustomStringConvertible {
    public let row: Int
    public let column: Int
    public let columns: Int
    public let value: Float
    public let format: String
    public let overflows: Bool

    public var index: Int { row * columns + column }

    public var description: String {
        let at = "row \(row), column \(column) (element \(index))"
        if overflows {
            return "value \(value) at \(at) is beyond what \(format) can store (it would decode as infinity); refusing to convert"
        }
        let what = value.isNaN ? "NaN" : (value > 0 ? "+infinity" : "-infinity")
        return "\(what) at \(at); non-finite weights are refused rather than quantized to finite codes"
    }
}

extension Matrix {
    /// Row `r` widened to f32 (error reports).
    func toFloats(row r: Int) -> [Float] {
        [Float](unsafeUninitializedCapacity: cols) { buf, count in
            if cols > 0 { row(r, into: buf.baseAddress!) }
            count = cols
        }
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
