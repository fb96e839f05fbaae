#if canImport(Glibc)
import Glibc
#endif

/// Plain, obviously-correct versions of every kernel. They are slow on purpose: tests hold
/// the optimized kernels to them on random inputs.
public enum Reference {
    /// Widens one stored element of a dense matrix.
    public static func element(_ m: Matrix, _ index: Int) -> Float {
        switch m.format {
        case .dense(.f32): return m.base.load(fromByteOffset: index * 4, as: Float.self)
        case .dense(.f16): return Float(Float16(bitPattern: m.base.load(fromByteOffset: index * 2, as: UInt16.self)))
        case .dense(.bf16):
            return Float(bitPattern: UInt32(m.base.load(fromByteOffset: index * 2, as: UInt16.self)) << 16)
        default:
            var row = [Float](repeating: 0, count: m.cols)
            m.row(index / m.cols, into: &row)
            return row[index % m.cols]
        }
    }

    /// Every value of a matrix as f32: element by element for dense matrices, through the
    /// format's scalar dequantizer (GGML's/MLX's formula, checked against their own
    /// implementations in the oracle tests) for quantized ones.
    public static func values(_ m: Matrix) -> [Float] {
        if case .dense = m.format { return (0..<m.elementCount).map { element(m, $0) } }
        return m.toFloats()
    }

    /// What the integer kernels see of an activation vector: each `block` values rounded to
    /// int8 steps of max|x|/127. Scaled by the reciprocal of the step, as the kernels do:
    /// x / d and x * (1 / d) can round to different integers near a half step.
    public static func quantizeActivations(_ x: [Float], block: Int = 32) -> [Float] {
        var out = x
        for b in stride(from: 0, to: x.count, by: block) {
            let block = x[b..<min(b + block, x.count)]
            let d = (block.map { abs($0) }.max() ?? 0) / 127
            let id = d == 0 ? 0 : 1 / d
            for i in block.indices { out[i] = Float((x[i] * id).rounded(.toNearestOrEven)) * d }
        }
        return out
    }

    /// What the prefill products that take activations per 256 values see (`qb_q8s`): a step
    /// D = max|x| / 127 per 256 values, each 32 of them rounded at D / 2^k, k in 0...3 the
    /// largest with (their max|x|) x 2^k <= the 256's max|x|.
    public static func quantizeActivationsShifted(_ x: [Float]) -> [Float] {
        var out = x
        for b in stride(from: 0, to: x.count, by: 256) {
            let amax = (b..<min(b + 256, x.count)).map { abs(x[$0]) }.max() ?? 0
            let d = amax / 127, id = d == 0 ? 0 : 1 / d
            for j in stride(from: b, to: min(b + 256, x.count), by: 32) {
                let sub = j..<min(j + 32, x.count)
                let amaxSub = sub.map { abs(x[$0]) }.max() ?? 0
                var k = 0
                while k < 3 && amaxSub * Float(2 << k) <= amax { k += 1 }
                let idk = id * Float(1 << k), step = d / 8 * Float(1 << (3 - k))
                for i in sub { out[i] = Float((x[i] * idk).rounded(.toNearestOrEven)) * step }
            }
        }
        return out
    }

    /// y = W x as the active set's prefill product sees it: activations per 32 values, or as
    /// `qb_q8s` rounds them where the set takes them per 256 (`IntTiles.activationBlock`).
    public static func prefillMatvec(_ w: Matrix, _ x: [Float]) -> [Float] {
        product(w, IntTiles.activationBlock(w) == 256 ? quantizeActivationsShifted(x) : quantizeActivations(x, block: 32))
    }

    /// y = W x, accumulated in Double. Quantized weights see activations quantized as the
    /// fast kernels quantize them: in blocks of `activationBlock` values (by default the
    /// format's decode block; prefill products: `prefillMatvec`).
    public static func matvec(_ w: Matrix, _ x: [Float], activationBlock: Int? = nil) -> [Float] {
        var xs = x
        if let block = activationBlock ?? w.format.activationBlock { xs = quantizeActivations(x, block: block) }
        return product(w, xs)
    }

    /// y = W xs for activations as given, accumulated in Double.
    static func product(_ w: Matrix, _ xs: [Float]) -> [Float] {
        let values = values(w)
        return (0..<w.rows).map { r in
            var s = 0.0
            for c in 0..<w.cols { s += Double(values[r * w.cols + c]) * Double(xs[c]) }
            return Float(s)
        }
    }

    /// Y = X Wᵀ for row-major X `[count][w.cols]`, with f32 activations (the prefill path
    /// dequantizes weights and keeps activations in f32).
    public static func matmul(_ w: Matrix, _ x: [Float], count: Int) -> [Float] {
        let values = values(w)
        return (0..<count).flatMap { t in
            (0..<w.rows).map { r in
                var s = 0.0
                for c in 0..<w.cols { s += Double(values[r * w.cols + c]) * Double(x[t * w.cols + c]) }
                return Float(s)
            }
        }
    }

    public static func rmsnorm(_ x: [Float], weight: [Float], eps: Float) -> [Float] {
        let ms = x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)
        let inv = 1 / (ms + Double(eps)).squareRoot()
        return zip(x, weight).map { Float(Double($0) * inv * Double($1)) }
    }

    /// `x` (rows of `bias.count` values) with `bias` added to every row.
    public static func addBias(_ bias: [Float], to x: [Float]) -> [Float] {
        x.enumerated().map { i, v in v + bias[i % bias.count] }
    }

    /// Whether every value is finite: what `Ops.allFinite` is held to.
    public static func allFinite(_ x: [Float]) -> Bool { x.allSatisfy(\.isFinite) }

    /// The first index of the largest value: the loop `Ops.argmax` is held to.
    public static func argmax(_ x: [Float]) -> Int {
        var best = 0
        for i in x.indices where x[i] > x[best] { best = i }
        return best
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

    /// gelu_tanh(g) * u from the definition: 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))).
    public static func geglu(gate: [Float], up: [Float]) -> [Float] {
        zip(gate, up).map { g, u in
            let x = Double(g)
            return Float(0.5 * x * (1 + tanh((2 / Double.pi).squareRoot() * (x + 0.044715 * x * x * x))) * Double(u))
        }
    }

    /// Attention of one query over cached positions `first ..< count` (a sliding window when
    /// `first` > 0: the positions before it do not take part in the softmax).
    public static func attentionHead(
        q: [Float], keys: [Float], values: [Float], count: Int, headDim: Int, scale: Float, first: Int = 0
    ) -> [Float] {
        let scores = (first..<count).map { j -> Float in
            var s = 0.0
            for d in 0..<headDim { s += Double(q[d]) * Double(keys[j * headDim + d]) }
            return Float(s) * scale
        }
        let p = softmax(scores)
        return (0..<headDim).map { d in
            var s = 0.0
            for j in first..<count { s += Double(p[j - first]) * Double(values[j * headDim + d]) }
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
