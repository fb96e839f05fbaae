import Foundation
import QBSupport

/// `bench --endpoint`: the OpenAI-compatible server measured, how it was loaded, and each
/// load level with every request. Each level is also a case of the result (kind `load`)
/// whose metrics `compare`, `ab` and the history read like any other case's.
public struct EndpointRun: Codable, Sendable, Equatable {
    /// The base URL given (`http://host:port` or `.../v1`).
    public var url: String
    /// The model id sent with every request.
    public var model: String
    /// The ids `GET /v1/models` listed (empty when the server has no such endpoint).
    public var serverModels: [String]
    /// `auto` (chat cases to /v1/chat/completions, text prompts to /v1/completions),
    /// `chat` or `completions`.
    public var api: String
    /// Requests per level (`--num-requests`) and the level's longest time (`--duration`).
    public var numRequests: Int?
    public var durationSeconds: Double?
    /// `--max-tokens`: every request's limit in place of its case's.
    public var maxTokens: Int?
    public var timeoutSeconds: Double
    /// The share of failed requests a level may have and still pass (`--max-error-rate`).
    public var maxErrorRate: Double
    public var slo: ServiceLevels?
    /// `--unique-prompts`: every prompt started with its request number.
    public var uniquePrompts: Bool?
    public var levels: [LoadLevel]

    enum CodingKeys: String, CodingKey {
        case url, model, serverModels = "server_models", api, numRequests = "num_requests", durationSeconds = "duration_s"
        case maxTokens = "max_tokens", timeoutSeconds = "timeout_s", maxErrorRate = "max_error_rate", slo
        case uniquePrompts = "unique_prompts", levels
    }

    public init(
        url: String, model: String, serverModels: [String], api: String, numRequests: Int?, durationSeconds: Double?,
        maxTokens: Int?, timeoutSeconds: Double, maxErrorRate: Double, slo: ServiceLevels?, levels: [LoadLevel]
    ) {
        self.url = url
        self.model = model
        self.serverModels = serverModels
        self.api = api
        self.numRequests = numRequests
        self.durationSeconds = durationSeconds
        self.maxTokens = maxTokens
        self.timeoutSeconds = timeoutSeconds
        self.maxErrorRate = maxErrorRate
        self.slo = slo
        self.levels = levels
    }
}

/// Service-level objectives (`--slo ttft=0.5,tpot=0.05,e2e=10`, seconds): a request is
/// good when it completed and meets every one given.
public struct ServiceLevels: Codable, Sendable, Equatable {
    public var ttft: Double?
    public var tpot: Double?
    public var endToEnd: Double?
    enum CodingKeys: String, CodingKey { case ttft = "ttft_s", tpot = "tpot_s", endToEnd = "end_to_end_s" }

    public init(ttft: Double? = nil, tpot: Double? = nil, endToEnd: Double? = nil) {
        self.ttft = ttft
        self.tpot = tpot
        self.endToEnd = endToEnd
    }

    /// Whether a completed request meets every objective (a request of one output token
    /// has no TPOT and meets that one).
    public func met(by r: RequestRecord) -> Bool {
        guard r.error == nil, let first = r.ttft, let e2e = r.endToEnd else { return false }
        if let t = ttft, !(first <= t) { return false }
        if let t = tpot, let p = r.tpot, !(p <= t) { return false }
        if let t = endToEnd, !(e2e <= t) { return false }
        return true
    }

    public var summary: String {
        [ttft.map { "TTFT ≤ \(Self.ms($0))" }, tpot.map { "TPOT ≤ \(Self.ms($0))" }, endToEnd.map { "e2e ≤ \(Self.ms($0))" }]
            .compactMap { $0 }.joined(separator: ", ")
    }

    static func ms(_ s: Double) -> String { String(format: "%g ms", s * 1000) }
}

/// One load level: a fixed number of clients sending back to back (`concurrency`), or
/// requests arriving at a Poisson rate (`rate`, optionally with at most `concurrency` in
/// flight).
public struct LoadLevel: Codable, Sendable, Equatable {
    public var caseID: String
    public var mode: String
    public var concurrency: Int?
    public var requestRate: Double?
    /// The seed of the arrival times (rate mode).
    public var seed: UInt64?
    /// The gamma shape of the gaps between arrivals (`--burstiness`); absent for Poisson.
    public var burstiness: Double?
    /// From the first request sent to the last one's end.
    public var wallSeconds: Double
    public var sent: Int
    public var completed: Int
    public var failed: Int
    /// Failed requests by kind: `connect`, `timeout`, `http_<status>`, `not_event_stream`,
    /// `stream_truncated`, `empty_stream`.
    public var errors: [String: Int]
    /// Streaming-correctness violations over completed requests, by kind (see results/README.md).
    public var streamViolations: [String: Int]
    public var promptTokens: Int
    public var outputTokens: Int
    /// Completed requests and their output tokens per second of `wall_s`.
    public var requestsPerSecond: Double
    public var outputTokensPerSecond: Double
    /// Requests meeting every SLO, and those per second of `wall_s`; absent without `--slo`.
    public var goodRequests: Int?
    public var goodputRequestsPerSecond: Double?
    /// Over completed requests: `ttft_s`, `tpot_s`, `itl_s` (every gap between content
    /// chunks), `end_to_end_s`, `output_tokens`.
    public var distributions: [String: Distribution]
    public var requests: [RequestRecord]

