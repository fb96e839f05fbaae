import Foundation
import QBGeneration
import QBKernels
import QBModel
import QBSupport
import QBText

/// llama-bench's tests, run on the model directly (`LanguageModel.forward`) so the figures
/// are the engine's alone, with no sampling, detokenizing or streaming:
///
/// - `ppN`: N ids drawn uniformly from the vocabulary (seeded) prefilled in one forward
///   call (chunked internally by the state's batch), only the last position's logits
///   computed; tokens/s = N / seconds.
/// - `tgN`: N single-id forward calls, each fed the previous call's argmax, starting from
///   the first random id; tokens/s = N / seconds.
/// - `@ dD`: D random ids are prefilled first, untimed (once; each repetition cuts the
///   cache back to them), so the test runs with D positions of context.
///
/// Each timed sample repeats its operation until it has lasted `minSampleSeconds` and
/// reports per-operation figures (wall time, process CPU time, and where the kernel exposes
/// them retired instructions and cycles), so a sample of a fast operation measures the
/// engine rather than the timer and the scheduler's quantum.
///
/// As llama-bench does, warmup runs are discarded and the report gives mean ± standard
/// deviation over the repetitions (plus the median with its interval).
struct ThroughputRunner {
    let loaded: LoadedModel
    let repetitions: Int
    let warmup: Int
    let seed: UInt64
    let interrupt: InterruptFlag
    let progress: @Sendable (BenchProgress) -> Void
    let index: Int
    /// Run right before each decode repetition (`bench --roofline`): the read bandwidth of
    /// that moment, GB/s.
    var bandwidthProbe: (() -> Double)? = nil
    /// A sample repeats its operation until it has lasted this long (seconds).
    var minSampleSeconds: Double = 0
    /// Hardware counters of this process, when available.
    var counters: WorkCounters? = nil

    var model: any LanguageModel { loaded.model }

    func run(_ c: SuiteCase, into result: inout CaseResult) throws {
        guard let trial = try prepare(c, into: &result) else { return }
        for run in 0..<(warmup + repetitions) {
            if interrupt.isSet { throw BenchInterrupted() }
            record(run, try trial.run(), of: c, into: &result)
        }
        finish(&result)
    }

    /// Fills in what `c` is and readies its trial (ids drawn, depth prefilled); nil for a
    /// case that is not a throughput test.
    func prepare(_ c: SuiteCase, into result: inout CaseResult) throws -> ThroughputTrial? {
        guard let test = c.throughput else { return nil }
        result.test = test.name
        let context = test.depth + test.tokens
        result.contextLength = context
        result.promptTokens = test.test == .prompt ? test.tokens : nil
        if context > model.config.contextLength {
            result.notes.append("runs \(context) positions, beyond the model's trained context (\(model.config.contextLength)): speed only")
        }
        result.memory = loaded.memoryBreakdown(contextLength: context, batch: c.batch)
        return try ThroughputTrial(
            model: model, state: loaded.makeState(contextLength: context, batch: c.batch), test: test, seed: seed,
            interrupt: interrupt, beforeRun: test.test == .generate ? bandwidthProbe : nil, minSampleSeconds: minSampleSeconds,
            counters: counters)
    }

    /// Keeps run `run` (warmups first, from 0) of `c`.
    func record(_ run: Int, _ outcome: ThroughputTrial.Outcome, of c: SuiteCase, into result: inout CaseResult) {
        if run >= warmup, let test = c.throughput {
            result.runs.append(RunRecord(
                repetition: run - warmup + 1, tokens: test.tokens, seconds: outcome.seconds,
                iterations: outcome.iterations > 1 ? outcome.iterations : nil, cpuSeconds: outcome.cpuSeconds,
                instructions: outcome.instructions, cycles: outcome.cycles,
                readBandwidthGBps: outcome.probedBandwidth, memory: outcome.memory))
        }
        progress(.runFinished(index: index, run: run + 1, runs: warmup + repetitions))
    }

