import CQBKernels

/// Decode of interleaved Q4_0 on 16-row tiles (`qb_matvec_tiles.h`): one activation row or
/// the rows of a batched step against one read of the weights, each output computed by the
/// same float operations whatever else shares its tile, so a sequence's logits are bitwise
/// the same alone and in any batch.
extension Linear {
    /// Whether products with `w` take the tiles: interleaved Q4_0 on a kernel set with their
    /// vector code (AVX-512 VNNI). Asked each time, as `IntTiles.wideValues`: tests switch
    /// sets within one process. Other sets keep the four-row kernels of `qb_repack.c`,
    /// whose batched form is bitwise their single-row form too.
    static func takesQ4Tiles(_ w: Matrix) -> Bool {
        w.layout == .interleaved4 && w.format == .ggml(.q4_0) && qb_matvec_q4_0x16_fast() != 0
    }

    /// Row groups [g0, g1) of `w` (`takesQ4Tiles`) for `count` activation rows: `xs[b]` is
    /// row b quantized (q8a blocks), `offsets[b]` its blocks' offset terms
    /// (`qb_q8a_offsets`, width 32, k = -8), `ys[b]` its output (`w.rows` floats).
    static func q4Tiles(
        _ w: Matrix, _ xs: UnsafePointer<UnsafePointer<qb_q8a>?>, _ offsets: UnsafePointer<UnsafePointer<Int32>?>,
        _ ys: UnsafePointer<UnsafeMutablePointer<Float>?>, count: Int, _ g0: Int, _ g1: Int
    ) {
        qb_matvec_q4_0x16(w.base, xs, offsets, ys, Int64(count), Int64(g0), Int64(g1), Int64(w.cols))
    }

    /// A grain of row groups that is a whole number of tiles: each chunk of a parallel
    /// section then covers only full tiles (a partial one computes a repeated group).
    static func tileGrain(_ grain: Int) -> Int { (grain + 3) / 4 * 4 }
}
