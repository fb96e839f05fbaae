extension Reference {
    /// An activation row as the int8 kernels see it: per block of 32 values, the scale `d`
    /// and the 32 quants (`qb_q8a` without its float sum).
    public struct ActivationBlocks: Sendable {
        public let scales: [Float]
        /// `scales.count` x 32 values.
        public let quants: [Int8]

        public init(scales: [Float], quants: [Int8]) {
            self.scales = scales
            self.quants = quants
        }
    }

    /// The definition of interleaved Q4_0 decode on 16-row tiles (`qb_matvec_tiles.h`),
    /// straight from the stored blocks: for each row, over blocks in order, the exact integer
    /// sum of (nibble - 8) x quant, rounded once to float, times the product of the two
    /// scales, added with one rounding (a fused multiply-add). The fast kernels must match
    /// it bit for bit: that is what makes a sequence's logits independent of its batch.
    /// `w` is Q4_0 in either layout (`storedRows` gives the plain blocks).
    public static func q4TileMatvec(_ w: Matrix, _ x: ActivationBlocks) -> [Float] {
        let nb = w.cols / 32, rowBytes = nb * 18
        var stored = [UInt8](repeating: 0, count: w.rows * rowBytes)
        stored.withUnsafeMutableBytes { if let p = $0.baseAddress { w.storedRows(0..<w.rows, into: p) } }
        return (0..<w.rows).map { r in
            var acc: Float = 0
            for b in 0..<nb {
                let block = r * rowBytes + b * 18
                let d = Float(Float16(bitPattern: UInt16(stored[block]) | UInt16(stored[block + 1]) << 8))
                var sum: Int32 = 0
                for j in 0..<16 {
                    let q = stored[block + 2 + j]
                    sum += (Int32(q & 0xF) - 8) * Int32(x.quants[b * 32 + j])
                    sum += (Int32(q >> 4) - 8) * Int32(x.quants[b * 32 + j + 16])
                }
                acc = acc.addingProduct(Float(sum), d * x.scales[b])
            }
            return acc
        }
    }
}