    /// Turns the kept runs into metrics.
    func finish(_ result: inout CaseResult) {
        var samples: [Metric: [Double]] = [:]
        for r in result.runs {
            if let s = r.seconds, let n = r.tokens, s > 0 { samples[.tokensPerSecond, default: []].append(Double(n) / s) }
            if let v = r.cpuSeconds { samples[.cpuSeconds, default: []].append(v) }
            if let v = r.instructions { samples[.instructions, default: []].append(v) }
            if let v = r.cycles { samples[.cycles, default: []].append(v) }
            GenerationCaseRunner.appendMemory(r.memory, to: &samples)
        }
        result.metrics = GenerationCaseRunner.estimates(samples)
    }

    /// Runs `test` on `state` (at least depth + tokens positions) warmup + repetitions times, calling
    /// `onRun(run, seconds, memory)` after each (run counts from 0, warmups first). Throws
    /// `BenchInterrupted` when interrupted.
    static func measure(
        model: any LanguageModel, state: InferenceState, test: ThroughputTest, repetitions: Int, warmup: Int, seed: UInt64,
        interrupt: InterruptFlag, onRun: (Int, Double, MemorySnapshot) -> Void
    ) throws {
        let trial = try ThroughputTrial(
            model: model, state: state, test: test, seed: seed, interrupt: interrupt, beforeRun: nil, minSampleSeconds: 0, counters: nil)
        for run in 0..<(warmup + repetitions) {
            if interrupt.isSet { throw BenchInterrupted() }
            let o = try trial.run()
            onRun(run, o.seconds, o.memory)
        }
    }
}

/// One throughput test made ready to repeat: its ids drawn (the same for every repetition
/// and on every machine: SplitMix64 seeded by the run's seed and the test's name) and its
/// state holding the test's depth, prefilled once, untimed.
final class ThroughputTrial {
    struct Outcome {
        /// Per operation.
        var seconds: Double
        var iterations: Int = 1
        /// Per operation.
        var cpuSeconds: Double?
        var instructions: Double?
        var cycles: Double?
        var memory: MemorySnapshot
        /// What `beforeRun` returned (a bandwidth probe's GB/s), if it ran.
        var probedBandwidth: Double?
    }

    let model: any LanguageModel
    let state: InferenceState
    let test: ThroughputTest
    let interrupt: InterruptFlag
    let beforeRun: (() -> Double)?
    let depth: Int
    let ids: [TokenID]
    let minSampleSeconds: Double
    let counters: WorkCounters?
    /// More repetitions of one operation in a sample than this means the operation is
    /// (nearly) free; the sample stops there.
    static let maxIterations = 100_000

    /// Throws `BenchInterrupted` when interrupted while prefilling the depth.
    init(
        model: any LanguageModel, state: InferenceState, test: ThroughputTest, seed: UInt64, interrupt: InterruptFlag,
        beforeRun: (() -> Double)?, minSampleSeconds: Double, counters: WorkCounters?
    ) throws {
        self.minSampleSeconds = minSampleSeconds.isFinite ? max(0, minSampleSeconds) : 0
        self.counters = counters
        self.model = model
        self.state = state
        self.test = test
        self.interrupt = interrupt
        self.beforeRun = beforeRun
        var rng = SplitMix64(seed: seed ^ Statistics.seed(for: test.name))
        let vocab = UInt64(model.config.vocabSize)
        let depthIDs = (0..<test.depth).map { _ in TokenID(rng.next() % vocab) }
        ids = (0..<test.tokens).map { _ in TokenID(rng.next() % vocab) }
        depth = depthIDs.count
        state.cache.truncate(to: 0)
        do {
            if !depthIDs.isEmpty { _ = try model.forward(depthIDs, state: state, logits: .none, isCancelled: { interrupt.isSet }) }
        } catch is ForwardCancelled {
            throw BenchInterrupted()
        }
    }

