import CQBKernels

/// Decode of interleaved Q4_0 on 16-row tiles (`qb_matvec_tiles.h`): one activation row or
/// the rows of a batched step against one read of the weights, each output computed by the
/// same float operations whatever else shares its tile, so a sequence's logits are bitwise
/// the same alone and in any batch, and the same from either layout. On the same kernel set
/// interleaved Q4_1, Q5_0, Q5_1 and Q8_0 take the same tiles inside `qb_matvec_repacked` and
/// `qb_matvec_repacked_rows` (`qb_tile16.h`).
extension Linear {
    /// Whether products with `w` take the tiles: Q4_0 in sixteen-row groups (which only the
    /// tiles read: in vector code on the AVX-512 and AVX2 sets, which repack Q4_0 so; on the
    /// portable set by the definition, for a matrix repacked under another set, as tests
    /// that switch sets do), or in four-row groups on a kernel set with the four-row tiles'
    /// vector code (AVX-512 VNNI). Asked each time, as `IntTiles.wideValues`: tests switch
    /// sets within one process. Four-row Q4_0 elsewhere keeps the kernels of `qb_repack.c`,
    /// whose batched form is bitwise their single-row form too.
    static func takesQ4Tiles(_ w: Matrix) -> Bool {
        guard w.format == .ggml(.q4_0) else { return false }
        return w.layout == .interleaved16 || (w.layout == .interleaved4 && qb_matvec_q4_0_tiles_fast() != 0)
    }

    /// Whether products with `w` against `rows` activation rows run on 16-row tiles of
    /// four-row groups on the engine's kernels (`kernel` `.best`): interleaved Q4_0
    /// (`takesQ4Tiles`), Q4_1, Q5_0 or Q5_1 on the set with the tiles, and Q8_0 there in
    /// batches (one Q8_0 row streams its groups one after another, bitwise what the tile
    /// gives it). Their parallel sections then share whole tiles out (`shareUnits`); a
    /// sixteen-row group is a whole tile by itself.
    static func takesTiles(_ w: Matrix, rows: Int, kernel: BatchKernel = .best) -> Bool {
        guard w.layout == .interleaved4, qb_matvec_q4_0_tiles_fast() != 0 else { return false }
        switch w.format {
        case .ggml(.q4_0): return kernel == .best
        case .ggml(.q4_1), .ggml(.q5_0), .ggml(.q5_1): return true
        case .ggml(.q8_0): return rows > 1
        default: return false
        }
    }

    /// Row groups [g0, g1) of `w` (`takesQ4Tiles`) for `count` activation rows: `xs[b]` is
    /// row b quantized (q8a blocks), `offsets[b]` its blocks' offset terms
    /// (`qb_q8a_offsets`, width 32, k = -8), `ys[b]` its output (`w.rows` floats).
    static func q4Tiles(
        _ w: Matrix, _ xs: UnsafePointer<UnsafePointer<qb_q8a>?>, _ offsets: UnsafePointer<UnsafePointer<Int32>?>,
        _ ys: UnsafePointer<UnsafeMutablePointer<Float>?>, count: Int, _ g0: Int, _ g1: Int
    ) {
        let n = Int64(count), u0 = Int64(g0), u1 = Int64(g1), cols = Int64(w.cols)
        if w.layout == .interleaved16 { return qb_matvec_q4_0_x16(w.base, xs, offsets, ys, n, u0, u1, cols) }
        qb_matvec_q4_0_tiles(w.base, xs, offsets, ys, n, u0, u1, cols)
    }

    /// A grain of row groups that is a whole number of tiles: each chunk of a parallel
    /// section then covers only full tiles (a partial one computes a repeated group).
    static func tileGrain(_ grain: Int) -> Int { (grain + 3) / 4 * 4 }
}
