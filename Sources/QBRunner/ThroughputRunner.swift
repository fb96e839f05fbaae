import Foundation
import QBGeneration
import QBKernels
import QBModel
import QBText

/// llama-bench's tests, run on the model directly (`LlamaModel.forward`) so the figures
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
    var bandwidthProbe: (() -> Double?)? = nil

    var model: LlamaModel { loaded.model }

    func run(_ c: SuiteCase, into result: inout CaseResult) throws {
        guard let test = c.throughput else { return }
        result.test = test.name
        let context = test.depth + test.tokens
        result.contextLength = context
        result.promptTokens = test.test == .prompt ? test.tokens : nil
        if context > model.config.contextLength {
            result.notes.append("runs \(context) positions, beyond the model's trained context (\(model.config.contextLength)): speed only")
        }
        result.memory = loaded.memoryBreakdown(contextLength: context, batch: c.batch)

        let runs = warmup + repetitions
        try Self.measure(
            model: model, state: loaded.makeState(contextLength: context, batch: c.batch), test: test,
            repetitions: repetitions, warmup: warmup, seed: seed, interrupt: interrupt,
            beforeRun: test.test == .generate ? bandwidthProbe : nil
        ) { run, seconds, memory, bandwidth in
            if run >= warmup {
                result.runs.append(RunRecord(
                    repetition: run - warmup + 1, tokens: test.tokens, seconds: seconds, readBandwidthGBps: bandwidth, memory: memory))
            }
            progress(.runFinished(index: index, run: run + 1, runs: runs))
        }

        var samples: [Metric: [Double]] = [:]
        for r in result.runs {
            if let s = r.seconds, let n = r.tokens, s > 0 { samples[.tokensPerSecond, default: []].append(Double(n) / s) }
            GenerationCaseRunner.appendMemory(r.memory, to: &samples)
        }
        result.metrics = GenerationCaseRunner.estimates(samples)
    }

    /// Runs `test` on `state` (at least depth + tokens positions) warmup + repetitions times, calling
    /// `onRun(run, seconds, memory, beforeRun's result)` after each (run counts from 0, warmups first);
    /// `beforeRun` runs untimed before each, ahead of the peak-memory reset. Throws `BenchInterrupted`
    /// when interrupted.
    static func measure(
        model: LlamaModel, state: InferenceState, test: ThroughputTest, repetitions: Int, warmup: Int, seed: UInt64,
        interrupt: InterruptFlag, beforeRun: (() -> Double?)? = nil, onRun: (Int, Double, MemorySnapshot, Double?) -> Void
    ) throws {
        // The same ids for every repetition and on every machine: SplitMix64 seeded by the
        // run's seed and the test's name.
        var rng = SplitMix64(seed: seed ^ Statistics.seed(for: test.name))
        let vocab = UInt64(model.config.vocabSize)
        let depthIDs = (0..<test.depth).map { _ in TokenID(rng.next() % vocab) }
        let ids = (0..<test.tokens).map { _ in TokenID(rng.next() % vocab) }

        state.cache.truncate(to: 0)
        let cancelled = { interrupt.isSet }
        do {
            if !depthIDs.isEmpty { _ = try model.forward(depthIDs, state: state, logits: .none, isCancelled: cancelled) }
            let clock = ContinuousClock()
            for run in 0..<(warmup + repetitions) {
                if interrupt.isSet { throw BenchInterrupted() }
                state.cache.truncate(to: depthIDs.count)
                let probed = beforeRun?()
                let peakReset = MemoryStats.resetPeak()
                let start = clock.now
                switch test.test {
                case .prompt:
                    _ = try model.forward(ids, state: state, logits: .last, isCancelled: cancelled)
                case .generate:
                    var token = ids[0]
                    for _ in 0..<test.tokens {
                        let logits = try model.forward([token], state: state, logits: .last, isCancelled: cancelled)
                        token = argmax(logits)
                    }
                }
                let seconds = (clock.now - start).seconds
                onRun(run, seconds, MemorySnapshot(MemoryStats.current(), peakWasReset: peakReset), probed)
            }
        } catch is ForwardCancelled {
            throw BenchInterrupted()
        }
    }

    static func argmax(_ v: [Float]) -> TokenID {
        var best = 0
        for i in v.indices where v[i] > v[best] { best = i }
        return TokenID(best)
    }
}