    /// One timed sample: `beforeRun` (untimed, ahead of the peak-memory reset), then the
    /// test, the cache cut back to the depth before each operation, repeated until the
    /// sample has lasted `minSampleSeconds`. Throws `BenchInterrupted` when interrupted.
    func run() throws -> Outcome {
        state.cache.truncate(to: depth)
        let probed = beforeRun?()
        let peakReset = MemoryStats.resetPeak()
        let cancelled = { [interrupt] in interrupt.isSet }
        let clock = ContinuousClock()
        let counted0 = counters?.read()
        let cpu0 = WorkCounters.processCPUSeconds()
        let start = clock.now
        var iterations = 0
        var elapsed = 0.0
        repeat {
            state.cache.truncate(to: depth)
            #if QB_TEST_SLOWDOWN
                let opCPU = WorkCounters.processCPUSeconds()
            #endif
            do {
                switch test.test {
                case .prompt:
                    _ = try model.forward(ids, state: state, logits: .last, isCancelled: cancelled)
                case .generate:
                    var token = ids[0]
                    for _ in 0..<test.tokens {
                        let logits = try model.forward([token], state: state, logits: .last, isCancelled: cancelled)
                        token = TokenID(logits.withUnsafeBufferPointer(Ops.argmax))
                    }
                }
            } catch is ForwardCancelled {
                throw BenchInterrupted()
            }
            #if QB_TEST_SLOWDOWN
                TestSlowdown.apply(test: test.name, operationCPUSeconds: WorkCounters.processCPUSeconds() - opCPU, pool: state.pool)
            #endif
            iterations += 1
            elapsed = (clock.now - start).seconds
            if interrupt.isSet { throw BenchInterrupted() }
        } while elapsed < minSampleSeconds && iterations < Self.maxIterations
        let cpu = WorkCounters.processCPUSeconds() - cpu0
        let ops = Double(iterations)
        var outcome = Outcome(
            seconds: elapsed / ops, iterations: iterations, cpuSeconds: cpu.isFinite && cpu >= 0 ? cpu / ops : nil,
            memory: MemorySnapshot(MemoryStats.current(), peakWasReset: peakReset), probedBandwidth: probed)
        if let a = counted0, let b = counters?.read() {
            outcome.instructions = Double(b.instructions &- a.instructions) / ops
            outcome.cycles = Double(b.cycles &- a.cycles) / ops
        }
        return outcome
    }
}

#if QB_TEST_SLOWDOWN
/// Test builds only (`-Xswiftc -DQB_TEST_SLOWDOWN`): `QB_TEST_SLOWDOWN=pp128:10` makes every
/// operation of the throughput test named `pp128` cost 10% more CPU time, spread over the
/// engine's pool threads, each spinning until its own CPU clock has advanced by its share:
/// what kernels doing 10% more work cost, on a quiet machine or a busy one. (Spinning for a
/// share of the operation's wall time instead made it cost more on a busy machine, where
/// the wall time includes time without a core: a "3%" candidate came out 9-11% worse in
/// CPU time at a load average of 5.) How `ab`'s detection is checked against a known
/// slowdown. Release and debug builds have no such code.
enum TestSlowdown {
    static let setting: (test: String, fraction: Double)? = {
        guard let v = ProcessInfo.processInfo.environment["QB_TEST_SLOWDOWN"] else { return nil }
        let parts = v.split(separator: ":")
        guard parts.count == 2, let pct = Double(parts[1]), pct.isFinite, pct >= 0, pct <= 1000 else { return nil }
        return (String(parts[0]), pct / 100)
    }()

    static func apply(test: String, operationCPUSeconds: Double, pool: ThreadPool) {
        guard let s = setting, s.test == test, operationCPUSeconds.isFinite, operationCPUSeconds > 0 else { return }
        let share = operationCPUSeconds * s.fraction / Double(pool.threadCount)
        pool.parallelFor(pool.threadCount) { _, _ in
            let until = WorkCounters.threadCPUSeconds() + share
            while WorkCounters.threadCPUSeconds() < until {}
        }
    }
}
#endif
