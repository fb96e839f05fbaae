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
    /// `[count][w.rows]`. One activation row takes the matvec path; with more, 4-bit weights
    /// go through int8 products (`matmulU4`), others through OpenBLAS sgemm on tiles of
    /// weight rows (widened to f32 per tile when stored narrower).
    public static func matmul(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int,
        pool: ThreadPool
    ) {
        if count == 1 { return matvec(w, x, y, pool: pool) }
        if U4Tiles.fits(w) { return matmulU4(w, x, y, count: count, pool: pool) }
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

extension Linear {
    /// Whether products with `w` over several activation rows quantize the activations to
    /// int8 (4-bit weights) rather than widening the weights to f32.
    public static func prefillQuantizesActivations(_ w: Matrix) -> Bool { U4Tiles.fits(w) }

    /// Tiles of 8 weight rows per task group; activation rows per pass over a group (their
    /// int8 blocks stay in L2 while every tile of the group is multiplied with them).
    static let u4TilesPerTask = 4
    static let u4ColumnBlock = 16

    /// Y = X Wᵀ for 4- and 6-bit weights on int8 dot products: X quantized per 32 values
    /// (as decode does), weights unpacked once per product into 8-row tiles (`qb_gemm.h`).
    static func matmulU4(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, pool: ThreadPool
    ) {
        let nb = w.cols / 32, cols = Int64(w.cols), rows = w.rows
        let sixBit = w.format == .ggml(.q6_K)
        let xBytes = count * nb * MemoryLayout<qb_q8a>.stride
        let raw = pool.activationScratch(bytes: xBytes + (sixBit ? count * nb * 8 : 0))
        let xq = raw.bindMemory(to: qb_q8a.self, capacity: count * nb)
        let s16 = (raw + xBytes).assumingMemoryBound(to: Float.self)
        pool.parallelFor(count, grain: 8) { range, _ in
            for c in range {
                qb_quantize_q8a(x + c * w.cols, xq + c * nb, cols)
                if sixBit { qb_q8a_sums16(xq + c * nb, Int64(nb), s16 + c * nb * 2) }
            }
        }
        let tileBytes = nb * Int(sixBit ? QB_U6X8_BLOCK_BYTES : QB_U4X8_BLOCK_BYTES)
        pool.parallelFor(rows / 8, grain: u4TilesPerTask) { range, thread in
            let scratch = UnsafeMutableRawPointer(pool.scratch(thread: thread, floats: (range.count * tileBytes + 3) / 4))
                .assumingMemoryBound(to: UInt8.self)
            for (i, t) in range.enumerated() { U4Tiles.pack(w, rows: t * 8, into: scratch + i * tileBytes) }
            var c0 = 0
            while c0 < count {
                let n = min(u4ColumnBlock, count - c0)
                for (i, t) in range.enumerated() {
                    let tile = scratch + i * tileBytes, out = y + c0 * rows + t * 8
                    if sixBit {
                        qb_gemm_u6x8(tile, xq + c0 * nb, s16 + c0 * nb * 2, Int64(n), cols, out, Int64(rows))
                    } else {
                        qb_gemm_u4x8(tile, xq + c0 * nb, Int64(n), cols, out, Int64(rows))
                    }
                }
                c0 += n
            }
        }
    }
}

/// Which matrices the int8 product takes, and how their rows are unpacked.
enum U4Tiles {
    static func fits(_ w: Matrix) -> Bool {
        guard w.rows % 8 == 0, w.cols % 32 == 0 else { return false }
        switch w.format {
        case .ggml(.q4_0): return true
        case .ggml(.q4_K), .ggml(.q6_K): return w.layout == .rows
        case .mlx(let q): return q.bits == 4 && w.layout == .rows
        default: return false
        }
    }

    static func pack(_ w: Matrix, rows r0: Int, into tile: UnsafeMutablePointer<UInt8>) {
        if case .mlx(let q) = w.format {
            qb_pack_u4x8_mlx(
                Int64(q.groupSize), w.base.assumingMemoryBound(to: UInt32.self), w.scales, w.biases, q.scaleType.ggmlID,
                Int64(r0), Int64(w.cols), tile)
        } else if w.format == .ggml(.q6_K) {
            qb_pack_u6x8_q6k(w.base, Int64(r0), Int64(w.cols), tile)
        } else {
            qb_pack_u4x8_ggml(w.format.ggmlID, w.layout == .interleaved4 ? 1 : 0, w.base, Int64(r0), Int64(w.cols), tile)
        }
    }
}

/// OpenBLAS runs inside our pool's tasks; its own threads would oversubscribe the cores.
enum BLASSetup {
    static let once: Void = { openblas_set_num_threads(1) }()
}