    enum CodingKeys: String, CodingKey {
        case caseID = "case_id", mode, concurrency, requestRate = "request_rate", seed, burstiness, wallSeconds = "wall_s", sent, completed
        case failed, errors, streamViolations = "stream_violations", promptTokens = "prompt_tokens"
        case outputTokens = "output_tokens", requestsPerSecond = "requests_per_s", outputTokensPerSecond = "output_tokens_per_s"
        case goodRequests = "good_requests", goodputRequestsPerSecond = "goodput_requests_per_s", distributions, requests
    }

    public init(caseID: String, mode: String, concurrency: Int?, requestRate: Double?, seed: UInt64?) {
        self.caseID = caseID
        self.mode = mode
        self.concurrency = concurrency
        self.requestRate = requestRate
        self.seed = seed
        wallSeconds = 0
        sent = 0
        completed = 0
        failed = 0
        errors = [:]
        streamViolations = [:]
        promptTokens = 0
        outputTokens = 0
        requestsPerSecond = 0
        outputTokensPerSecond = 0
        distributions = [:]
        requests = []
    }
}

/// Mean, median, p90, p99 and extremes of finite values (linear interpolation between
/// ranks, as `Quantiles`).
public struct Distribution: Codable, Sendable, Equatable {
    public var count: Int
    public var mean: Double
    public var median: Double
    public var p90: Double
    public var p99: Double
    public var min: Double
    public var max: Double
    enum CodingKeys: String, CodingKey { case count = "n", mean, median, p90, p99, min, max }

    /// Nil when no value is finite.
    public init?(_ values: [Double]) {
        let v = values.filter(\.isFinite)
        guard !v.isEmpty, let median = Quantiles.quantile(v, 0.5), let p90 = Quantiles.quantile(v, 0.9),
              let p99 = Quantiles.quantile(v, 0.99), let lo = v.min(), let hi = v.max() else { return nil }
        count = v.count
        mean = v.reduce(0, +) / Double(v.count)
        self.median = median
        self.p90 = p90
        self.p99 = p99
        min = lo
        max = hi
    }
}

/// One request of a load level, as the client saw it.
public struct RequestRecord: Codable, Sendable, Equatable {
    public var index: Int
    /// The suite case whose prompt it sent.
    public var prompt: String
    /// `chat` or `completions`.
    public var api: String
    /// Seconds from the level's start to sending it.
    public var startSeconds: Double
    /// The HTTP status (absent when no response arrived).
    public var status: Int?
    /// Why it failed (kinds as `LoadLevel.errors`); absent when it completed.
    public var error: String?
    public var errorDetail: String?
    /// Seconds from sending to the first chunk with text.
    public var ttft: Double?
    /// Seconds from sending to the end of the stream.
    public var endToEnd: Double?
    /// (end_to_end − ttft) / (output_tokens − 1); absent below two tokens.
    public var tpot: Double?
    /// Seconds between successive chunks with text.
    public var interTokenLatencies: [Double]
    public var promptTokens: Int?
    public var outputTokens: Int?
    /// `usage` (the server's count) or `chunks` (the server sent no usage: chunks with text).
    public var tokensFrom: String?
    public var contentChunks: Int
    public var finishReason: String?
    public var violations: [String]

    enum CodingKeys: String, CodingKey {
        case index, prompt, api, startSeconds = "start_s", status, error, errorDetail = "error_detail", ttft = "ttft_s"
        case endToEnd = "end_to_end_s", tpot = "tpot_s", interTokenLatencies = "itl_s", promptTokens = "prompt_tokens"
        case outputTokens = "output_tokens", tokensFrom = "tokens_from", contentChunks = "content_chunks"
        case finishReason = "finish_reason", violations
    }

    public init(index: Int, prompt: String, api: String, startSeconds: Double) {
        self.index = index
        self.prompt = prompt
        self.api = api
        self.startSeconds = startSeconds
        interTokenLatencies = []
        contentChunks = 0
        violations = []
    }
}

extension ModelInfo {
    /// A model behind an endpoint: known by its id and URL only. `path` is the URL, `name`
    /// the id, `format` `endpoint`, `file_hash` the XXH64 of `<url>\n<id>` (so runs against
    /// different servers are different series in the history); sizes are 0 (unknown).
    public static func endpoint(url: String, model: String) -> ModelInfo {
        var h = XXH64()
        h.update(Data("\(url)\n\(model)".utf8))
        return ModelInfo(
            path: url, name: model, format: "endpoint", quantization: nil, fileHash: XXH64.hex(h.finalize()), fileBytes: 0,
            files: [], parameters: 0, weightBytes: 0, bitsPerWeight: 0, tensorFormats: [:],
            config: Shape(hiddenSize: 0, layers: 0, heads: 0, kvHeads: 0, headDim: 0, ffnSize: 0, vocabSize: 0, contextLength: 0),
            tokenizer: "server")
    }
}
