import Benchmark
import Foundation
import QBGeneration
import QBKernels
import QBModel
import QBRunner
import QBSupport

/// Throughput of each kernel on the llama-3.2-1b shape, on every kernel set this CPU runs
/// (`[avx2]`, `[avx512]`, `[portable]` in the names), against ceilings measured in the same
/// process (package-benchmark runs each benchmark in a process of its own; its setup makes
/// the set active and runs `quantbench roofline`'s probes, shown as `ceilings [set]`):
/// - matvec: bytes of weights read per second, each pass starting with the matrix out of
///   the caches, as decode meets each layer's weights; against the read bandwidth of the
///   eviction read (all threads) right before that pass;
/// - matmul: operations per second (two per multiply-add) against the int8 peak for
///   quantized weights, whose products run on int8 activations, and the fp32 FMA peak for
///   dense ones; all threads;
/// - attention: operations per second of one decode step's head or group against the
///   one-thread fp32 peak (f32 and f16 caches);
/// - dequantization in bytes of weights per second (cache-resident, no ceiling), sampling in
///   tokens per second over a 128256-entry vocabulary.
/// The shares are whole percents, the rates whole MB/s and GOP/s (package-benchmark records
/// integers).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock], timeUnits: .microseconds, maxDuration: .seconds(2))

    let pool = ThreadPool(threads: ThreadPool.defaultThreadCount)
    let hidden = 2048, ffn = 8192, tokens = 64
    let ceilings = Ceilings(pool: pool)
    let dense = RandomMatrix(rows: ffn, cols: hidden, seed: 42)
    let prepared = PreparedMatrices(dense.matrix, pool: pool)
    // Read between matvec passes to push the matrix out of every cache level; larger than
    // the last level of any machine these run on (260 MiB seen).
    let flush = ColdCache(bytes: 768 << 20, pool: pool)

    let formats: [WeightFormat] = [
        .dense(.f32), .dense(.f16), .dense(.bf16), .ggml(.q8_0), .ggml(.q4_0), .ggml(.q4_K),
        .mlx(.init(bits: 4, groupSize: 64, scaleType: .f32)), .mlx(.init(bits: 8, groupSize: 64, scaleType: .f32)),
    ]
    for set in KernelSet.supported {
        let tag = "[\(set.name)]"
        // The plain C set's probes measure what the compiler makes of plain C, not this
        // machine's ceilings (and its dense products run in OpenBLAS): no shares for it.
        let shares = set != .portable
        // The ceilings themselves (probed in this benchmark's own process, as in every
        // other's), so the output shows what the shares below are of.
        Benchmark(
            "ceilings \(tag)",
            configuration: .init(
                metrics: [Rate.readBandwidth, Rate.readBandwidthOneThread, Rate.int8Peak, Rate.fp32Peak, Rate.fp32PeakOneThread],
                warmupIterations: 0, maxIterations: 1),
            closure: { b in
                let c = ceilings[set]
                b.measurement(Rate.readBandwidth, Int((c.readBandwidthAllThreads * 1e3).rounded()))
                b.measurement(Rate.readBandwidthOneThread, Int((c.readBandwidthOneThread * 1e3).rounded()))
                b.measurement(Rate.int8Peak, Int(c.int8GopsAllThreads.rounded()))
                b.measurement(Rate.fp32Peak, Int(c.fp32GflopsAllThreads.rounded()))
                b.measurement(Rate.fp32PeakOneThread, Int(c.fp32GflopsOneThread.rounded()))
            }, setup: { KernelSet.use(set) })
        for format in formats {
            let quantized: Bool = { if case .dense = format { return false } else { return true } }()
            let bytes = format.byteCount(rows: ffn, cols: hidden)

            let rows = FloatBuffer(count: 256 * hidden)
            Benchmark(
                "dequant \(format.name) 256x2048 \(tag)",
                configuration: .init(metrics: [.wallClock, Rate.megabytes]),
                closure: { b in
                    let m = prepared.plain(format, set: set)
                    b.measure(bytes: 256 * m.rowBytes) { m.rows(0..<256, into: rows.pointer) }
                }, setup: { try prepared.prepare(format, set: set) })

            let x = FloatBuffer(count: hidden), y = FloatBuffer(count: ffn)
            Benchmark(
                "matvec \(format.name) 8192x2048 from memory (\(bytes / 1_000_000) MB) \(tag)",
                configuration: .init(metrics: [.wallClock, Rate.megabytes] + (shares ? [Rate.ofBandwidth] : [])),
                closure: { b in
                    let m = prepared.decode(format, set: set)
                    let probe = flush.evict()
                    b.startMeasurement()
                    let seconds = Rate.time { Linear.matvec(m, x.pointer, y.pointer, pool: pool) }
                    b.stopMeasurement()
                    b.record(bytes: m.byteCount, seconds: seconds, ceiling: probe * 1e9, share: shares ? Rate.ofBandwidth : nil)
                }, setup: { try prepared.prepare(format, set: set); _ = ceilings[set] })

            let xs = FloatBuffer(count: tokens * hidden), ys = FloatBuffer(count: tokens * ffn)
            let peak = quantized ? Rate.ofInt8Peak : Rate.ofFP32Peak
            // Dense products run on the set's own register tiles (qb_gemm_dense.c); on the
            // portable set in OpenBLAS, which is why that set gets no share.
            Benchmark(
                "matmul \(format.name) \(tokens) tokens x 8192x2048 (\(2 * tokens * ffn * hidden / 1_000_000) MOP) \(tag)",
                configuration: .init(metrics: [.wallClock, Rate.gigaops] + (shares ? [peak] : [])),
                closure: { b in
                    let m = prepared.decode(format, set: set)
                    let seconds = Rate.time { Linear.matmul(m, xs.pointer, ys.pointer, count: tokens, pool: pool) }
                    let c = ceilings[set]
                    b.record(ops: 2 * tokens * ffn * hidden, seconds: seconds,
                             ceiling: (quantized ? c.int8GopsAllThreads : c.fp32GflopsAllThreads) * 1e9, share: shares ? peak : nil)
                }, setup: { try prepared.prepare(format, set: set); _ = ceilings[set] })
        }

        let n = 2048
        let x = FloatBuffer(count: n), w = FloatBuffer(count: n), out = FloatBuffer(count: n)
        Benchmark("rmsnorm 2048 \(tag)", closure: { b in
            for _ in b.scaledIterations { Ops.rmsnorm(x.pointer, weight: w.pointer, out: out.pointer, count: n, eps: 1e-5) }
        }, setup: { KernelSet.use(set) })
        let rope = Rope(headDim: 64, theta: 500000, style: .halves)
        let cs = FloatBuffer(count: 32), sn = FloatBuffer(count: 32), q = FloatBuffer(count: 32 * 64)
        Benchmark("rope 32 heads x 64 \(tag)", closure: { b in
            for _ in b.scaledIterations {
                rope.angles(position: 1000, cos: cs.pointer, sin: sn.pointer)
                rope.apply(q.pointer, heads: 32, cos: cs.pointer, sin: sn.pointer)
            }
        }, setup: { KernelSet.use(set) })

        // A GQA group of 4 query heads over one KV head at depth 4096, as the 1B model's
        // decode step runs it (one thread per group).
        let depth = 4096, hd = 64, group = 4
        let keys = RandomMatrix(rows: depth, cols: hd, seed: 1), values = RandomMatrix(rows: depth, cols: hd, seed: 2)
        let scores = FloatBuffer(count: depth), o = FloatBuffer(count: hd)
        let headOps = 2 * 2 * depth * hd  // scores and values, two operations per multiply-add
        Benchmark("attention head at depth 4096, f32 \(tag)",
                  configuration: .init(metrics: [.wallClock, Rate.gigaops] + (shares ? [Rate.ofFP32Peak] : [])),
                  closure: { b in
                      let seconds = Rate.time {
                          Ops.attentionHead(q: q.pointer, keys: keys.pointer, values: values.pointer, count: depth, headDim: hd,
                                            scale: 0.125, scores: scores.pointer, out: o.pointer)
                      }
                      b.record(ops: headOps, seconds: seconds, ceiling: ceilings[set].fp32GflopsOneThread * 1e9,
                               share: shares ? Rate.ofFP32Peak : nil)
                  }, setup: { KernelSet.use(set); _ = ceilings[set] })
        for type in [KVCacheType.f16, .q8_0] {
            let cache = KVCache(layers: 1, kvHeads: 1, headDim: hd, capacity: depth, type: type)
            for p in 0..<depth { cache.store(layer: 0, head: 0, position: p, key: keys.pointer + p * hd, value: values.pointer + p * hd) }
            let gq = FloatBuffer(count: group * hd), gs = FloatBuffer(count: group * depth), go = FloatBuffer(count: group * hd)
            // The q8_0 cache's scores run on int8 products and its values on f32: no one ceiling.
            let share = type == .f16 && shares
            let metrics: [BenchmarkMetric] = [.wallClock, Rate.gigaops] + (share ? [Rate.ofFP32Peak] : [])
            Benchmark("attention group of 4 at depth 4096, \(type.rawValue) cache \(tag)",
                      configuration: .init(metrics: metrics),
                      closure: { b in
                          let seconds = Rate.time {
                              cache.attendGroup(
                                  layer: 0, head: 0, queries: gq.pointer, group: group, count: depth, scale: 0.125,
                                  scores: gs.pointer, out: go.pointer)
                          }
                          b.record(ops: group * headOps, seconds: seconds, ceiling: ceilings[set].fp32GflopsOneThread * 1e9,
                                   share: share ? Rate.ofFP32Peak : nil)
                      }, setup: { KernelSet.use(set); _ = ceilings[set] })
        }
    }

    // Sampling over the Llama 3 vocabulary: greedy, and llama.cpp's default chain with a
    // repetition penalty over a 64-token history. Swift code: on the best set only.
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
        Benchmark("sample \(name) (1 token/iter)", configuration: .init(metrics: [.wallClock, .throughput]), closure: { b in
            var sampler = parameters.makeSampler(vocabularySize: vocab)
            var scratch = logits
            for _ in b.scaledIterations {
                scratch.withUnsafeMutableBufferPointer { s in logits.withUnsafeBufferPointer { s.baseAddress!.update(from: $0.baseAddress!, count: vocab) } }
                blackHole(sampler.sample(&scratch, history: history[...]))
            }
        }, setup: { KernelSet.use(KernelSet.best) })
    }
}

