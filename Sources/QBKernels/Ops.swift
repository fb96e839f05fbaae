import CQBKernels

/// The element-wise and per-row steps of a transformer block. Each has a plain Swift
/// twin in `Reference` that tests hold it to.
public enum Ops {
    public static func rmsnorm(
        _ x: UnsafePointer<Float>, weight: UnsafePointer<Float>, out: UnsafeMutablePointer<Float>,
        count: Int, eps: Float
    ) {
        qb_rmsnorm(x, weight, out, Int64(count), eps)
    }

    public static func softmax(_ x: UnsafeMutablePointer<Float>, count: Int) {
        qb_softmax(x, Int64(count))
    }

    /// The first index of the largest value (a greedy pick over logits). A NaN is never the
    /// largest, but one at index 0 gives 0, as the loop `Reference.argmax`; 0 when `x` is
    /// empty.
    public static func argmax(_ x: UnsafeBufferPointer<Float>) -> Int {
        guard let base = x.baseAddress else { return 0 }
        return Int(qb_argmax_f32(base, Int64(x.count)))
    }

    /// True when no value of `x` is NaN or infinite.
    public static func allFinite(_ x: UnsafeBufferPointer<Float>) -> Bool {
        guard let base = x.baseAddress else { return true }
        return qb_all_finite_f32(base, Int64(x.count)) != 0
    }

    /// gate = silu(gate) * up
    public static func swiglu(gate: UnsafeMutablePointer<Float>, up: UnsafePointer<Float>, count: Int) {
        qb_swiglu(gate, up, Int64(count))
    }

    /// gate = gelu_tanh(gate) * up: GeGLU with the tanh-approximated GELU (PyTorch's
    /// `gelu(approximate="tanh")`, Gemma's `gelu_pytorch_tanh`).
    public static func geglu(gate: UnsafeMutablePointer<Float>, up: UnsafePointer<Float>, count: Int) {
        qb_geglu(gate, up, Int64(count))
    }

    /// Multiplies `count` values of `x` by `factor` in place.
    public static func scale(_ x: UnsafeMutablePointer<Float>, by factor: Float, count: Int) {
        for i in 0..<count { x[i] *= factor }
    }

    /// Adds `x` into `y`.
    public static func add(_ x: UnsafePointer<Float>, into y: UnsafeMutablePointer<Float>, count: Int) {
        qb_axpy_f32(1, x, y, Int64(count))
    }

    /// Adds `bias` (`cols` values) to each of `rows` consecutive rows of `x`: a linear
    /// layer's bias, added after its matrix product as transformers adds it.
    public static func addBias(_ bias: UnsafePointer<Float>, to x: UnsafeMutablePointer<Float>, rows: Int, cols: Int) {
        for r in 0..<rows { qb_axpy_f32(1, bias, x + r * cols, Int64(cols)) }
    }
}
