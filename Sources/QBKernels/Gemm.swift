import CQBKernels

/// Prefill: products over several activation rows on the tiles of `qb_gemm.c` and
/// `qb_gemm_dense.c`.
extension Linear {
    /// Whether the active kernel set has the dense prefill kernel (AVX-512 and AVX2); without
    /// it (the portable set) f32 weights go to sgemm as they are, f16 and bf16 widened per
    /// tile. Asked each time, not kept: the set can change (`KernelSet.use`).
    static var denseKernel: Bool { qb_gemm_dense(Int32(QB_F16), nil, 0, 0, 16, nil, 0, nil, 0) != 0 }

    /// Rows per task of the dense product: fixed, so results do not depend on the thread
    /// count.
    static let denseRowsPerTask = 64

    /// Y = X Wᵀ for f32/f16/bf16 weights read in their stored width (`qb_gemm_dense`): the
    /// f32 FMA peak is within reach, where OpenBLAS on this machine's Haswell kernels reached
    /// 16-33% of it (and needed 16-bit tiles widened first).
    static func matmulDense(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, pool: ThreadPool
    ) {
        let tasks = (w.rows + denseRowsPerTask - 1) / denseRowsPerTask
        let type = w.format.ggmlID
        pool.parallelFor(tasks) { range, _ in
            for t in range {
                let r0 = t * denseRowsPerTask, r1 = min(w.rows, r0 + denseRowsPerTask)
                _ = qb_gemm_dense(type, w.base, Int64(r0), Int64(r1), Int64(w.cols), x, Int64(count), y, Int64(w.rows))
            }
        }
    }

    /// Whether products with `w` over several activation rows quantize the activations to
    /// int8 (quantized weights on integer dot products) rather than widening the weights to f32.
    public static func prefillQuantizesActivations(_ w: Matrix) -> Bool { IntTiles.fits(w) }

    /// Tiles of 16 weight rows per task group; activation rows per pass over a group (their
    /// int8 blocks stay in L1/L2 while every tile of the group is multiplied with them).
    static let tilesPerTask = 4
    static let tileColumnBlock = 16

    /// Y = X Wᵀ on int8 dot products: X quantized per 32 values (as decode quantizes for
    /// 32-value formats; per 256 with a power-of-two step per 32 where the set's product takes
    /// them so), weights unpacked once per product into 16-row tiles (`qb_gemm.h`).
    static func matmulInt8(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, pool: ThreadPool
    ) {
        if IntTiles.activationBlock(w) == 256 { return matmulSuperBlocks(w, x, y, count: count, pool: pool) }
        let nb = w.cols / 32, cols = Int64(w.cols), rows = w.rows
        let sixBit = IntTiles.sixteenValueScales(w), bits = IntTiles.valueBits(w)
        let minima = w.format == .ggml(.q2_K), offset = IntTiles.offset(w)
        let xBytes = count * nb * MemoryLayout<qb_q8a>.stride
        let perRow = offset.map { nb * 32 / Int($0.width) } ?? 0
        let raw = pool.activationScratch(bytes: xBytes + count * perRow * MemoryLayout<Int32>.stride)
        let xq = raw.bindMemory(to: qb_q8a.self, capacity: count * nb)
        let offs = (raw + xBytes).bindMemory(to: Int32.self, capacity: count * perRow)
        pool.parallelFor(count, grain: 8) { range, _ in
            for c in range {
                qb_quantize_q8a(x + c * w.cols, xq + c * nb, cols)
                if let o = offset { qb_q8a_offsets(xq + c * nb, Int64(nb), o.width, o.k, offs + c * perRow) }
            }
        }
        let tileBytes = nb * (sixBit ? Int(qb_gemm_tile6_block_bytes(w.format.ggmlID)) : Int(qb_gemm_tile_block_bytes(bits)))
        forEachTileTask(w, tileBytes: tileBytes, count: count, y: y, pool: pool) { scratch, tiles, c0, n, out in
            if minima {
                qb_gemm_tiles_q2k(scratch, Int64(tiles), xq + c0 * nb, offs + c0 * perRow, Int64(n), cols, out, Int64(rows))
            } else if w.format == .ggml(.q3_K) {
                qb_gemm_tiles_q3k(scratch, Int64(tiles), xq + c0 * nb, offs + c0 * perRow, Int64(n), cols, out, Int64(rows))
            } else if sixBit {
                qb_gemm_tiles6(scratch, Int64(tiles), xq + c0 * nb, offs + c0 * perRow, Int64(n), cols, out, Int64(rows))
            } else {
                qb_gemm_tiles(
                    scratch, Int64(tiles), bits, xq + c0 * nb, offset == nil ? nil : offs + c0 * perRow, Int64(n), cols,
                    out, Int64(rows))
            }
        }
    }

