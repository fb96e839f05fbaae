import Foundation
import QBKernels
import QBGeneration
import QBModel
import QBSupport

/// Runs a suite on a loaded model and gathers everything into a `BenchResult`: per case
/// the measured repetitions (warmups discarded), estimates, memory and checks; overall
/// the environment, model identity and aggregates.
///
/// Cases run one after another on one worker pool. A case that throws (a request the
/// engine refused) is recorded as failed with the error, and the run goes on; only an
/// interruption stops it, with `BenchInterrupted` and no result.
public struct BenchRunner: Sendable {
    public let loaded: LoadedModel
    /// Measured repetitions per case (at least 1).
    public var repetitions: Int
    /// Unmeasured runs before them.
    public var warmup: Int
    /// Seed of the random ids of throughput tests.
    public var seed: UInt64
    public var interrupt: InterruptFlag
    public var progress: @Sendable (BenchProgress) -> Void
    /// Ceilings measured in this run; nil reads the stored ones.
    public var roofline: Roofline?
    /// Throughput cases run round by round (every case's first repetition, then every
    /// case's second...) instead of case after case, each with its own state: on a machine
    /// whose bandwidth drifts within minutes, cases compared with each other (depth 0 against
    /// depth 4096) then see the same drift. Each run's peak memory then includes the other
    /// cases' states.
    public var interleave: Bool
    /// Throughput tests: a timed sample repeats its operation until it has lasted this long.
    public var minSampleSeconds: Double
    /// Environment for `WorkCounters.open` (its test seam).
    public var counterEnvironment: [String: String]

    /// Defaults keep the smoke suite on the tiny default model to a few seconds in a
    /// release build; llama-bench's own default is 5 repetitions with 1 warmup too.
    public static let defaultRepetitions = 5
    public static let defaultWarmup = 1
    public static let defaultSeed: UInt64 = 1234
    /// Long enough that a sample is many scheduler quanta and timer ticks, short enough
    /// that the smoke suite's throughput cases stay at a second or two.
    public static let defaultMinSampleSeconds = 0.1

    public init(
        loaded: LoadedModel, repetitions: Int = BenchRunner.defaultRepetitions, warmup: Int = BenchRunner.defaultWarmup,
        seed: UInt64 = BenchRunner.defaultSeed, interrupt: InterruptFlag = InterruptFlag(),
        progress: @escaping @Sendable (BenchProgress) -> Void = { _ in }, roofline: Roofline? = nil, interleave: Bool = false,
        minSampleSeconds: Double = BenchRunner.defaultMinSampleSeconds,
        counterEnvironment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.minSampleSeconds = minSampleSeconds.isFinite ? min(max(0, minSampleSeconds), 3600) : 0
        self.counterEnvironment = counterEnvironment
        self.roofline = roofline
        self.interleave = interleave
        self.loaded = loaded
        self.repetitions = max(1, repetitions)
        self.warmup = max(0, warmup)
        self.seed = seed
        self.interrupt = interrupt
        self.progress = progress
    }

    /// Runs every case of `suite` in order and gathers the result. Throws
    /// `BenchInterrupted` (and produces nothing) once `interrupt` is set.
    public func run(_ suite: Suite) async throws -> BenchResult {
        progress(.loaded(model: loaded.info.name, seconds: loaded.load.seconds))
        // After the pool's threads exist: counters are opened per thread.
        var counters: WorkCounters?
        let counterStatus: WorkCounterStatus
        switch WorkCounters.open(environment: counterEnvironment) {
        case .available(let c):
            counters = c
            counterStatus = WorkCounterStatus(available: true, reason: nil)
        case .unavailable(let reason):
            counterStatus = WorkCounterStatus(available: false, reason: reason)
        }
        var cases: [(index: Int, result: CaseResult)] = []
        var interleaved: [(index: Int, case: SuiteCase)] = []
        for (i, c) in suite.cases.enumerated() {
            if interrupt.isSet { throw BenchInterrupted() }
            if interleave && c.kind == .throughput {
                interleaved.append((i, c))
                continue
            }
            progress(.caseStarted(index: i, total: suite.cases.count, id: c.id, runs: runs(for: c)))
            var result = CaseResult(id: c.id, kind: c.kind)
            do {
                switch c.kind {
                case .generate, .chat:
                    try await GenerationCaseRunner(
                        loaded: loaded, repetitions: repetitions, warmup: warmup, interrupt: interrupt, progress: progress, index: i
                    ).run(c, into: &result)
                case .cancel:
                    try await CancellationCaseRunner(
                        loaded: loaded, repetitions: repetitions, warmup: warmup, interrupt: interrupt, progress: progress, index: i
                    ).run(c, into: &result)
                case .throughput:
                    try throughputRunner(index: i, counters: counters).run(c, into: &result)
                case .load:
                    result.checks.append(CheckResult("ran", false, "load levels run only against an endpoint (bench --endpoint)"))
                }
            } catch let e as BenchInterrupted {
                throw e
            } catch {
                result.checks.append(CheckResult("ran", false, "\(error)"))
            }
            Self.settle(&result)
            progress(.caseFinished(index: i, total: suite.cases.count, result: result))
            cases.append((i, result))
        }
        if !interleaved.isEmpty {
            cases += try runInterleaved(interleaved, total: suite.cases.count, counters: counters)
            cases.sort { $0.index < $1.index }
        }
        if interrupt.isSet { throw BenchInterrupted() }
        let stored = roofline == nil ? Roofline.stored(threads: loaded.pool.threadCount) : nil
        let firstLayer = loaded.model.weights.layers.first
        var result = BenchResult(
            createdAt: Self.timestamp(Date()),
            suite: SuiteInfo(name: suite.name, path: suite.path.map(Self.portablePath), hash: suite.hash, description: suite.description),
            environment: .current(threads: loaded.pool.threadCount),
            model: loaded.info,
            settings: RunSettings(
                repetitions: repetitions, warmup: warmup, threads: loaded.pool.threadCount, seed: seed,
                chatFormat: ChatPromptRenderer.name(of: loaded.chatFormat), kvType: loaded.kvType.rawValue,
                minSampleSeconds: minSampleSeconds),
            load: loaded.load, cases: cases.map(\.result), aggregate: Self.aggregate(cases.map(\.result)),
            roofline: roofline ?? stored)
        result.workCounters = counterStatus
        result.rooflineSource = roofline != nil ? "this run" : stored != nil ? "store" : nil
        if let l = firstLayer { result.prefillArithmetic = Linear.prefillQuantizesActivations(l.gate) ? "int8" : "fp32" }
        return result
    }

