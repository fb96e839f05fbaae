import Benchmark
import QBGeneration
import QBKernels
import QBModel

/// Throughput of each kernel on the llama-3.2-1b shape, in the units its ceiling is
/// measured in (`quantbench roofline`): matvec and dequantization in bytes of weights read
/// per second (memory-bound), matmul and attention in multiply-adds per second
/// (compute-bound), sampling in tokens per second over a 128256-entry vocabulary.
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
        // Seeded finite values: the conversion cannot refuse them.
        let plain = try! format == .f32 ? dense.matrix : Quantizer.convert(dense.matrix, to: format, pool: pool)
        // Decode reads Q4_0 and Q8_0 in the interleaved layout the engine repacks them into.
        let m = plain.interleavedForDecode(pool: pool) ?? plain
        let rows = FloatBuffer(count: 256 * hidden)
        Benchmark("dequant \(format.name) 256x2048 (\(256 * plain.rowBytes / 1000) KB/iter)") { b in
            for _ in b.scaledIterations { plain.rows(0..<256, into: rows.pointer) }
        }
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
    Benchmark("attention head at depth 4096, f32 (\(2 * depth * hd / 1000) K multiply-adds/iter)") { b in
        for _ in b.scaledIterations {
            Ops.attentionHead(q: q.pointer, keys: keys.pointer, values: values.pointer, count: depth, headDim: hd,
                              scale: 0.125, scores: scores.pointer, out: o.pointer)
        }
    }
    // A GQA group of 4 query heads over one KV head, as the 1B model's decode step runs it.
    for type in [KVCacheType.f16, .q8_0] {
        let cache = KVCache(layers: 1, kvHeads: 1, headDim: hd, capacity: depth, type: type)
        for p in 0..<depth { cache.store(layer: 0, head: 0, position: p, key: keys.pointer + p * hd, value: values.pointer + p * hd) }
        let group = 4
        let gq = FloatBuffer(count: group * hd), gs = FloatBuffer(count: group * depth), go = FloatBuffer(count: group * hd)
        Benchmark("attention group of 4 at depth 4096, \(type.rawValue) cache (\(2 * group * depth * hd / 1000) K multiply-adds/iter)") { b in
            for _ in b.scaledIterations {
                cache.attendGroup(
                    layer: 0, head: 0, queries: gq.pointer, group: group, count: depth, scale: 0.125, scores: gs.pointer,
                    out: go.pointer)
            }
        }
    }

    // Sampling over the Llama 3 vocabulary: greedy, and llama.cpp's default chain with a
    // repetition penalty over a 64-token history.
    let vocab = 128_256
    var logitRng = SplitMix64(seed: 7)
    let logits = (0..<vocab).map { _ in Float(logitRng.nextUnit() * 20 - 10) }
    let history = (0..<64).map { Int32($0 * 97 % vocab) }
    let chains: [(String, SamplingParameters)] = [
        ("greedy", .greedy),
        ("temperature 0.8, top-k 40, top-p 0.95, min-p 0.05, repeat penalty 1.1",
         SamplingParameters(temperature: 0.8, repeatPenalty: 1.1, seed: 1)),
        ("temperature 0.8, top-k off, top-p 0.95", SamplingParameters(temperature: 0.8, topK: 0, minP: 0, seed: 1)),
    ]
    for (name, parameters) in chains {
        Benchmark("sample \(name) (1 token/iter)") { b in
            var sampler = parameters.makeSampler(vocabularySize: vocab)
            var scratch = logits
            for _ in b.scaledIterations {
                scratch.withUnsafeMutableBufferPointer { s in logits.withUnsafeBufferPointer { s.baseAddress!.update(from: $0.baseAddress!, count: vocab) } }
                blackHole(sampler.sample(&scratch, history: history[...]))
            }
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