/// The custom metrics: rates and shares of a ceiling, whole numbers as package-benchmark
/// records them.
enum Rate {
    static let megabytes = BenchmarkMetric.custom("MB/s", polarity: .prefersLarger, useScalingFactor: false)
    static let gigaops = BenchmarkMetric.custom("GOP/s", polarity: .prefersLarger, useScalingFactor: false)
    static let readBandwidth = BenchmarkMetric.custom("read bandwidth MB/s", polarity: .prefersLarger, useScalingFactor: false)
    static let readBandwidthOneThread = BenchmarkMetric.custom("read bandwidth MB/s, 1 thread", polarity: .prefersLarger, useScalingFactor: false)
    static let int8Peak = BenchmarkMetric.custom("int8 peak GOP/s", polarity: .prefersLarger, useScalingFactor: false)
    static let fp32Peak = BenchmarkMetric.custom("fp32 peak GOP/s", polarity: .prefersLarger, useScalingFactor: false)
    static let fp32PeakOneThread = BenchmarkMetric.custom("fp32 peak GOP/s, 1 thread", polarity: .prefersLarger, useScalingFactor: false)
    static let ofBandwidth = BenchmarkMetric.custom("% of read bandwidth", polarity: .prefersLarger, useScalingFactor: false)
    static let ofInt8Peak = BenchmarkMetric.custom("% of int8 peak", polarity: .prefersLarger, useScalingFactor: false)
    static let ofFP32Peak = BenchmarkMetric.custom("% of fp32 peak", polarity: .prefersLarger, useScalingFactor: false)

