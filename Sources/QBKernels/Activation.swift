import CQBKernels

/// Activations quantized for the int8 dot products (`qb_activation.c`), once per product.
extension Linear {
    /// The input of a product as the weight formats read it: f32, q8a blocks (per 32) and
    /// q8k blocks (per 256), each made only if some matrix needs it.
    struct QuantizedInput {
        let x: UnsafePointer<Float>
        var q8a: UnsafePointer<qb_q8a>?
        var q8k: UnsafePointer<qb_q8k>?

        init(x: UnsafePointer<Float>) { self.x = x }

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
}

extension Linear.QuantizedInput {
    /// The inputs of `count` activation rows (`[count][cols]`), each quantized exactly as
    /// `init` quantizes one row, in one scratch allocation.
    static func rows(
        _ ws: [Matrix], _ x: UnsafePointer<Float>, cols: Int, count: Int, pool: ThreadPool
    ) -> [Linear.QuantizedInput] {
        let blocks = ws.map { $0.format.activationBlock }
        let needA = blocks.contains(32), needK = blocks.contains(256)
        let aBytes = needA ? cols / 32 * MemoryLayout<qb_q8a>.stride : 0
        let kBytes = needK ? cols / 256 * MemoryLayout<qb_q8k>.stride : 0
        let rowBytes = (aBytes + kBytes + 63) / 64 * 64
        let raw = (needA || needK) ? pool.activationScratch(bytes: count * rowBytes) : nil
        var out: [Linear.QuantizedInput] = []
        out.reserveCapacity(count)
        for b in 0..<count {
            var input = Linear.QuantizedInput(x: x + b * cols)
            if let raw {
                let base = raw + b * rowBytes
                if needA {
                    let a = base.bindMemory(to: qb_q8a.self, capacity: cols / 32)
                    qb_quantize_q8a(x + b * cols, a, Int64(cols))
                    input.q8a = UnsafePointer(a)
                }
                if needK {
                    let k = (base + aBytes).bindMemory(to: qb_q8k.self, capacity: cols / 256)
                    qb_quantize_q8k(x + b * cols, k, Int64(cols))
                    input.q8k = UnsafePointer(k)
                }
            }
            out.append(input)
        }
        return out
    }
}

