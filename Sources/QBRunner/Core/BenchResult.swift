import Foundation
import QBGeneration

/// What `bench` writes: one JSON document per run. The schema is versioned
/// (`schema_version`) and every field is documented in results/README.md; a reader must
/// reject a version it does not know. Keys are snake_case; times are seconds, memory bytes.
public struct BenchResult: Codable, Sendable {
    public static let schemaName = "quantbench.bench"
    public static let currentSchemaVersion = 1

    public var schema: String = BenchResult.schemaName
    public var schemaVersion: Int = BenchResult.currentSchemaVersion
    /// ISO 8601, UTC.
    public var createdAt: String
    public var suite: SuiteInfo
    public var environment: EnvironmentInfo
    public var model: ModelInfo
    public var settings: RunSettings
    public var load: LoadInfo
    public var cases: [CaseResult]
    public var aggregate: Aggregate
    /// This machine's measured ceilings (`quantbench roofline`) at the run's thread count;
    /// reports express decode speed as a share of the read bandwidth and prefill as a share
    /// of the arithmetic peak.
    public var roofline: Roofline?
    /// Where `roofline` came from: "this run" (`bench --roofline`) or "store".
    public var rooflineSource: String?
    /// Which peak prefill is held against: "int8" when the weight products run on int8 dot
    /// products, "fp32" when they run on f32 (sgemm).
    public var prefillArithmetic: String?
    /// Whether throughput tests counted retired instructions and cycles (`perf_event_open`),
    /// and why not when they did not; absent in results of builds that predate the counters.
    public var workCounters: WorkCounterStatus?
    /// `quantbench ab`: the paired comparison this result is the candidate side of.
    public var ab: ABSummary?
    /// `bench --endpoint`: the server measured and each load level in full (every request).
    public var endpoint: EndpointRun?

    enum CodingKeys: String, CodingKey {
        case schema, schemaVersion = "schema_version", createdAt = "created_at", suite, environment, model, settings, load
        case cases, aggregate, roofline
        case rooflineSource = "roofline_source", prefillArithmetic = "prefill_arithmetic", workCounters = "work_counters", ab
        case endpoint
    }

    public init(
        createdAt: String, suite: SuiteInfo, environment: EnvironmentInfo, model: ModelInfo, settings: RunSettings,
        load: LoadInfo, cases: [CaseResult], aggregate: Aggregate, roofline: Roofline? = nil
    ) {
        self.roofline = roofline
        self.createdAt = createdAt
        self.suite = suite
        self.environment = environment
        self.model = model
        self.settings = settings
        self.load = load
        self.cases = cases
        self.aggregate = aggregate
    }

    /// Whether every check of every case passed.
    public var passed: Bool { aggregate.failed == 0 }
}

public struct SuiteInfo: Codable, Sendable, Equatable {
    public var name: String
    public var path: String?
    /// XXH64 of the suite file's bytes.
    public var hash: String
    public var description: String?
    public init(name: String, path: String?, hash: String, description: String?) {
        self.name = name
        self.path = path
        self.hash = hash
        self.description = description
    }
}

public struct RunSettings: Codable, Sendable, Equatable {
    public var repetitions: Int
    public var warmup: Int
    public var threads: Int
    /// The seed of random throughput prompts (each case's sampling seed is in the case).
    public var seed: UInt64
    /// How chat messages were turned into a prompt: `chat-template` or
    /// `plain-continuation` (`ChatPromptFormat.name`); results made before chat cases used the model's template say `fallback-plain-v1`
    /// (one `Role: content` line per message, then `Assistant:`).
    public var chatFormat: String
    /// The KV cache precision (`--kv-type`: f32, f16, q8_0).
    public var kvType: String
    /// Throughput tests: a timed sample repeats its operation until it has lasted this long
    /// (seconds) and reports per-operation figures; absent in older results (one operation).
    public var minSampleSeconds: Double?
    enum CodingKeys: String, CodingKey {
        case repetitions, warmup, threads, seed, chatFormat = "chat_format", kvType = "kv_type", minSampleSeconds = "min_sample_s"
    }
    public init(repetitions: Int, warmup: Int, threads: Int, seed: UInt64, chatFormat: String, kvType: String, minSampleSeconds: Double? = nil) {
        self.minSampleSeconds = minSampleSeconds
        self.repetitions = repetitions
        self.warmup = warmup
        self.threads = threads
        self.seed = seed
        self.chatFormat = chatFormat
        self.kvType = kvType
    }
}

