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
        // Units of work: rows, or groups of four rows for the interleaved layout.
        let units = ws.map { $0.layout == .interleaved4 ? $0.rows / 4 : $0.rows }
        var offsets = [0]
        for u in units { offsets.append(offsets.last! + u) }
        let total = offsets.last!
        let minimum = ws.allSatisfy { $0.layout == .interleaved4 } ? 4 : 16
        pool.parallelFor(total, grain: pool.grain(for: total, minimum: minimum)) { range, _ in
            var i = 0
            while i < ws.count, offsets[i + 1] <= range.lowerBound { i += 1 }
            var lo = range.lowerBound
            while lo < range.upperBound, i < ws.count {
                let hi = min(range.upperBound, offsets[i + 1])
                rows(ws[i], input, ys[i], lo - offsets[i], hi - offsets[i])
                lo = hi
                i += 1
            }
        }
    }

    /// The input of a product as the weight formats read it: f32, q8a blocks (per 32) and
    /// q8k blocks (per 256), each made only if some matrix needs it.
    struct QuantizedInput {
        let x: UnsafePointer<Float>
        var q8a: UnsafePointer<qb_q8a>?
        var q8k: UnsafePointer<qb_q8k>?

        init(_ ws: [Matrix], _ x: UnsafePointer<Float>, cols: Int, pool: ThreadPool) {
            self.x = x
            let blocks = ws.map { $0.format.activationBlock }
            let needA = blocks.contains(32), needK = blocks.contains(256)
            let aBytes = needA ? cols / 32 * MemoryLayout<qb_q8a>.stride : 0
            let kBytes = needK ? cols / 256 * MemoryLayout<qb_q8k>.stride : 0
            guard needA || needK else { return }
            let raw = pool.activationScratch(bytes: aBytes + kBytes)
            if needA {
                let a = raw.bindMemory(to: qb_q8a.self, capacity: cols / 32)
                qb_quantize_q8a(x, a, Int64(cols))
                q8a = UnsafePointer(a)
            }
            if needK {
                let k = (raw + aBytes).bindMemory(to: qb_q8k.self, capacity: cols / 256)
                qb_quantize_q8k(x, k, Int64(cols))
                q8k = UnsafePointer(k)
            }
        }
    }

    /// Units [u0, u1) of `w` (rows, or four-row groups when interleaved) against `input`.
    static func rows(_ w: Matrix, _ input: QuantizedInput, _ y: UnsafeMutablePointer<Float>, _ u0: Int, _ u1: Int) {
        let r0 = Int64(u0), r1 = Int64(u1), cols = Int64(w.cols), x = input.x
        if w.layout == .interleaved4 {
            return qb_matvec_repacked(w.format.ggmlID, w.base, input.q8a, y, r0, r1, cols)
        }
        switch w.format {
        case .dense(.f32): qb_matvec_f32(w.base.assumingMemoryBound(to: Float.self), x, y, r0, r1, cols)
        case .dense(.f16): qb_matvec_f16(w.base.assumingMemoryBound(to: UInt16.self), x, y, r0, r1, cols)
        case .dense(.bf16): qb_matvec_bf16(w.base.assumingMemoryBound(to: UInt16.self), x, y, r0, r1, cols)
        case .ggml(let t) where t.activationBlock == 256: qb_matvec_kquant(t.rawValue, w.base, input.q8k, y, r0, r1, cols)
        case .ggml(let t): qb_matvec_ggml(t.rawValue, w.base, input.q8a, y, r0, r1, cols)
        case .mlx(let q):
            qb_matvec_mlx(
                Int32(q.bits), Int64(q.groupSize), w.base.assumingMemoryBound(to: UInt32.self), w.scales, w.biases,
                q.scaleType.ggmlID, input.q8a, y, r0, r1, cols)
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
    /// weights go through int8 products (`matmulInt8`), f16/bf16 through register tiles that
    /// read them in their stored width (`matmulHalf`, AVX-512), the rest through OpenBLAS
    /// sgemm on tiles of weight rows (widened to f32 per tile when stored narrower).
    public static func matmul(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int,
        pool: ThreadPool
    ) {
        if count == 1 { return matvec(w, x, y, pool: pool) }
        if IntTiles.fits(w) { return matmulInt8(w, x, y, count: count, pool: pool) }
        if halfKernel, w.layout == .rows, w.rows % 4 == 0, w.cols % 16 == 0,
            w.format == .dense(.f16) || w.format == .dense(.bf16)
        {
            return matmulHalf(w, x, y, count: count, pool: pool)
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

extension Linear {
    /// Whether this CPU has the 16-bit float prefill kernel (AVX-512); without it f16 and
    /// bf16 weights are widened per tile for sgemm.
    static let halfKernel = qb_gemm_half(Int32(QB_F16), nil, 0, 0, 16, nil, 0, nil, 0) != 0

    /// Rows per task of the 16-bit float product: fixed, so results do not depend on the
    /// thread count.
    static let halfRowsPerTask = 64

    /// Y = X Wᵀ for f16/bf16 weights read in their stored width (`qb_gemm_half`): the
    /// f32 FMA peak is within reach, where OpenBLAS on this machine's Haswell kernels reaches
    /// half of it and needs each tile widened first.
    static func matmulHalf(
        _ w: Matrix, _ x: UnsafePointer<Float>, _ y: UnsafeMutablePointer<Float>, count: Int, pool: ThreadPool
    ) {
        let tasks = (w.rows + halfRowsPerTask - 1) / halfRowsPerTask
        let base = w.base.assumingMemoryBound(to: UInt16.self), type = w.format.ggmlID
        pool.parallelFor(tasks) { range, _ in
            for t in range {
                let r0 = t * halfRowsPerTask, r1 = min(w.rows, r0 + halfRowsPerTask)
                _ = qb_gemm_half(
                    type, base, Int64(r0), Int64(r1), Int64(w.cols), x, Int64(count), y, Int64(w.rows))
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
    /// 32-value formats), weights unpacked once per product into 16-row tiles (`qb_gemm.h`).
    static func matmulInt8(
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
        let tileRows = Int(QB_TILE_ROWS)
        let tileBytes = nb * Int(sixBit ? QB_TILE6_BLOCK_BYTES : QB_TILE_BLOCK_BYTES)
        pool.parallelFor(rows / tileRows, grain: tilesPerTask) { range, thread in
            let scratch = UnsafeMutableRawPointer(pool.scratch(thread: thread, floats: (range.count * tileBytes + 3) / 4))
                .assumingMemoryBound(to: UInt8.self)
            for (i, t) in range.enumerated() { IntTiles.pack(w, rows: t * tileRows, into: scratch + i * tileBytes) }
            var c0 = 0
            while c0 < count {
                let n = min(tileColumnBlock, count - c0)
                for (i, t) in range.enumerated() {
                    let tile = scratch + i * tileBytes, out = y + c0 * rows + t * tileRows
                    if sixBit {
                        qb_gemm_tile6(tile, xq + c0 * nb, s16 + c0 * nb * 2, Int64(n), cols, out, Int64(rows))
                    } else {
                        qb_gemm_tile(tile, xq + c0 * nb, Int64(n), cols, out, Int64(rows))
                    }
                }
                c0 += n
            }
        }
    }
}

/// Which matrices the int8 product takes, and how their rows are unpacked.
enum IntTiles {
    /// Whether 8-bit values multiply exactly on this CPU (VNNI); otherwise 8-bit formats
    /// take the f32 path.
    static let wideValues = qb_gemm_wide_values() != 0

    static func fits(_ w: Matrix) -> Bool {
        guard w.rows % Int(QB_TILE_ROWS) == 0, w.cols % 32 == 0 else { return false }
        switch w.format {
        case .ggml(.q4_0): return true
        case .ggml(.q8_0): return wideValues
        case .ggml(.q4_K), .ggml(.q6_K): return w.layout == .rows
        case .mlx(let q): return (q.bits == 4 || (q.bits == 8 && wideValues)) && w.layout == .rows
        default: return false
        }
    }

    static func pack(_ w: Matrix, rows r0: Int, into tile: UnsafeMutablePointer<UInt8>) {
        if case .mlx(let q) = w.format {
            qb_pack_tile_mlx(
                Int32(q.bits), Int64(q.groupSize), w.base.assumingMemoryBound(to: UInt32.self), w.scales, w.biases,
                q.scaleType.ggmlID, Int64(r0), Int64(w.cols), tile)
        } else if w.format == .ggml(.q6_K) {
            qb_pack_tile_q6k(w.base, Int64(r0), Int64(w.cols), tile)
        } else {
            qb_pack_tile_ggml(w.format.ggmlID, w.layout == .interleaved4 ? 1 : 0, w.base, Int64(r0), Int64(w.cols), tile)
        }
    }
}

/// OpenBLAS runs inside our pool's tasks; its own threads would oversubscribe the cores.
enum BLASSetup {
    static let once: Void = { openblas_set_num_threads(1) }()
}