    func throughputRunner(index: Int, counters: WorkCounters?) -> ThroughputRunner {
        let pool = loaded.pool
        return ThroughputRunner(
            loaded: loaded, repetitions: repetitions, warmup: warmup, seed: seed, interrupt: interrupt, progress: progress,
            index: index, bandwidthProbe: roofline == nil ? nil : { Roofline.probeReadBandwidth(pool: pool) },
            minSampleSeconds: minSampleSeconds, counters: counters)
    }

    /// A finished case's status from its checks (skipped stays skipped).
    static func settle(_ result: inout CaseResult) {
        if result.status != .skipped { result.status = result.checks.allSatisfy(\.passed) ? .passed : .failed }
    }

    /// Throughput cases round by round (`interleave`): every case readied first, then run
    /// `r` of each case in suite order, for every run. A case whose run fails stops there.
    func runInterleaved(_ group: [(index: Int, case: SuiteCase)], total: Int, counters: WorkCounters?) throws -> [(index: Int, result: CaseResult)] {
        struct Slot {
            var index: Int
            var suiteCase: SuiteCase
            var runner: ThroughputRunner
            var trial: ThroughputTrial?
            var result: CaseResult
        }
        var slots: [Slot] = []
        for (i, c) in group {
            if interrupt.isSet { throw BenchInterrupted() }
            progress(.caseStarted(index: i, total: total, id: c.id, runs: runs(for: c)))
            var slot = Slot(index: i, suiteCase: c, runner: throughputRunner(index: i, counters: counters), trial: nil, result: CaseResult(id: c.id, kind: c.kind))
            do {
                slot.trial = try slot.runner.prepare(c, into: &slot.result)
            } catch let e as BenchInterrupted {
                throw e
            } catch {
                slot.result.checks.append(CheckResult("ran", false, "\(error)"))
            }
            slots.append(slot)
        }
        for run in 0..<(warmup + repetitions) {
            for k in slots.indices {
                guard let trial = slots[k].trial else { continue }
                if interrupt.isSet { throw BenchInterrupted() }
                do {
                    slots[k].runner.record(run, try trial.run(), of: slots[k].suiteCase, into: &slots[k].result)
                } catch let e as BenchInterrupted {
                    throw e
                } catch {
                    slots[k].result.checks.append(CheckResult("ran", false, "\(error)"))
                    slots[k].trial = nil
                }
            }
        }
        return slots.map { slot in
            var result = slot.result
            slot.runner.finish(&result)
            Self.settle(&result)
            progress(.caseFinished(index: slot.index, total: total, result: result))
            return (slot.index, result)
        }
    }

    /// Runs a case makes (for the progress bar).
    func runs(for c: SuiteCase) -> Int {
        switch c.kind {
        case .throughput: return warmup + repetitions
        default: return warmup + repetitions + 1
        }
    }

    static func aggregate(_ cases: [CaseResult]) -> Aggregate {
        var pooled: [String: [Double]] = [:]
        for c in cases where c.kind == .generate || c.kind == .chat {
            guard c.status != .skipped else { continue }
            for (name, e) in c.metrics { pooled[name, default: []] += e.samples }
        }
        var metrics: [String: Estimate] = [:]
        for (name, values) in pooled { metrics[name] = Estimate(values) }
        let checks = cases.flatMap(\.checks)
        let peak = cases.flatMap(\.runs).compactMap(\.memory.peakResidentBytes).max()
        return Aggregate(
            cases: cases.count, passed: cases.filter { $0.status == .passed }.count,
            failed: cases.filter { $0.status == .failed }.count, skipped: cases.filter { $0.status == .skipped }.count,
            checksPassed: checks.filter(\.passed).count, checksFailed: checks.filter { !$0.passed }.count,
            metrics: metrics, peakResidentBytes: peak)
    }

    /// ISO 8601 in UTC, whole seconds.
    public static func timestamp(_ date: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime]
        f.timeZone = TimeZone(identifier: "UTC")
        return f.string(from: date)
    }

    /// A path inside the working directory is recorded relative to it, so results made in
    /// a checkout name no machine-specific folder (the suite's hash identifies its content).
    static func portablePath(_ path: String) -> String {
        let cwd = FileManager.default.currentDirectoryPath
        return path.hasPrefix(cwd + "/") ? String(path.dropFirst(cwd.count + 1)) : path
    }
}