/// Whether the hardware work counters were read (`WorkCounters`).
public struct WorkCounterStatus: Codable, Sendable, Equatable {
    public var available: Bool
    /// Why not, when not (e.g. "perf_event_open: No such file or directory (errno 2)").
    public var reason: String?
    public init(available: Bool, reason: String?) {
        self.available = available
        self.reason = reason
    }
}

/// The process's memory at one moment (`MemoryStats`), plus whether the peak mark had
/// been reset at the start of what it measures.
public struct MemorySnapshot: Codable, Sendable, Equatable {
    /// VmHWM: the largest resident set since the last reset (or process start).
    public var peakResidentBytes: Int?
    public var residentBytes: Int?
    /// tcmalloc's `generic.current_allocated_bytes` and `generic.heap_size`.
    public var allocatedBytes: Int?
    public var heapBytes: Int?
    /// Whether VmHWM was reset (via /proc/self/clear_refs) before the measured work; when
    /// false the peak may include earlier work.
    public var peakWasReset: Bool
    enum CodingKeys: String, CodingKey {
        case peakResidentBytes = "peak_rss_bytes", residentBytes = "rss_bytes", allocatedBytes = "tcmalloc_allocated_bytes"
        case heapBytes = "tcmalloc_heap_bytes", peakWasReset = "peak_was_reset"
    }
}

extension MemorySnapshot {
    public init(_ m: MemoryStats, peakWasReset: Bool) {
        self.init(
            peakResidentBytes: m.peakResidentBytes, residentBytes: m.residentBytes, allocatedBytes: m.allocatedBytes,
            heapBytes: m.heapBytes, peakWasReset: peakWasReset)
    }
}

public struct LoadInfo: Codable, Sendable, Equatable {
    /// Opening the model (and converting it, with --quant) and its tokenizer.
    public var seconds: Double
    /// Of which the --quant conversion.
    public var quantizeSeconds: Double?
    public var memory: MemorySnapshot
    enum CodingKeys: String, CodingKey { case seconds, quantizeSeconds = "quantize_seconds", memory }
    public init(seconds: Double, quantizeSeconds: Double?, memory: MemorySnapshot) {
        self.seconds = seconds
        self.quantizeSeconds = quantizeSeconds
        self.memory = memory
    }
}

/// Bytes the engine itself accounts for, per case.
public struct MemoryBreakdown: Codable, Sendable, Equatable {
    /// Every weight matrix once (a tied output head is not counted twice), mapped or owned.
    public var weightsBytes: Int
    /// The KV cache of the case's context (`KVCache.byteCount`).
    public var kvCacheBytes: Int
    /// Activation buffers (`InferenceState.scratchBytes`).
    public var scratchBytes: Int
    enum CodingKeys: String, CodingKey { case weightsBytes = "weights_bytes", kvCacheBytes = "kv_cache_bytes", scratchBytes = "scratch_bytes" }
    public init(weightsBytes: Int, kvCacheBytes: Int, scratchBytes: Int) {
        self.weightsBytes = weightsBytes
        self.kvCacheBytes = kvCacheBytes
        self.scratchBytes = scratchBytes
    }
}

