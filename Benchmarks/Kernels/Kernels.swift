import Benchmark
import QBKernels
import QBModel

/// Throughput of each kernel on the llama-3.2-1b shape, in the units its ceiling is
/// measured in: matvec in bytes of weights read per second (memory-bound), matmul in
/// floating-point operations per second (compute-bound).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput], timeUnits: .microseconds, maxDuration: .seconds(3))

    let pool = ThreadPool(threads: ThreadPool.defaultThreadCount)
    let hidden = 2048, ffn = 8192

    let dense = RandomMatrix(rows: ffn, cols: hidden)
    let formats: [WeightFormat] = [
        .dense(.f32), .dense(.f16), .dense(.bf16), .ggml(.q8_0), .ggml(.q4_0), .ggml(.q4_K),
        .mlx(.init(bits: 4, groupSize: 64, scaleType: .f32)), .mlx(.init(bits: 8, groupSize: 64, scaleType: .f32)),
    ]
    for format in formats {
        let m = format == .f32 ? dense.matrix : Quantizer.convert(dense.matrix, to: format, pool: pool)
        let x = FloatBuffer(count: hidden), y = FloatBuffer(count: ffn)
        // One "iteration" reads the whole matrix: throughput x bytes = bandwidth.
        Benchmark("matvec \(format.name) 8192x2048 (\(m.byteCount / 1_000_000) MB/iter)") { b in
            for _ in b.scaledIterations { Linear.matvec(m, x.pointer, y.pointer, pool: pool) }
        }
        let tokens = 64
        let xs = FloatBuffer(count: tokens * hidden), ys = FloatBuffer(count: tokens * ffn)
        Benchmark("matmul \(format.name) 64 tokens x 8192x2048 (\(2 * tokens * ffn * hidden / 1_000_000) MFLOP/iter)") { b in
            for _ in b.scaledIterations { Linear.matmul(m, xs.pointer, ys.pointer, count: tokens, pool: pool) }
        }
    }

    let n = 2048
    let x = FloatBuffer(count: n), w = FloatBuffer(count: n), out = FloatBuffer(count: n)
    Benchmark("rmsnorm 2048") { b in
        for _ in b.scaledIterations { Ops.rmsnorm(x.pointer, weight: w.pointer, out: out.pointer, count: n, eps: 1e-5) }
    }
    let rope = Rope(headDim: 64, theta: 500000, style: .halves)
    let cs = FloatBuffer(count: 32), sn = FloatBuffer(count: 32), q = FloatBuffer(count: 32 * 64)
    Benchmark("rope 32 heads x 64") { b in
        for _ in b.scaledIterations {
            rope.angles(position: 1000, cos: cs.pointer, sin: sn.pointer)
            rope.apply(q.pointer, heads: 32, cos: cs.pointer, sin: sn.pointer)
        }
    }
    let depth = 4096, hd = 64
    let keys = FloatBuffer(count: depth * hd), values = FloatBuffer(count: depth * hd)
    let scores = FloatBuffer(count: depth), o = FloatBuffer(count: hd)
    Benchmark("attention head at depth 4096") { b in
        for _ in b.scaledIterations {
            Ops.attentionHead(q: q.pointer, keys: keys.pointer, values: values.pointer, count: depth, headDim: hd,
                              scale: 0.125, scores: scores.pointer, out: o.pointer)
        }
    }
}

/// A matrix of random f32 values, owning its storage.
final class RandomMatrix: @unchecked Sendable {
    let matrix: Matrix
    private let storage: FloatBuffer
    init(rows: Int, cols: Int) {
        var rng = SplitMix64(seed: 42)
        storage = FloatBuffer(count: rows * cols)
        for i in 0..<storage.count { storage.pointer[i] = Float(rng.nextUnit() * 2 - 1) }
        matrix = storage.matrix(rows: rows, cols: cols)
    }
}