    /// Seconds `work` took (`Duration.seconds` is QBGeneration's).
    static func time(_ work: () -> Void) -> Double { ContinuousClock().measure(work).seconds }
}

extension Benchmark {
    /// Runs `work` once per scaled iteration and records bytes per second.
    func measure(bytes: Int, _ work: () -> Void) {
        for _ in scaledIterations { record(bytes: bytes, seconds: Rate.time(work), ceiling: nil, share: nil) }
    }

    /// Records `bytes` moved in `seconds` as MB/s, and with a ceiling (bytes/s) the share of it.
    func record(bytes: Int, seconds: Double, ceiling: Double?, share: BenchmarkMetric?) {
        record(Double(bytes), seconds: seconds, as: Rate.megabytes, unit: 1e6, ceiling: ceiling, share: share)
    }

    /// Records `ops` operations done in `seconds` as GOP/s, and with a ceiling (ops/s) the share of it.
    func record(ops: Int, seconds: Double, ceiling: Double, share: BenchmarkMetric?) {
        record(Double(ops), seconds: seconds, as: Rate.gigaops, unit: 1e9, ceiling: ceiling, share: share)
    }

    private func record(_ amount: Double, seconds: Double, as metric: BenchmarkMetric, unit: Double, ceiling: Double?,
                        share: BenchmarkMetric?) {
        guard seconds > 0 else { return }
        let rate = amount / seconds
        measurement(metric, Int((rate / unit).rounded()))
        if let ceiling, let share, ceiling > 0 { measurement(share, Int((100 * rate / ceiling).rounded())) }
    }
}

