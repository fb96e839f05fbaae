import CQBKernels

/// Activations quantized for the int8 dot products (`qb_activation.c`), once per product.
extension Linear {
    /// The input of a product as the weight formats read it: f32, q8a blocks (per 32) and
    /// q8k blocks (per 256), each made only if some matrix needs it; with q8a, the blocks'
    /// Q4_0 offset terms when a matrix takes the 16-row tiles (`qb_matvec_tiles.h`).
    struct QuantizedInput {
        let x: UnsafePointer<Float>
        var q8a: UnsafePointer<qb_q8a>?
        var q8k: UnsafePointer<qb_q8k>?
        var offsets: UnsafePointer<Int32>?

        init(x: UnsafePointer<Float>) { self.x = x }

        init(_ ws: [Matrix], _ x: UnsafePointer<Float>, cols: Int, pool: ThreadPool) {
            let layout = Linear.ActivationLayout(ws, cols: cols)
            let raw = layout.isEmpty ? nil : pool.activationScratch(bytes: layout.rowBytes)
            if let raw { layout.quantize(x, cols: cols, into: raw) }
            self = layout.input(x, cols: cols, row: 0, raw: raw)
        }
    }

    /// Where one activation row's quantized forms sit in its slice of scratch.
    struct ActivationLayout {
        let needA: Bool, needK: Bool, needOffsets: Bool
        let aBytes: Int, kBytes: Int, offsetBytes: Int

        init(_ ws: [Matrix], cols: Int) {
            let blocks = ws.map { $0.format.activationBlock }
            needA = blocks.contains(32)
            needK = blocks.contains(256)
            needOffsets = needA && ws.contains { Linear.takesQ4Tiles($0) }
            aBytes = needA ? cols / 32 * MemoryLayout<qb_q8a>.stride : 0
            kBytes = needK ? cols / 256 * MemoryLayout<qb_q8k>.stride : 0
            offsetBytes = needOffsets ? cols / 32 * MemoryLayout<Int32>.stride : 0
        }

        var isEmpty: Bool { !needA && !needK }
        /// One row's bytes, rounded to a cache line so rows quantized by different threads
        /// never share one.
        var rowBytes: Int { (aBytes + kBytes + offsetBytes + 63) / 64 * 64 }

        /// Row `b`'s input, its forms (made or to be made) at `raw + b * rowBytes`.
        func input(_ x: UnsafePointer<Float>, cols: Int, row b: Int, raw: UnsafeMutableRawPointer?) -> QuantizedInput {
            var input = QuantizedInput(x: x + b * cols)
            guard let raw else { return input }
            let base = raw + b * rowBytes
            if needA { input.q8a = UnsafePointer(base.bindMemory(to: qb_q8a.self, capacity: cols / 32)) }
            if needK { input.q8k = UnsafePointer((base + aBytes).bindMemory(to: qb_q8k.self, capacity: cols / 256)) }
            if needOffsets {
                input.offsets = UnsafePointer((base + aBytes + kBytes).bindMemory(to: Int32.self, capacity: cols / 32))
            }
            return input
        }

        /// Quantizes one row `x` into its slice `base`.
        func quantize(_ x: UnsafePointer<Float>, cols: Int, into base: UnsafeMutableRawPointer) {
            if needA {
                let a = base.bindMemory(to: qb_q8a.self, capacity: cols / 32)
                qb_quantize_q8a(x, a, Int64(cols))
                if needOffsets, let o = IntTiles.offset(.q4_0) {
                    qb_q8a_offsets(a, Int64(cols / 32), o.width, o.k, (base + aBytes + kBytes).bindMemory(to: Int32.self, capacity: cols / 32))
                }
            }
            if needK { qb_quantize_q8k(x, (base + aBytes).bindMemory(to: qb_q8k.self, capacity: cols / 256), Int64(cols)) }
        }
    }
}

extension Linear.QuantizedInput {
    /// The inputs of `count` activation rows (`[count][cols]`), each quantized exactly as
    /// `init` quantizes one row, in one scratch allocation; rows are shared out over the
    /// pool (a batched step has tens of thousands of values per product).
    static func rows(
        _ ws: [Matrix], _ x: UnsafePointer<Float>, cols: Int, count: Int, pool: ThreadPool
    ) -> [Linear.QuantizedInput] {
        let layout = Linear.ActivationLayout(ws, cols: cols)
        guard !layout.isEmpty else { return (0..<count).map { layout.input(x, cols: cols, row: $0, raw: nil) } }
        let raw = pool.activationScratch(bytes: count * layout.rowBytes)
        pool.parallelFor(count) { range, _ in
            for b in range { layout.quantize(x + b * cols, cols: cols, into: raw + b * layout.rowBytes) }
        }
        return (0..<count).map { layout.input(x, cols: cols, row: $0, raw: raw) }
    }
}