/// One check of a case, pass or fail, with what was seen.
public struct CheckResult: Codable, Sendable, Equatable {
    public var name: String
    public var passed: Bool
    public var detail: String
    public init(_ name: String, _ passed: Bool, _ detail: String = "") {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}

/// One request of a run (a chat case has one per turn), from `GenerationSummary`.
public struct TurnRecord: Codable, Sendable, Equatable {
    public var finishReason: FinishReason
    public var promptTokens: Int
    public var reusedPromptTokens: Int
    public var generatedTokens: Int
    public var prefillSeconds: Double
    public var timeToFirstTokenSeconds: Double?
    public var decodeSeconds: Double
    /// The engine's own span of the request (`GenerationSummary.totalSeconds`).
    public var engineSeconds: Double
    /// From submitting the request to receiving its `.finished` event, as a client sees it.
    public var endToEndSeconds: Double
    /// When each generated id was chosen, seconds from the request's start.
    public var tokenTimestamps: [Double]
    enum CodingKeys: String, CodingKey {
        case finishReason = "finish_reason", promptTokens = "prompt_tokens", reusedPromptTokens = "reused_prompt_tokens"
        case generatedTokens = "generated_tokens", prefillSeconds = "prefill_s", timeToFirstTokenSeconds = "ttft_s"
        case decodeSeconds = "decode_s", engineSeconds = "engine_s", endToEndSeconds = "end_to_end_s"
        case tokenTimestamps = "token_timestamps_s"
    }
    public init(_ s: GenerationSummary, endToEndSeconds: Double) {
        finishReason = s.finishReason
        promptTokens = s.promptTokens
        reusedPromptTokens = s.reusedPromptTokens
        generatedTokens = s.generatedTokens.count
        prefillSeconds = s.prefillSeconds
        timeToFirstTokenSeconds = s.timeToFirstToken
        decodeSeconds = s.decodeSeconds
        engineSeconds = s.totalSeconds
        self.endToEndSeconds = endToEndSeconds
        tokenTimestamps = s.tokenTimestamps
    }
}

/// One measured repetition of a case (warmups are not recorded).
public struct RunRecord: Codable, Sendable, Equatable {
    public var repetition: Int
    /// Generation and chat cases: each request of the run.
    public var turns: [TurnRecord]?
    /// Throughput tests: tokens processed by one operation and the wall time it took (the
    /// sample's total over `iterations`).
    public var tokens: Int?
    public var seconds: Double?
    /// Throughput tests: how many times the operation ran in this sample (to last at least
    /// `settings.min_sample_s`); absent when once.
    public var iterations: Int?
    /// Throughput tests: process CPU time (every thread) per operation, seconds.
    public var cpuSeconds: Double?
    /// Throughput tests, where the counters are available: user-space retired instructions
    /// and CPU cycles of every thread, per operation.
    public var instructions: Double?
    public var cycles: Double?
    /// Cancel cases: seconds from the cancellation request to the request's return.
    public var cancelLatencySeconds: Double?
    /// Decode tests under `bench --roofline`: the read bandwidth (GB/s) a probe measured
    /// right before this repetition.
    public var readBandwidthGBps: Double?
    public var memory: MemorySnapshot
    enum CodingKeys: String, CodingKey {
        case repetition, turns, tokens, seconds, cancelLatencySeconds = "cancel_latency_s"
        case readBandwidthGBps = "read_bandwidth_gbps", memory, iterations, cpuSeconds = "cpu_s", instructions, cycles
    }
    public init(
        repetition: Int, turns: [TurnRecord]? = nil, tokens: Int? = nil, seconds: Double? = nil, iterations: Int? = nil,
        cpuSeconds: Double? = nil, instructions: Double? = nil, cycles: Double? = nil,
        cancelLatencySeconds: Double? = nil, readBandwidthGBps: Double? = nil, memory: MemorySnapshot
    ) {
        self.iterations = iterations
        self.cpuSeconds = cpuSeconds
        self.instructions = instructions
        self.cycles = cycles
        self.repetition = repetition
        self.turns = turns
        self.tokens = tokens
        self.seconds = seconds
        self.cancelLatencySeconds = cancelLatencySeconds
        self.readBandwidthGBps = readBandwidthGBps
        self.memory = memory
    }
}

/// The output of a case's first measured run.
public struct CaseOutput: Codable, Sendable, Equatable {
    /// Per turn, the streamed text.
    public var text: [String]
    /// Per turn, the generated ids.
    public var tokens: [[Int32]]
    public var stopString: String?
    enum CodingKeys: String, CodingKey { case text, tokens, stopString = "stop_string" }
    public init(text: [String], tokens: [[Int32]], stopString: String?) {
        self.text = text
        self.tokens = tokens
        self.stopString = stopString
    }
}

public struct CaseResult: Codable, Sendable, Equatable {
    public enum Status: String, Codable, Sendable { case passed, failed, skipped }

    public var id: String
    public var kind: SuiteCase.Kind
    public var status: Status
    /// Why a skipped case did not run, and remarks on one that did.
    public var notes: [String]
    public var promptTokens: Int?
    public var maxTokens: Int?
    public var contextLength: Int?
    public var stop: [String]?
    public var sampling: SamplingParameters?
    /// Throughput tests: llama-bench's name for the test (`pp512`, `tg128 @ d4096`).
    public var test: String?
    /// Metric name → estimate over the measured repetitions (names in `Metric`).
    public var metrics: [String: Estimate]
    public var memory: MemoryBreakdown?
    public var runs: [RunRecord]
    public var output: CaseOutput?
    public var checks: [CheckResult]

    enum CodingKeys: String, CodingKey {
        case id, kind, status, notes, promptTokens = "prompt_tokens", maxTokens = "max_tokens"
        case contextLength = "context_length", stop, sampling, test, metrics, memory, runs, output, checks
    }

