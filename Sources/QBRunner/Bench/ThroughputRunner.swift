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
            interrupt: interrupt, beforeRun: test.test == .generate ? bandwidthProbe : nil)
    }

    /// Keeps run `run` (warmups first, from 0) of `c`.
    func record(_ run: Int, _ outcome: ThroughputTrial.Outcome, of c: SuiteCase, into result: inout CaseResult) {
        if run >= warmup, let test = c.throughput {
            result.runs.append(RunRecord(
                repetition: run - warmup + 1, tokens: test.tokens, seconds: outcome.seconds,
                readBandwidthGBps: outcome.probedBandwidth, memory: outcome.memory))
        }
        progress(.runFinished(index: index, run: run + 1, runs: warmup + repetitions))
    }

    /// Turns the kept runs into metrics.
    func finish(_ result: inout CaseResult) {
        var samples: [Metric: [Double]] = [:]
        for r in result.runs {
            if let s = r.seconds, let n = r.tokens, s > 0 { samples[.tokensPerSecond, default: []].append(Double(n) / s) }
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
        let trial = try ThroughputTrial(model: model, state: state, test: test, seed: seed, interrupt: interrupt, beforeRun: nil)
        for run in 0..<(warmup + repetitions) {
            if interrupt.isSet { throw BenchInterrupted() }
            let o = try trial.run()
            onRun(run, o.seconds, o.memory)
        }
    }

    static func argmax(_ v: [Float]) -> TokenID {
        var best = 0
        for i in v.indices where v[i] > v[best] { best = i }
        return TokenID(best)
    }
}

/// One throughput test made ready to repeat: its ids drawn (the same for every repetition
/// and on every machine: SplitMix64 seeded by the run's seed and the test's name) and its
/// state holding the test's depth, prefilled once, untimed.
final class ThroughputTrial {
    struct Outcome {
        var seconds: Double
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

    /// Throws `BenchInterrupted` when interrupted while prefilling the depth.
    init(model: any LanguageModel, state: InferenceState, test: ThroughputTest, seed: UInt64, interrupt: InterruptFlag, beforeRun: (() -> Double)?) throws {
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

    /// One timed repetition: the cache cut back to the depth, `beforeRun` (untimed, ahead of
    /// the peak-memory reset), then the test. Throws `BenchInterrupted` when interrupted.
    func run() throws -> Outcome {
        state.cache.truncate(to: depth)
        let probed = beforeRun?()
        let peakReset = MemoryStats.resetPeak()
        let cancelled = { [interrupt] in interrupt.isSet }
        let clock = ContinuousClock()
        let start = clock.now
        do {
            switch test.test {
            case .prompt:
                _ = try model.forward(ids, state: state, logits: .last, isCancelled: cancelled)
            case .generate:
                var token = ids[0]
                for _ in 0..<test.tokens {
                    let logits = try model.forward([token], state: state, logits: .last, isCancelled: cancelled)
                    token = ThroughputRunner.argmax(logits)
                }
            }
        } catch is ForwardCancelled {
            throw BenchInterrupted()
        }
        let seconds = (clock.now - start).seconds
        return Outcome(seconds: seconds, memory: MemorySnapshot(MemoryStats.current(), peakWasReset: peakReset), probedBandwidth: probed)
    }
}
