#if canImport(Glibc)
import Glibc
#endif
import QBGeneration
import QBKernels
import QBModel
import QBSupport

/// What batched decode costs at each batch size (`quantbench serve --bench-batch`): whole
/// steps of `forwardBatch`, and the kernel the weight products run on by itself. Batch
/// sizes are timed in alternation, round after round, and each figure is a median over
/// rounds, so load from other processes on a shared machine falls on every size alike.
/// Beside wall time, the calling thread's CPU time: with one thread (`--threads 1`) that is
/// the whole cost, and it does not count the time other processes hold the core.
public enum BatchBenchmark {
    public struct Row: Sendable {
        public let batch: Int
        /// The kernel the step's interleaved Q4_0 products ran on.
        public let kernel: Linear.BatchKernel
        /// Median over rounds of one step's wall time.
        public let msPerStep: Double
        /// Median over rounds of the calling thread's CPU time in one step.
        public let cpuMsPerStep: Double
        public let tokensPerSecond: Double
        /// One chunk of `batch` consecutive positions of one sequence (prefill tiles).
        public let prefillChunkMs: Double
    }

    /// B sequences at depth `depth` (each prefilled alone), `steps` rounds of one timed
    /// `forwardBatch` step per batch size and kernel (the same sequences step on with each
    /// kernel in turn).
    public static func run(
        model: any LanguageModel, pool: ThreadPool, kvType: KVCacheType, sizes: [Int], kernels: [Linear.BatchKernel] = [.best],
        depth: Int = 32, steps: Int = 32
    ) throws -> [Row] {
        let vocab = Int32(model.config.vocabSize)
        let clock = ContinuousClock()
        let context = depth + (steps + 1) * kernels.count + 8
        let groups = try sizes.map { b in
            try (0..<b).map { i in
                let s = model.makeState(contextLength: context, pool: pool, maxBatch: 64, kvType: kvType)
                _ = try model.forward((0..<depth).map { Int32((($0 + 1) * 7 + i * 13) % Int(vocab)) }, state: s, logits: .none)
                return s
            }
        }
        let most = sizes.max() ?? 1
        let scratch = model.makeState(contextLength: max(1, most), pool: pool, maxBatch: most, kvType: kvType)
        var tokens = sizes.map { b in (0..<b).map { Int32(($0 * 5 + 3) % Int(vocab)) } }
        // The step alone is timed; picking the next tokens (greedy) is not.
        func step(_ k: Int, _ kernel: Linear.BatchKernel) throws -> (wall: Double, cpu: Double) {
            scratch.batchKernel = kernel
            let start = clock.now, cpu = WorkCounters.threadCPUSeconds()
            let logits = try model.forwardBatch(tokens[k], states: groups[k], scratch: scratch)
            let seconds = (clock.now - start).seconds, cpuSeconds = WorkCounters.threadCPUSeconds() - cpu
            tokens[k] = logits.map { l in Int32(l.indices.max(by: { l[$0] < l[$1] }) ?? 0) }
            return (seconds, cpuSeconds)
        }
        for k in sizes.indices { for kernel in kernels { _ = try step(k, kernel) } }  // warm-up
        var samples = kernels.map { _ in sizes.map { _ in [Double]() } }, cpuSamples = samples
        for _ in 0..<steps {
            for k in sizes.indices {
                for (j, kernel) in kernels.enumerated() {
                    let t = try step(k, kernel)
                    samples[j][k].append(t.wall)
                    cpuSamples[j][k].append(t.cpu)
                }
            }
        }
        scratch.batchKernel = .best
        var prefill: [Double] = []
        for (k, b) in sizes.enumerated() {
            let chunk = model.makeState(contextLength: depth + b + 1, pool: pool, maxBatch: 64, kvType: kvType)
            _ = try model.forward((0..<depth).map { Int32(($0 * 3 + 1) % Int(vocab)) }, state: chunk, logits: .none)
            let p = clock.now
            _ = try model.forward(Array(tokens[k].prefix(b)), state: chunk, logits: .last)
            prefill.append((clock.now - p).seconds * 1000)
        }
        return kernels.enumerated().flatMap { j, kernel in
            sizes.enumerated().map { k, b in
                let seconds = Quantiles.median(samples[j][k]) ?? 0
                return Row(
                    batch: b, kernel: kernel, msPerStep: seconds * 1000,
                    cpuMsPerStep: (Quantiles.median(cpuSamples[j][k]) ?? 0) * 1000,
                    tokensPerSecond: Double(b) / max(seconds, 1e-9), prefillChunkMs: prefill[k])
            }
        }
    }

    /// One batch size's product time on each kernel.
    public struct KernelRow: Sendable {
        public let batch: Int
        /// Median microseconds of the engine's batched product (`Linear.BatchKernel.best`).
        public let bestMicroseconds: Double
        /// The same product on the four-row kernel (`Linear.BatchKernel.fourRow`).
        public let fourRowMicroseconds: Double
        /// Medians of the calling thread's CPU microseconds, engine and four-row kernel.
        public let bestCPUMicroseconds: Double, fourRowCPUMicroseconds: Double
        /// Weight bytes and multiply-adds of one product (for GB/s and GMAC/s).
        public let weightBytes: Int
        public let multiplyAdds: Int
    }

    /// The products of layer 0's gate and up projections (one fused call, as the MLP makes
    /// it) over `batch` activation rows, on the engine's kernel and on the four-row kernel,
    /// alternating, `repetitions` rounds; medians.
    public static func kernels(model: any LanguageModel, pool: ThreadPool, sizes: [Int], repetitions: Int = 31) -> [KernelRow] {
        guard let layer = model.weights.layers.first else { return [] }
        let ws = [layer.gate, layer.up]
        let cols = layer.gate.cols, most = sizes.max() ?? 1
        var rng = SplitMix64(seed: 11)
        let x = FloatBuffer(count: most * cols)
        for i in 0..<x.count { x.pointer[i] = Float(rng.nextUnit() * 2 - 1) }
        let ys = ws.map { FloatBuffer(count: most * $0.rows) }
        let clock = ContinuousClock()
        var best = sizes.map { _ in [Double]() }, four = best, bestCPU = best, fourCPU = best
        for round in 0...repetitions {
            for (k, b) in sizes.enumerated() {
                for kernel in [Linear.BatchKernel.best, .fourRow] {
                    let start = clock.now, cpu = WorkCounters.threadCPUSeconds()
                    Linear.matvecRows(ws, x.pointer, ys.map(\.pointer), count: b, pool: pool, kernel: kernel)
                    let us = (clock.now - start).seconds * 1e6, cpuUs = (WorkCounters.threadCPUSeconds() - cpu) * 1e6
                    // Round 0 warms caches and page tables.
                    guard round > 0 else { continue }
                    if kernel == .best {
                        best[k].append(us)
                        bestCPU[k].append(cpuUs)
                    } else {
                        four[k].append(us)
                        fourCPU[k].append(cpuUs)
                    }
                }
            }
        }
        let bytes = ws.reduce(0) { $0 + $1.byteCount }
        return sizes.enumerated().map { k, b in
            KernelRow(
                batch: b, bestMicroseconds: Quantiles.median(best[k]) ?? 0, fourRowMicroseconds: Quantiles.median(four[k]) ?? 0,
                bestCPUMicroseconds: Quantiles.median(bestCPU[k]) ?? 0, fourRowCPUMicroseconds: Quantiles.median(fourCPU[k]) ?? 0,
                weightBytes: bytes, multiplyAdds: b * ws.reduce(0) { $0 + $1.rows * $1.cols })
        }
    }
}