    public init(id: String, kind: SuiteCase.Kind) {
        self.id = id
        self.kind = kind
        status = .passed
        notes = []
        metrics = [:]
        runs = []
        checks = []
    }
}

/// Totals over the whole run.
public struct Aggregate: Codable, Sendable, Equatable {
    public var cases: Int
    public var passed: Int
    public var failed: Int
    public var skipped: Int
    public var checksPassed: Int
    public var checksFailed: Int
    /// Metric name → estimate over the pooled measured runs of every generation and chat
    /// case (throughput and cancel cases have their own metrics and are left out).
    public var metrics: [String: Estimate]
    /// The largest peak RSS of any run.
    public var peakResidentBytes: Int?
    enum CodingKeys: String, CodingKey {
        case cases, passed, failed, skipped, checksPassed = "checks_passed", checksFailed = "checks_failed", metrics
        case peakResidentBytes = "peak_rss_bytes"
    }
    public init(
        cases: Int, passed: Int, failed: Int, skipped: Int, checksPassed: Int, checksFailed: Int,
        metrics: [String: Estimate], peakResidentBytes: Int?
    ) {
        self.cases = cases
        self.passed = passed
        self.failed = failed
        self.skipped = skipped
        self.checksPassed = checksPassed
        self.checksFailed = checksFailed
        self.metrics = metrics
        self.peakResidentBytes = peakResidentBytes
    }
}

/// The metrics a case can report, their units and which way is better (what `compare`
/// gates on).
public enum Metric: String, CaseIterable, Sendable {
    case timeToFirstToken = "ttft_s"
    case prefillTokensPerSecond = "prefill_tokens_per_s"
    case decodeTokensPerSecond = "decode_tokens_per_s"
    case interTokenP50 = "itl_p50_s"
    case interTokenP90 = "itl_p90_s"
    case interTokenP99 = "itl_p99_s"
    case endToEnd = "end_to_end_s"
    case tokensPerSecond = "tokens_per_s"
    case cancelLatency = "cancel_latency_s"
    /// Throughput tests: process CPU time per operation.
    case cpuSeconds = "cpu_s"
    /// Throughput tests: retired instructions and cycles per operation (work counters).
    case instructions
    case cycles
    case peakResident = "peak_rss_bytes"
    case allocated = "tcmalloc_allocated_bytes"
    case heap = "tcmalloc_heap_bytes"
    /// `bench --endpoint` load levels: TTFT's upper quantiles over the level's requests,
    /// time per output token after the first, completed requests and output tokens per
    /// second of the level's wall time, and requests per second meeting every `--slo`.
    case ttftP90 = "ttft_p90_s"
    case ttftP99 = "ttft_p99_s"
    case timePerOutputToken = "tpot_s"
    case requestsPerSecond = "requests_per_s"
    case outputTokensPerSecond = "output_tokens_per_s"
    case goodput = "goodput_requests_per_s"

    /// Whether a larger value is an improvement.
    public var higherIsBetter: Bool {
        switch self {
        case .prefillTokensPerSecond, .decodeTokensPerSecond, .tokensPerSecond, .requestsPerSecond, .outputTokensPerSecond, .goodput:
            return true
        default: return false
        }
    }

    public var isMemory: Bool { self == .peakResident || self == .allocated || self == .heap }

    /// Counts of work done (hardware counters), gated with their own, tighter threshold.
    public var isWorkCounter: Bool { self == .instructions || self == .cycles }

    /// A short label for tables.
    public var label: String {
        switch self {
        case .timeToFirstToken: return "TTFT"
        case .prefillTokensPerSecond: return "prefill t/s"
        case .decodeTokensPerSecond: return "decode t/s"
        case .interTokenP50: return "ITL p50"
        case .interTokenP90: return "ITL p90"
        case .interTokenP99: return "ITL p99"
        case .endToEnd: return "end-to-end"
        case .tokensPerSecond: return "t/s"
        case .cancelLatency: return "cancel latency"
        case .cpuSeconds: return "CPU time"
        case .instructions: return "instructions"
        case .cycles: return "cycles"
        case .peakResident: return "peak RSS"
        case .allocated: return "tcmalloc allocated"
        case .heap: return "tcmalloc heap"
        case .ttftP90: return "TTFT p90"
        case .ttftP99: return "TTFT p99"
        case .timePerOutputToken: return "TPOT"
        case .requestsPerSecond: return "req/s"
        case .outputTokensPerSecond: return "output t/s"
        case .goodput: return "goodput req/s"
        }
    }
}