    /// Q4_K where the set's product takes activations per 256 values
    /// (`qb_gemm_activation_block`): X quantized as q8s (a step per 256 values, each 32 at a
    /// power-of-two fraction of it), the tiles' integer scales and minimums met in integers
    /// per super-block.
    static func matmulSuperBlocks(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, pool: ThreadPool
    ) {
        let nsb = w.cols / 256, cols = Int64(w.cols), rows = Int64(w.rows)
        let xs = pool.activationScratch(bytes: count * nsb * MemoryLayout<qb_q8s>.stride).bindMemory(to: qb_q8s.self, capacity: count * nsb)
        pool.parallelFor(count, grain: 8) { range, _ in
            for c in range { qb_quantize_q8s(x + c * w.cols, xs + c * nsb, cols) }
        }
        forEachTileTask(w, tileBytes: nsb * Int(QB_TILE4K_BYTES), count: count, y: y, pool: pool) { scratch, tiles, c0, n, out in
            qb_gemm_tiles_q8s(scratch, Int64(tiles), xs + c0 * nsb, Int64(n), cols, out, rows)
        }
    }

    /// Packs each task's tiles (`tilesPerTask` of 16 rows, `tileBytes` each, side by side in
    /// the thread's scratch) once, then runs `product(scratch, tiles, c0, n, out)` for each
    /// block of up to `tileColumnBlock` activation rows from c0, `out` the tiles' outputs.
    static func forEachTileTask(
        _ w: Matrix, tileBytes: Int, count: Int, y: UnsafeMutablePointer<Float>, pool: ThreadPool,
        _ product: (UnsafeMutablePointer<UInt8>, Int, Int, Int, UnsafeMutablePointer<Float>) -> Void
    ) {
        let tileRows = Int(QB_TILE_ROWS), rows = w.rows
        pool.parallelFor(rows / tileRows, grain: tilesPerTask) { range, thread in
            let scratch = UnsafeMutableRawPointer(pool.scratch(thread: thread, floats: (range.count * tileBytes + 3) / 4))
                .assumingMemoryBound(to: UInt8.self)
            for (i, t) in range.enumerated() { IntTiles.pack(w, rows: t * tileRows, into: scratch + i * tileBytes) }
            var c0 = 0
            while c0 < count {
                let n = min(tileColumnBlock, count - c0)
                // The task's tiles lie side by side in `scratch` and their outputs in `y`.
                product(scratch, range.count, c0, n, y + c0 * rows + range.lowerBound * tileRows)
                c0 += n
            }
        }
    }
}

/// Which matrices the int8 product takes, and how their rows are unpacked.
enum IntTiles {
    /// Whether the active kernel set has vector code for 5- and 8-bit values (AVX-512 VNNI,
    /// AVX2); on the portable set those formats take the f32 path. Asked each time, as
    /// `Linear.denseKernel`.
    static var wideValues: Bool { qb_gemm_wide_values() != 0 }

