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
        guard let cols = ws.first?.cols, ys.count == ws.count else { return }
        let input = QuantizedInput(ws, x, cols: cols, pool: pool)
        // The pool runs the chunks through `run`, over pointers and plain values only: a
        // product of a few hundred KiB takes 10-20 µs, and a closure the threads share costs
        // each of them an atomic on its context per chunk.
        withUnitChunks(ws, tiles: ws.allSatisfy { takesTiles($0, rows: 1) }, pool: pool) { chunks in
            withUnsafeTemporaryAllocation(of: Matrix.self, capacity: ws.count) { views in
                for (i, w) in ws.enumerated() { views.initializeElement(at: i, to: w.unretained) }
                defer { _ = views.deinitialize() }
                ys.withUnsafeBufferPointer { outputs in
                    guard let matrices = views.baseAddress, let outputs = outputs.baseAddress else { return }
                    var job = DecodeJob(chunks: chunks, matrices: matrices, outputs: outputs, input: input)
                    withUnsafeMutablePointer(to: &job) { pool.run(chunks.count, context: $0, DecodeJob.task) }
                }
            }
        }
    }

    /// What `matvec`'s chunks read: pointers and plain values only (`ThreadPool.run`).
    private struct DecodeJob {
        let chunks: UnitChunks
        let matrices: UnsafeMutablePointer<Matrix>
        let outputs: UnsafePointer<UnsafeMutablePointer<Float>>
        let input: QuantizedInput

        /// Chunks begin..<end of the job at `context`.
        static let task: qb_task_fn = { context, begin, end, _ in
            guard let job = context?.assumingMemoryBound(to: DecodeJob.self) else { return }
            for c in Int(begin)..<Int(end) {
                job.pointee.chunks.pieces(c) { i, lo, hi in
                    rows(job.pointee.matrices[i], job.pointee.input, job.pointee.outputs[i], lo, hi)
                }
            }
        }
    }

    /// Weights a chunk of a product holds at least (the last chunk aside): each chunk
    /// starts its stream cold, its first loads waiting on memory before the prefetches run
    /// ahead. Gemma 3 270M's 640 x 1024 Q4_K product (360 KiB), cut in 23 chunks, took
    /// 16.1 µs a section on two threads; in 10, 13.3 µs (Intel Xeon, tg128, both through
    /// `parallelFor`; 64 KiB gave 5 chunks and 13.6 µs, one thread's last chunk running alone).
    static let chunkBytes = 32 * 1024

    /// The units of a product's matrices, one matrix after another, cut into the chunks the
    /// threads claim.
    struct UnitChunks {
        /// offsets[i] is matrix i's first unit, offsets[matrices] the total.
        let offsets: UnsafeBufferPointer<Int>
        let matrices: Int
        /// Chunk c is units bounds[c] ..< bounds[c + 1].
        let bounds: UnsafeBufferPointer<Int>

        var count: Int { bounds.count - 1 }

        /// `body(i, lo, hi)` for units lo..<hi of matrix i, over chunk c's units.
        @inline(__always) func pieces(_ c: Int, _ body: (Int, Int, Int) -> Void) {
            let end = bounds[c + 1]
            var i = 0, lo = bounds[c]
            while i < matrices, offsets[i + 1] <= lo { i += 1 }
            while lo < end, i < matrices {
                let hi = min(end, offsets[i + 1])
                body(i, lo - offsets[i], hi - offsets[i])
                lo = hi
                i += 1
            }
        }
    }

    /// Shares the units of `ws` (rows, or the interleaved layouts' groups of rows; the
    /// matrices' units one after another) out over the pool and calls `body(i, lo, hi)` for
    /// units lo..<hi of matrix i, each unit once. Chunks are tapered: the same size while
    /// much work remains, then smaller (`ThreadPool.taperedBounds`), and hold at
    /// least `chunkBytes` of weights. With sixteen equal chunks one thread could idle for up
    /// to a chunk at the end of a section: a batched product is compute (8 rows of the
    /// 2048-column products take ~1 ms on two threads), and in single-row decode the other
    /// thread streams its last chunk alone at one core's bandwidth (tapered, a two-thread
    /// decode ran about 1.03x on an Intel Xeon, by the medians of six `ab` runs of Q4_0 and
    /// Q4_K_M, most of their intervals including 1; Q8_0 the same:
    /// results/decode-chunks-2026-11-28/).
    /// When every matrix takes the 16-row tiles (`tiles`: `takesTiles`), chunks are whole
    /// tiles and at least four: each chunk's first tile starts cold (its prefetch came from
    /// the previous tile), which cost 7% at two tiles a chunk and nothing measurable from
    /// four (8 rows, one core).
    static func shareUnits(_ ws: [Matrix], tiles: Bool, pool: ThreadPool, _ body: (Int, Int, Int) -> Void) {
        withUnitChunks(ws, tiles: tiles, pool: pool) { chunks in
            pool.parallelFor(chunks.count) { range, _ in
                for c in range { chunks.pieces(c, body) }
            }
        }
    }

    /// `body` with `shareUnits`' chunks of `ws`, in temporary allocations.
    static func withUnitChunks<R>(_ ws: [Matrix], tiles: Bool, pool: ThreadPool, _ body: (UnitChunks) -> R) -> R {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: ws.count + 1) { offsets in
            // The floor in units of the matrix with the fewest bytes a unit, so that any
            // chunk holds `chunkBytes`.
            var total = 0, unitBytes = Int.max
            offsets.initializeElement(at: 0, to: 0)
            for (i, w) in ws.enumerated() {
                let units = w.rows / w.unitRows
                total += units
                if units > 0 { unitBytes = min(unitBytes, max(1, w.byteCount / units)) }
                offsets.initializeElement(at: i + 1, to: total)
            }
            var minimum = minimumUnits(ws)
            if unitBytes < Int.max { minimum = max(minimum, (chunkBytes + unitBytes - 1) / unitBytes) }
            var grain = pool.grain(for: total, minimum: minimum)
            if tiles { grain = tileGrain(grain) }
            let floor = tiles ? max(16, minimum) : minimum
            return pool.taperedBounds(total, grain: grain, minimum: floor, align: tiles ? 4 : 1) { bounds in
                body(UnitChunks(offsets: UnsafeBufferPointer(offsets), matrices: ws.count, bounds: bounds))
            }
        }
    }

    /// Y[i] = X W[i]ᵀ for matrices that read the same `count` input rows: one fused
    /// section in decode (`matvec(_:_:_:pool:)`); for a short chunk of matrices on the int8
    /// tiles, the batched decode kernels (`shortChunkRows`); else one prefill product each.
    public static func matmul(
        _ ws: [Matrix], _ x: UnsafePointer<Float>, _ ys: [UnsafeMutablePointer<Float>], count: Int, pool: ThreadPool
    ) {
        if count == 1 { return matvec(ws, x, ys, pool: pool) }
        if count <= shortChunkRows, ws.allSatisfy(IntTiles.fits) {
            return matvecRows(ws, x, ys, count: count, pool: pool)
        }
        for (w, y) in zip(ws, ys) { matmul(w, x, y, count: count, pool: pool) }
    }

    /// Rows up to which a product over several activation rows, of matrices the int8 tiles
    /// take (`IntTiles.fits`), runs on the batched decode kernels (`matvecRows`: each weight
    /// block read and unpacked once for up to eight rows, straight from the decode layout)
    /// rather than on prefill's tiles, which pack every weight once per product. Measured on
    /// AMD Zen 4 with the 1B Q4_0, Q4_K_M and Q8_0 and Gemma 3 270M, two threads
    /// (results/prefill-rows-2026-12-02-zen4/): the AVX-512 set's decode kernels ran
    /// 1.5-2.2x the tiles' speed at 2 to 8 rows and 1.2-1.4x at 24 to 32; the AVX2 set's
    /// 1.3-1.9x at 2 to 8 rows, 1.0-1.2x at 16 and about even from 20 to 32. Not on the
    /// portable set, whose batched decode runs the one-row kernel once per row. Each row of
    /// a short chunk is bitwise what decode gives it alone.
    public static var shortChunkRows: Int {
        switch KernelSet.active {
        case .avx512: return 32
        case .avx2: return 16
        case .portable: return 1
        }
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
    /// and Q6_K's sixteen-row groups up to eight rows per pass (`qb_matvec_q4_k_x16_rows`,
    /// `qb_matvec_q6_k_x16_rows`) and MLX's up to four
    /// (`qb_matvec_mlx_x16_rows`), the 256-value super-block formats row by row, each row
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
        // Interleaved formats, the sixteen-row groups of Q4_K, Q6_K and MLX and the super-block
        // rows take the multi-row kernels: each group's blocks are loaded and unpacked once for
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
            case (.interleaved16, .ggml(.q6_K)):
                withBatch(q8k, outRows[i]) { xp, yp in qb_matvec_q6_k_x16_rows(w.base, xp, yp, n, g0, g1, cols) }
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
