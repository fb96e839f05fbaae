#if canImport(Glibc)
import Glibc
#endif

/// Plain, obviously-correct versions of every kernel. They are slow on purpose: tests hold
/// the optimized kernels to them on random inputs.
public enum Reference {
    /// Widens one stored element.
    public static func element(_ m: Matrix, _ index: Int) -> Float {
        switch m.dtype {
        case .f32: return m.base.load(fromByteOffset: index * 4, as: Float.self)
        case .f16: return Float(Float16(bitPattern: m.base.load(fromByteOffset: index * 2, as: UInt16.self)))
        case .bf16:
            return Float(bitPattern: UInt32(m.base.load(fromByteOffset: index * 2, as: UInt16.self)) << 16)
        }
    }

    /// y = W x, accumulated in Double.
    public static func matvec(_ w: Matrix, _ x: [Float]) -> [Float] {
        (0..<w.rows).map { r in
            var s = 0.0
            for c in 0..<w.cols { s += Double(element(w, r * w.cols + c)) * Double(x[c]) }
            return Float(s)
        }
    }

    /// Y = X Wᵀ for row-major X `[count][w.cols]`.
    public static func matmul(_ w: Matrix, _ x: [Float], count: Int) -> [Float] {
        (0..<count).flatMap { t in matvec(w, Array(x[(t * w.cols)..<((t + 1) * w.cols)])) }
    }

    public static func rmsnorm(_ x: [Float], weight: [Float], eps: Float) -> [Float] {
        let ms = x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)
        let inv = 1 / (ms + Double(eps)).squareRoot()
        return zip(x, weight).map { Float(Double($0) * inv * Double($1)) }
    }

    public static func softmax(_ x: [Float]) -> [Float] {
        let m = x.max() ?? 0
        let e = x.map { exp(Double($0 - m)) }
        let s = e.reduce(0, +)
        return e.map { Float($0 / s) }
    }

    public static func swiglu(gate: [Float], up: [Float]) -> [Float] {
        zip(gate, up).map { g, u in Float(Double(g) / (1 + exp(-Double(g))) * Double(u)) }
    }

    public static func attentionHead(
        q: [Float], keys: [Float], values: [Float], count: Int, headDim: Int, scale: Float
    ) -> [Float] {
        let scores = (0..<count).map { j -> Float in
            var s = 0.0
            for d in 0..<headDim { s += Double(q[d]) * Double(keys[j * headDim + d]) }
            return Float(s) * scale
        }
        let p = softmax(scores)
        return (0..<headDim).map { d in
            var s = 0.0
            for j in 0..<count { s += Double(p[j]) * Double(values[j * headDim + d]) }
            return Float(s)
        }
    }

    /// RoPE computed straight from its definition, in Double, from the same frequencies.
    public static func rope(_ v: [Float], heads: Int, rope: Rope, position: Int) -> [Float] {
        var out = v
        let half = rope.headDim / 2
        for h in 0..<heads {
            for i in 0..<half {
                let a = Double(Float(position) * rope.inverseFrequencies[i])
                let (a0, a1): (Int, Int) = rope.style == .interleaved
                    ? (h * rope.headDim + 2 * i, h * rope.headDim + 2 * i + 1)
                    : (h * rope.headDim + i, h * rope.headDim + i + half)
                let x0 = Double(v[a0]), x1 = Double(v[a1])
                out[a0] = Float(x0 * cos(a) - x1 * sin(a))
                out[a1] = Float(x0 * sin(a) + x1 * cos(a))
            }
        }
        return out
    }
}