    static func fits(_ w: Matrix) -> Bool {
        guard w.rows % Int(QB_TILE_ROWS) == 0, w.cols % 32 == 0 else { return false }
        switch w.format {
        case .ggml(.q4_0), .ggml(.q4_1): return true
        case .ggml(.q8_0), .ggml(.q5_0), .ggml(.q5_1): return wideValues
        case .ggml(.q5_K), .ggml(.iq4_nl), .ggml(.iq4_xs): return wideValues && w.layout == .rows
        case .ggml(.q4_K): return w.layout != .interleaved4
        case .ggml(.q6_K): return w.layout != .interleaved4
        case .ggml(.q2_K), .ggml(.q3_K): return w.layout == .rows
        case .mlx(let q): return (q.bits == 4 || (q.bits == 8 && wideValues)) && w.layout != .interleaved4
        default: return false
        }
    }

    /// For the symmetric formats (w = d (q + k), q unsigned as tiled), the activations'
    /// integer offsets the products take (`qb_q8a_offsets`): k, and the values per offset
    /// (Q6_K's scales cover 16), as the C packers encode them (`qb_tile_offset`); for Q2_K
    /// the plain sums per 16 values its minimums meet (k = 1). Nil for formats with a
    /// separate minimum or bias.
    static func offset(_ w: Matrix) -> (width: Int32, k: Int32)? {
        guard case .ggml(let t) = w.format else { return nil }
        return offset(t)
    }

    static func offset(_ t: GGMLType) -> (width: Int32, k: Int32)? {
        var width: Int32 = 0, k: Int32 = 0
        return qb_tile_offset(t.rawValue, &width, &k) != 0 ? (width, k) : nil
    }

    /// Values per activation block of `w`'s prefill product: 256 (q8s) for the K-quants whose
    /// tiles the active set multiplies per super-block (Q4_K on the vector sets), 32 otherwise.
    /// Asked each time, as `wideValues`.
    static func activationBlock(_ w: Matrix) -> Int {
        guard case .ggml(let t) = w.format else { return 32 }
        return Int(qb_gemm_activation_block(t.rawValue))
    }

    /// Whether `w` takes Q6_K's tiles (a scale per 16 values: Q6_K, Q3_K's values in them, and
    /// Q2_K's with their minimums).
    static func sixteenValueScales(_ w: Matrix) -> Bool {
        w.format == .ggml(.q6_K) || w.format == .ggml(.q3_K) || w.format == .ggml(.q2_K)
    }

    /// The width of `w`'s values in a tile (`qb_gemm_tiles`' `bits`; not for Q6_K's tiles).
    static func valueBits(_ w: Matrix) -> Int32 {
        switch w.format {
        case .ggml(.q5_0), .ggml(.q5_1), .ggml(.q5_K): return 5
        case .ggml(.q8_0), .ggml(.iq4_nl), .ggml(.iq4_xs): return 8
        case .mlx(let q): return Int32(q.bits)
        default: return 4
        }
    }

    static func pack(_ w: Matrix, rows r0: Int, into tile: UnsafeMutablePointer<UInt8>) {
        if case .mlx(let q) = w.format, w.layout == .interleaved16 {
            qb_pack_tile_mlx_x16(Int32(q.bits), Int64(q.groupSize), q.scaleType.ggmlID, w.base, Int64(r0), Int64(w.cols), tile)
        } else if case .mlx(let q) = w.format {
            qb_pack_tile_mlx(
                Int32(q.bits), Int64(q.groupSize), w.base.assumingMemoryBound(to: UInt32.self), w.scales, w.biases,
                q.scaleType.ggmlID, Int64(r0), Int64(w.cols), tile)
        } else if w.format == .ggml(.q2_K) {
            qb_pack_tile_q2k(w.base, Int64(r0), Int64(w.cols), tile)
        } else if w.format == .ggml(.q3_K) {
            qb_pack_tile_q3k(w.base, Int64(r0), Int64(w.cols), tile)
        } else if w.format == .ggml(.q6_K) {
            qb_pack_tile_q6k(w.base, w.layout == .rows ? 0 : Int32(w.unitRows), Int64(r0), Int64(w.cols), tile)
        } else {
            qb_pack_tile_ggml(w.format.ggmlID, w.layout == .rows ? 0 : Int32(w.unitRows), w.base, Int64(r0), Int64(w.cols), tile)
        }
    }
}
