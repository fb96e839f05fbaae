import CBLAS
import CQBKernels

/// Products of a weight matrix with activations: the bulk of every forward pass.
public enum Linear {
    /// Rows per task when splitting a product over threads. Fixed (never derived from the
    /// thread count) so each output element is computed the same way at any thread count.
    /// Large enough that OpenBLAS's packing of the activations (once per call) is amortised
    /// over many weight rows.
    static let rowTile = 256

    /// y = W x for one activation vector (decode). `x` has `w.cols` floats, `y` `w.rows`.
    ///
    /// Quantized weights are dotted with `x` quantized to int8 per 32 values (as GGML
    /// does), so the products run on integer dot instructions.
    public static func matvec(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, pool: ThreadPool
    ) {
        let cols = Int64(w.cols)
        var xq: UnsafePointer<qb_q8a>?
        if case .dense = w.format {} else {
            let buf = pool.activationScratch(bytes: w.cols / 32 * MemoryLayout<qb_q8a>.stride)
                .bindMemory(to: qb_q8a.self, capacity: w.cols / 32)
            qb_quantize_q8a(x, buf, cols)
            xq = UnsafePointer(buf)
        }
        if w.layout == .interleaved4 {
            let type = w.format.ggmlID
            return pool.parallelFor(w.rows / 4, grain: pool.grain(for: w.rows / 4, minimum: 4)) { range, _ in
                qb_matvec_repacked(type, w.base, xq, y, Int64(range.lowerBound), Int64(range.upperBound), cols)
            }
        }
        pool.parallelFor(w.rows, grain: pool.grain(for: w.rows, minimum: 16)) { range, _ in
            let r0 = Int64(range.lowerBound), r1 = Int64(range.upperBound)
            switch w.format {
            case .dense(.f32): qb_matvec_f32(w.base.assumingMemoryBound(to: Float.self), x, y, r0, r1, cols)
            case .dense(.f16): qb_matvec_f16(w.base.assumingMemoryBound(to: UInt16.self), x, y, r0, r1, cols)
            case .dense(.bf16): qb_matvec_bf16(w.base.assumingMemoryBound(to: UInt16.self), x, y, r0, r1, cols)
            case .ggml(let t): qb_matvec_ggml(t.rawValue, w.base, xq, y, r0, r1, cols)
            case .mlx(let q):
                qb_matvec_mlx(
                    Int32(q.bits), Int64(q.groupSize), w.base.assumingMemoryBound(to: UInt32.self), w.scales, w.biases,
                    q.scaleType.ggmlID, xq, y, r0, r1, cols)
            }
        }
    }

    /// Y = X Wᵀ for `count` activation rows (prefill): X is `[count][w.cols]`, Y is
    /// `[count][w.rows]`. One activation row takes the matvec path; more go through
    /// OpenBLAS sgemm on tiles of weight rows (widened to f32 per tile when stored narrower).
    public static func matmul(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int,
        pool: ThreadPool
    ) {
        if count == 1 { return matvec(w, x, y, pool: pool) }
        BLASSetup.once
        let tiles = (w.rows + rowTile - 1) / rowTile
        let k = Int32(w.cols), n = Int32(w.rows), m = Int32(count)
        pool.parallelFor(tiles) { range, thread in
            for tile in range {
                let r0 = tile * rowTile
                let rows = min(rowTile, w.rows - r0)
                let b: UnsafePointer<Float>
                if w.format == .f32 && w.layout == .rows {
                    b = w.base.assumingMemoryBound(to: Float.self) + r0 * w.cols
                } else {
                    let scratch = pool.scratch(thread: thread, floats: rowTile * w.cols)
                    w.rows(r0..<(r0 + rows), into: scratch)
                    b = UnsafePointer(scratch)
                }
                cblas_sgemm(
                    CblasRowMajor, CblasNoTrans, CblasTrans, m, Int32(rows), k,
                    1, x, k, b, k, 0, y + r0, n)
            }
        }
    }
}

/// OpenBLAS runs inside our pool's tasks; its own threads would oversubscribe the cores.
enum BLASSetup {
    static let once: Void = { openblas_set_num_threads(1) }()
}
