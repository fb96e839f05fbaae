import CQBKernels

/// Decode: one activation row against every weight format. The int8 dot products are
/// `qb_dot_ggml.c`, `qb_dot_kquant.c` and `qb_dot_mlx.c`; dense rows `qb_dense.c`;
/// interleaved Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 rows `qb_repack.c`, or interleaved Q4_0 on the 16-row tiles
/// of `qb_matvec_tiles.c` (four-row groups where the kernel set has the tiles, and every
/// sixteen-row group); Q4_K's and Q6_K's sixteen-row groups `qb_dot_kquant.c`; MLX's
/// sixteen-row groups `qb_dot_mlx.c`.
extension Linear {
    /// Units [u0, u1) of `w` (rows, or groups of rows when interleaved) against `input`.
    static func rows(_ w: Matrix, _ input: QuantizedInput, _ y: UnsafeMutablePointer<Float>, _ u0: Int, _ u1: Int) {
        let r0 = Int64(u0), r1 = Int64(u1), cols = Int64(w.cols), x = input.x
        if w.layout == .interleaved16, case .mlx(let q) = w.format {
            return qb_matvec_mlx_x16(Int32(q.bits), Int64(q.groupSize), q.scaleType.ggmlID, w.base, input.q8a, y, r0, r1, cols)
        }
        if takesQ4Tiles(w) {
            var xq = input.q8a, out: UnsafeMutablePointer<Float>? = y
            if let offsets = input.offsets {
                var o: UnsafePointer<Int32>? = offsets
                return q4Tiles(w, &xq, &o, &out, count: 1, u0, u1)
            }
            // Inputs quantized for these matrices carry the offsets (`ActivationLayout`); an
            // input made for others gets them here rather than a kernel of another layout.
            let nb = w.cols / 32
            return withUnsafeTemporaryAllocation(of: Int32.self, capacity: nb) { buf in
                guard let base = buf.baseAddress else { return }
                qb_q8a_offsets(input.q8a, Int64(nb), 32, -8, base)
                var o: UnsafePointer<Int32>? = UnsafePointer(base)
                q4Tiles(w, &xq, &o, &out, count: 1, u0, u1)
            }
        }
        if w.layout == .interleaved16 {
            if w.format == .ggml(.q6_K) { return qb_matvec_q6_k_x16(w.base, input.q8k, y, r0, r1, cols) }
            return qb_matvec_q4_k_x16(w.base, input.q8k, y, r0, r1, cols)
        }
        if w.layout == .interleaved4 { return qb_matvec_repacked(w.format.ggmlID, w.base, input.q8a, y, r0, r1, cols) }
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
}