/// This machine's ceilings per kernel set, each measured once per process, on first use,
/// with that set active (the int8 and FMA probes run the set's instructions).
final class Ceilings: @unchecked Sendable {
    private let pool: ThreadPool
    private let lock = NSLock()
    private var measured: [KernelSet: Roofline] = [:]

    init(pool: ThreadPool) { self.pool = pool }

    /// The ceilings of `set`, which must be the active set when they are first asked for
    /// (every setup but the dequantization's asks, after making its set active).
    subscript(set: KernelSet) -> Roofline {
        lock.withLock {
            if let r = measured[set] { return r }
            let r = Roofline.measure(pool: pool, bufferBytes: 512 << 20, repetitions: 3)
            measured[set] = r
            return r
        }
    }
}

/// The benchmark matrix in each format, converted and repacked per kernel set (a repacked
/// layout may differ between sets), built in a benchmark's setup and kept for the others.
final class PreparedMatrices: @unchecked Sendable {
    private let source: Matrix
    private let pool: ThreadPool
    private let lock = NSLock()
    private var plains: [String: Matrix] = [:]
    private var decodes: [String: Matrix] = [:]

    init(_ source: Matrix, pool: ThreadPool) {
        self.source = source
        self.pool = pool
    }

    private func key(_ format: WeightFormat, _ set: KernelSet) -> String { "\(format.name) \(set.name)" }

    /// Makes `set` active and builds `format`'s matrices for it.
    func prepare(_ format: WeightFormat, set: KernelSet) throws {
        KernelSet.use(set)
        let k = key(format, set)
        if lock.withLock({ plains[k] != nil }) { return }
        let plain = format == .f32 ? source : try Quantizer.convert(source, to: format, pool: pool)
        // Decode and prefill read Q4_0, Q8_0 and MLX in the interleaved layout the engine
        // repacks them into.
        let decode = plain.interleavedForDecode(pool: pool) ?? plain
        lock.withLock {
            plains[k] = plain
            decodes[k] = decode
        }
    }

    func plain(_ format: WeightFormat, set: KernelSet) -> Matrix { lock.withLock { plains[key(format, set)]! } }
    func decode(_ format: WeightFormat, set: KernelSet) -> Matrix { lock.withLock { decodes[key(format, set)]! } }
}

/// A buffer read through on all the pool's threads to push other data out of the caches,
/// mapped and touched at the first eviction (listing the benchmarks does not pay for it).
/// Each eviction is also a read-bandwidth probe (`Roofline.readOnce`, as `bench
/// --roofline` runs before each repetition), so every pass is set against the bandwidth of
/// its own moment.
final class ColdCache: @unchecked Sendable {
    private let bytes: Int
    private let pool: ThreadPool
    private let lock = NSLock()
    private var buffer: PageBuffer?
    private let sink: UnsafeMutablePointer<UInt64>

    init(bytes: Int, pool: ThreadPool) {
        self.bytes = bytes / (256 * pool.threadCount) * 256 * pool.threadCount
        self.pool = pool
        sink = .allocate(capacity: 8 * pool.threadCount)
    }

    /// Reads the buffer through; returns the read's GB/s.
    func evict() -> Double {
        lock.withLock {
            let b = buffer ?? {
                let b = PageBuffer(bytes: bytes, for: "the cache flush buffer")
                memset(b.pointer, 1, bytes)
                return b
            }()
            buffer = b
            return Roofline.readOnce(b.pointer, bytes: bytes, threads: pool.threadCount, pool: pool, sink: sink)
        }
    }
}

/// A matrix of seeded random f32 values in [-1, 1), owning its storage.
final class RandomMatrix: @unchecked Sendable {
    let matrix: Matrix
    private let storage: FloatBuffer
    var pointer: UnsafeMutablePointer<Float> { storage.pointer }

    init(rows: Int, cols: Int, seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        storage = FloatBuffer(count: rows * cols)
        for i in 0..<storage.count { storage.pointer[i] = Float(rng.nextUnit() * 2 - 1) }
        matrix = storage.matrix(rows: rows, cols: cols)
    }
}
