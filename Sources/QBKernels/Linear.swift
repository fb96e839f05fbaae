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
    /// Quantized weights are dotted with `x` quantized to int8 (per 32 values, per 256 for
    /// Q4_K and Q6_K, as GGML does), so the products run on integer dot instructions.
    public static func matvec(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, pool: ThreadPool
    ) {
        matvec([w], x, [y], pool: pool)
    }

    /// y[i] = W[i] x for matrices that read the same input (Q, K and V; gate and up): the
    /// input is quantized once for all of them and their rows are shared out in one
    /// parallel section. Every `ws[i].cols` equals the input's length.
    public static func matvec(
        _ ws: [Matrix], _ x: UnsafePointer<Float>, _ ys: [UnsafeMutablePointer<Float>], pool: ThreadPool
    ) {
        guard let cols = ws.first?.cols else { return }
        let input = QuantizedInput(ws, x, cols: cols, pool: pool)
        shareUnits(ws, tiles: ws.allSatisfy { takesTiles($0, rows: 1) }, pool: pool) { i, lo, hi in rows(ws[i], input, ys[i], lo, hi) }
    }

    /// Shares the units of `ws` (rows, or the interleaved layouts' groups of rows; the
    /// matrices' units one after another) out over the pool and calls `body(i, lo, hi)` for
    /// units lo..<hi of matrix i, each unit once. Chunks are tapered: the same size while
    /// much work remains, then smaller (`ThreadPool.parallelForTapered`). With sixteen equal
    /// chunks one thread could idle for up to a chunk at the end of a section: a batched
    /// product is compute (8 rows of the 2048-column products take ~1 ms on two threads), and
    /// in single-row decode the other thread streams its last chunk alone at one core's
    /// bandwidth (tapered, a two-thread decode ran about 1.03x on an Intel Xeon, by the
    /// medians of six `ab` runs of Q4_0 and Q4_K_M, most of their intervals including 1;
    /// Q8_0 the same: results/decode-chunks-2026-11-28/).
    /// When every matrix takes the 16-row tiles (`tiles`: `takesTiles`), chunks are whole
    /// tiles and at least four: each chunk's first tile starts cold (its prefetch came from
    /// the previous tile), which cost 7% at two tiles a chunk and nothing measurable from
    /// four (8 rows, one core).
    static func shareUnits(_ ws: [Matrix], tiles: Bool, pool: ThreadPool, _ body: (Int, Int, Int) -> Void) {
        var offsets = [0]
        for w in ws { offsets.append(offsets[offsets.count - 1] + w.rows / w.unitRows) }
        let total = offsets[offsets.count - 1], minimum = minimumUnits(ws)
        var grain = pool.grain(for: total, minimum: minimum)
        if tiles { grain = tileGrain(grain) }
        pool.parallelForTapered(total, grain: grain, minimum: tiles ? 16 : minimum, align: tiles ? 4 : 1) { range, _ in
            var i = 0
            while i < ws.count, offsets[i + 1] <= range.lowerBound { i += 1 }
            var lo = range.lowerBound
            while lo < range.upperBound, i < ws.count {
                let hi = min(range.upperBound, offsets[i + 1])
                body(i, lo - offsets[i], hi - offsets[i])
                lo = hi
                i += 1
            }
        }
    }

    /// Y[i] = X W[i]ᵀ for matrices that read the same `count` input rows: one fused
    /// section in decode (`matvec(_:_:_:pool:)`), one product each in prefill.
    public static func matmul(
        _ ws: [Matrix], _ x: UnsafePointer<Float>, _ ys: [UnsafeMutablePointer<Float>], count: Int, pool: ThreadPool
    ) {
        if count == 1 { return matvec(ws, x, ys, pool: pool) }
        for (w, y) in zip(ws, ys) { matmul(w, x, y, count: count, pool: pool) }
    }

    /// Y = X Wᵀ for `count` activation rows (prefill): X is `[count][w.cols]`, Y is
    /// `[count][w.rows]`. One activation row takes the matvec path; with more, quantized
    /// weights go through int8 products (`matmulInt8`), f32/f16/bf16 through register tiles
    /// that read them in their stored width (`matmulDense`, AVX-512 and AVX2), the rest
    /// through OpenBLAS sgemm on tiles of weight rows (widened to f32 per tile when stored
    /// narrower).
    public static func matmul(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int,
        pool: ThreadPool
    ) {
        if count == 1 { return matvec(w, x, y, pool: pool) }
        if IntTiles.fits(w) { return matmulInt8(w, x, y, count: count, pool: pool) }
        if case .dense = w.format, denseKernel, w.layout == .rows, w.rows % 4 == 0, w.cols % 16 == 0 {
            return matmulDense(w, x, y, count: count, pool: pool)
        }
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

extension Linear {
    /// The fewest units worth a task: sixteen rows' worth when every matrix has the same
    /// unit, else sixteen units.
    static func minimumUnits(_ ws: [Matrix]) -> Int {
        guard let u = ws.first?.unitRows, ws.allSatisfy({ $0.unitRows == u }) else { return 16 }
        return max(1, 16 / u)
    }

    /// Weight units (rows, or groups of rows when interleaved) read once and then dotted
    /// with every activation row of a batched decode step, while they sit in L1/L2.
    static let batchUnitBlock = 8

    /// Y[i] = X W[i]ᵀ for `count` activation rows of batched decode (one position of each of
    /// `count` sequences), on the decode kernels: row b of every output is bitwise what
    /// `matvec(_:_:_:pool:)` gives for row b alone, whatever `count` is, so a sequence
    /// samples the same tokens alone or beside others. Each block of weight rows is read
    /// from memory once per step and dotted with all `count` rows while it is in cache:
    /// the four-row interleaved types on the 16-row tiles where the set has them
    /// (`takesTiles`, AVX-512: up to 8 rows per pass), on AVX2 on its four-row kernels
    /// (`qb_matvec_repacked_rows`: two groups at a time, up to eight rows per pass), Q4_0's
    /// sixteen-row groups up to eight rows per pass (`qb_matvec_q4_0_x16`), Q4_K's
    /// sixteen-row groups up to eight rows per pass (`qb_matvec_q4_k_x16_rows`) and MLX's up
    /// to four (`qb_matvec_mlx_x16_rows`), the 256-value super-block formats row by row, each row
    /// against every activation row (`qb_matvec_kquant_rows`: each super-block's values
    /// unpacked once for up to four), the other formats row by row over blocks of
    /// `batchUnitBlock` units. The portable set runs the one-row kernels once per activation
    /// row.
    /// X is `[count][cols]`; Y[i] is `[count][ws[i].rows]`.
    public static func matvecRows(
        _ ws: [Matrix], _ x: UnsafePointer<Float>, _ ys: [UnsafeMutablePointer<Float>], count: Int, pool: ThreadPool,
        kernel: BatchKernel = .best
    ) {
        if count == 1 && kernel == .best { return matvec(ws, x, ys, pool: pool) }
        guard let cols = ws.first?.cols, count > 0 else { return }
        let inputs = QuantizedInput.rows(ws, x, cols: cols, count: count, pool: pool)
        let tiles = ws.map { kernel == .best && takesQ4Tiles($0) }
        let block = batchUnitBlock
        // Interleaved formats, the sixteen-row groups of Q4_K and MLX and the super-block rows
        // take the multi-row kernels: each group's blocks are loaded and unpacked once for
        // several activation rows.
        let q8a: [UnsafePointer<qb_q8a>?] = inputs.map(\.q8a)
        let q8k: [UnsafePointer<qb_q8k>?] = inputs.map(\.q8k)
        let offs: [UnsafePointer<Int32>?] = inputs.map(\.offsets)
        let outRows: [[UnsafeMutablePointer<Float>?]] = zip(ws, ys).map { w, y in (0..<count).map { y + $0 * w.rows } }
        shareUnits(ws, tiles: ws.allSatisfy { takesTiles($0, rows: count, kernel: kernel) }, pool: pool) { i, lo, hi in
            let w = ws[i], n = Int64(count), g0 = Int64(lo), g1 = Int64(hi), cols = Int64(w.cols)
            switch (w.layout, w.format) {
            case (.interleaved4, _) where tiles[i], (.interleaved16, .ggml(.q4_0)):
                withBatch(q8a, outRows[i]) { xp, yp in
                    offs.withUnsafeBufferPointer { o in
                        guard let op = o.baseAddress else { return }
                        q4Tiles(w, xp, op, yp, count: count, lo, hi)
                    }
                }
            case (.interleaved4, _):
                withBatch(q8a, outRows[i]) { xp, yp in qb_matvec_repacked_rows(w.format.ggmlID, w.base, xp, yp, n, g0, g1, cols) }
            case (.interleaved16, .mlx(let q)):
                withBatch(q8a, outRows[i]) { xp, yp in
                    qb_matvec_mlx_x16_rows(Int32(q.bits), Int64(q.groupSize), q.scaleType.ggmlID, w.base, xp, yp, n, g0, g1, cols)
                }
            case (.interleaved16, .ggml(.q4_K)):
                withBatch(q8k, outRows[i]) { xp, yp in qb_matvec_q4_k_x16_rows(w.base, xp, yp, n, g0, g1, cols) }
            case (.rows, .ggml(let t)) where t.activationBlock == 256:
                withBatch(q8k, outRows[i]) { xp, yp in qb_matvec_kquant_rows(t.rawValue, w.base, xp, yp, n, g0, g1, cols) }
            default:
                for b0 in stride(from: lo, to: hi, by: block) {
                    for b in 0..<count { rows(w, inputs[b], ys[i] + b * w.rows, b0, min(hi, b0 + block)) }
                }
            }
        }
    }

    /// `body` with the base addresses of a batch's per-row activation and output pointers,
    /// as the C multi-row kernels take them.
    private static func withBatch<X>(
        _ xs: [UnsafePointer<X>?], _ ys: [UnsafeMutablePointer<Float>?],
        _ body: (UnsafePointer<UnsafePointer<X>?>, UnsafePointer<UnsafeMutablePointer<Float>?>) -> Void
    ) {
        xs.withUnsafeBufferPointer { x in
            ys.withUnsafeBufferPointer { y in
                guard let xp = x.baseAddress, let yp = y.baseAddress else { return }
                body(xp, yp)
            }
        }
    }

    /// Y = X Wᵀ for `count` rows of batched decode (`matvecRows(_:_:_:count:pool:kernel:)`).
    public static func matvecRows(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, pool: ThreadPool,
        kernel: BatchKernel = .best
    ) {
        matvecRows([w], x, [y], count: count, pool: pool, kernel: kernel)
    }

    /// Which kernel batched decode runs interleaved Q4_0 on.
    public enum BatchKernel: Sendable {
        /// The engine's choice: the 16-row tiles where the kernel set has them.
        case best
        /// Q4_0 in four-row groups on the four-row kernel (`qb_matvec_repacked_rows`) at
        /// every batch size, one row included: what batched decode ran before the tiles, kept
        /// for side-by-side timing (`quantbench serve --bench-batch`). Bitwise equal to
        /// `matvec` only on sets without the tiles. The other formats and layouts (Q4_0's
        /// sixteen-row groups included) run as with `.best`.
        case fourRow
    }
}
