import Foundation
import NIOHTTP1
import QBOpenAI
import QBRunner
import QBSupport
import Synchronization

/// How one load level sends its requests.
public enum LoadMode: Sendable, Equatable {
    /// `n` clients, each sending its next request when the last one ends (closed loop).
    case concurrency(Int)
    /// Requests arriving at `rate` per second (open loop): a Poisson process, or gamma gaps
    /// of shape `EndpointSettings.burstiness` (`ArrivalGaps`), from a seeded generator, with
    /// at most `cap` in flight when given.
    case rate(Double, cap: Int?)

    public var caseID: String {
        switch self {
        case .concurrency(let n): return "concurrency-\(n)"
        case .rate(let r, let cap): return "rate-\(Self.number(r))" + (cap.map { "-max\($0)" } ?? "")
        }
    }

    static func number(_ x: Double) -> String { x == x.rounded() && abs(x) < 1e9 ? String(Int(x)) : String(x) }
}

/// What `bench --endpoint` was asked to do.
public struct EndpointSettings: Sendable {
    public var target: EndpointTarget
    /// The model id to send; nil: the first id `/v1/models` lists.
    public var model: String?
    public var api: EndpointAPI = .auto
    public var levels: [LoadMode]
    /// Requests per level; nil with no duration: `defaultRequests`.
    public var numRequests: Int?
    /// A level sends no new request after this many seconds.
    public var durationSeconds: Double?
    /// Requests sent one by one before the first level, not measured.
    public var warmup = 1
    public var maxTokens: Int?
    public var seed: UInt64 = 0
    public var slo: ServiceLevels?
    public var timeoutSeconds = 300.0
    public var maxErrorRate = 0.0
    /// Start every prompt with `Request <level>.<n>: ` (`Request w<n>: ` for the warmup) so
    /// repeated prompts share no prefix a server could reuse from an earlier request.
    public var uniquePrompts = false
    /// How many prompts (the first ones) the stream-equals-whole check sends; 0: none.
    public var consistencyPrompts = 8
    /// The shape of the gamma-distributed gaps between arrivals in rate mode (1: Poisson).
    public var burstiness = 1.0
    /// Which requests the result lists one by one; the distributions always use them all.
    public var requestRecords = RequestRecords.all

    public init(target: EndpointTarget, levels: [LoadMode]) {
        self.target = target
        self.levels = levels
    }

    /// Requests per level when neither `--num-requests` nor `--duration` is given: four per
    /// client (at least 16), or 32 at a request rate.
    public func requests(for mode: LoadMode) -> Int? {
        if let numRequests { return numRequests }
        if durationSeconds != nil { return nil }
        switch mode {
        case .concurrency(let n): return max(16, 4 * n)
        case .rate: return 32
        }
    }
}

/// Which per-request records a level's result keeps. A 10-minute soak at a saturating rate
/// sends tens of thousands of requests, and listing each (its inter-token gaps included)
/// makes a results file of a hundred megabytes; the figures are the same either way.
public enum RequestRecords: String, Sendable, CaseIterable {
    case all, failed, none

    func kept(_ records: [RequestRecord]) -> [RequestRecord] {
        switch self {
        case .all: return records
        case .failed: return records.filter { $0.error != nil }
        case .none: return []
        }
    }
}

/// Measures an OpenAI-compatible server under load: each level streams the suite's
/// prompts (in turn) and records what every request saw; the result is a `BenchResult`
/// with one `load` case per level and the full record under `endpoint`.
public struct EndpointBenchmark: Sendable {
    public let settings: EndpointSettings
    let client: HTTPStreamClient

    public init(settings: EndpointSettings, client: HTTPStreamClient) {
        self.settings = settings
        self.client = client
    }

    /// `GET <base>/models`: the ids the server lists. A server without the endpoint (404)
    /// lists none; no connection is `EndpointError.unreachable`.
    public func probe() async throws(EndpointError) -> [String] {
        var status = 0
        var body: [UInt8] = []
        do {
            try await client.send(
                settings.target, method: .GET, path: settings.target.basePath + "/models", body: nil, accept: "application/json",
                timeoutSeconds: min(settings.timeoutSeconds, 30)
            ) { event, _ in
                switch event {
                case .head(let s, _): status = s
                case .body(let b): if body.count < 1 << 20 { body += b.readableBytesView }
                case .end: break
                }
            }
        } catch let e as HTTPStreamFailure {
            switch e {
            case .connect(let why): throw .unreachable(url: settings.target.url, reason: why)
            case .timeout: throw .unreachable(url: settings.target.url, reason: "no answer to GET \(settings.target.basePath)/models within the time limit")
            case .truncated(let why): throw .badReply(url: settings.target.url, reason: "GET \(settings.target.basePath)/models: \(why)")
            }
        } catch {
            throw .badReply(url: settings.target.url, reason: "\(error)")
        }
        if status == 404 { return [] }
        if status == 401 || status == 403 {
            throw .badReply(url: settings.target.url, reason: "the server refused the request (HTTP \(status)); give the key with --api-key")
        }
        guard status == 200 else { throw .badReply(url: settings.target.url, reason: "GET \(settings.target.basePath)/models answered HTTP \(status)") }
        guard let data = (try? JSONReader.parse(Data(body)))?.objectValue?["data"]?.arrayValue else {
            throw .badReply(url: settings.target.url, reason: "GET \(settings.target.basePath)/models did not answer an OpenAI model list")
        }
        return data.compactMap { $0.objectValue?["id"]?.stringValue }
    }

    /// One streamed request, as the client saw it.
    func request(_ index: Int, _ prompt: EndpointPrompt, model: String, levelStart: UInt64, label: String) async -> RequestRecord {
        let prefix = settings.uniquePrompts ? "Request \(label)\(index + 1): " : nil
        return await streamed(index, prompt, model: model, levelStart: levelStart, prefix: prefix).record
    }

    /// One streamed request and the text its chunks carried.
    func streamed(_ index: Int, _ prompt: EndpointPrompt, model: String, levelStart: UInt64, prefix: String?) async -> (record: RequestRecord, text: String) {
        let start = HTTPStreamClient.now()
        var r = RequestRecord(
            index: index, prompt: prompt.id, api: prompt.chat ? "chat" : "completions",
            startSeconds: StreamObserver.seconds(levelStart, start))
        let observer = Mutex(StreamObserver(chat: prompt.chat, maxTokens: prompt.maxTokens, start: start))
        var failure: HTTPStreamFailure?
        do {
            try await client.send(
                settings.target, method: .POST, path: settings.target.basePath + (prompt.chat ? "/chat/completions" : "/completions"),
                body: prompt.body(model: model, prefix: prefix), accept: "text/event-stream", timeoutSeconds: settings.timeoutSeconds
            ) { event, t in observer.withLock { $0.handle(event, at: t) } }
        } catch let e as HTTPStreamFailure {
            failure = e
        } catch {
            failure = .truncated("\(error)")
        }
        let text = observer.withLock { o in
            o.record(into: &r, failure: failure)
            return o.text
        }
        return (r, text)
    }

    /// One non-streamed request: its text, or why there is none.
    func whole(_ prompt: EndpointPrompt, model: String) async -> Result<String, ConsistencyFailure> {
        var status = 0
        var body: [UInt8] = []
        do {
            try await client.send(
                settings.target, method: .POST, path: settings.target.basePath + (prompt.chat ? "/chat/completions" : "/completions"),
                body: prompt.body(model: model, stream: false), accept: "application/json", timeoutSeconds: settings.timeoutSeconds
            ) { event, _ in
                switch event {
                case .head(let s, _): status = s
                case .body(let b): if body.count < 16 << 20 { body += b.readableBytesView }
                case .end: break
                }
            }
        } catch {
            return .failure(ConsistencyFailure(reason: "the non-streamed request failed: \(error)"))
        }
        guard status == 200 else { return .failure(ConsistencyFailure(reason: "the non-streamed request answered HTTP \(status)")) }
        let choice = (try? JSONReader.parse(Data(body)))?.objectValue?["choices"]?.arrayValue?.first?.objectValue
        let text = prompt.chat ? choice?["message"]?.objectValue?["content"]?.stringValue : choice?["text"]?.stringValue
        guard let text else { return .failure(ConsistencyFailure(reason: "the non-streamed reply has no choices[0] text")) }
        return .success(text)
    }

    /// The same checks as in-process runs where they make sense over HTTP, on the first
    /// `consistencyPrompts` prompts, one request at a time before the levels: a streamed
    /// reply's text equals the non-streamed reply's (every prompt is greedy or seeded), and
    /// no stop string appears in either.
    func consistency(_ prompts: ArraySlice<EndpointPrompt>, model: String) async -> CaseResult {
        var c = CaseResult(id: "stream-equals-whole", kind: .generate)
        c.notes = ["one streamed and one non-streamed request per prompt, alone, before the load levels"]
        var mismatches: [String] = [], leaks: [String] = []
        for (i, p) in prompts.enumerated() {
            let (record, streamedText) = await streamed(i, p, model: model, levelStart: HTTPStreamClient.now(), prefix: nil)
            if let e = record.error {
                mismatches.append("\(p.id): the streamed request failed (\(e): \(record.errorDetail ?? ""))")
                continue
            }
            switch await whole(p, model: model) {
            case .failure(let f):
                mismatches.append("\(p.id): \(f.reason)")
            case .success(let text):
                if text != streamedText {
                    let same = zip(text, streamedText).prefix { $0 == $1 }.count
                    mismatches.append("\(p.id): texts differ from character \(same) (\(streamedText.count) streamed, \(text.count) whole)")
                }
                for stop in p.stops where text.contains(stop) || streamedText.contains(stop) {
                    leaks.append("\(p.id): '\(stop)'")
                }
            }
        }
        c.checks.append(CheckResult(
            "stream_equals_whole", mismatches.isEmpty,
            mismatches.isEmpty ? "\(prompts.count) prompts: streamed text equals non-streamed text" : mismatches.joined(separator: "; ")))
        c.checks.append(CheckResult(
            "stop_strings_not_leaked", leaks.isEmpty, leaks.isEmpty ? "no stop string in any reply" : leaks.joined(separator: "; ")))
        c.status = c.checks.allSatisfy(\.passed) ? .passed : .failed
        return c
    }

    /// Runs one level; the records in the order the requests were sent.
    func level(_ mode: LoadMode, prompts: [EndpointPrompt], model: String, label: String) async -> (records: [RequestRecord], wall: Double) {
        let limit = settings.requests(for: mode) ?? Int.max
        let levelStart = HTTPStreamClient.now()
        let deadline = settings.durationSeconds.map { levelStart + UInt64($0 * 1e9) }
        var records: [RequestRecord] = []
        switch mode {
        case .concurrency(let n):
            let claims = RequestClaims(limit: limit, deadline: deadline)
            await withTaskGroup(of: [RequestRecord].self) { group in
                for _ in 0..<n {
                    group.addTask {
                        var mine: [RequestRecord] = []
                        while let i = claims.next() {
                            mine.append(await self.request(i, prompts[i % prompts.count], model: model, levelStart: levelStart, label: label))
                        }
                        return mine
                    }
                }
                for await part in group { records += part }
            }
        case .rate(let rate, let cap):
            var gaps = ArrivalGaps(rate: rate, burstiness: settings.burstiness, seed: settings.seed)
            let slots = cap.map { InFlightLimit($0) }
            await withTaskGroup(of: RequestRecord.self) { group in
                var at = 0.0
                var i = 0
                while i < limit {
                    at += gaps.next()
                    // Past a year the schedule is over (and nanoseconds would overflow).
                    if at > 3.2e7 { break }
                    let when = levelStart + UInt64(at * 1e9)
                    if let deadline, when >= deadline { break }
                    let now = HTTPStreamClient.now()
                    if when > now { try? await Task.sleep(nanoseconds: when - now) }
                    if let slots { await slots.acquire() }
                    let index = i
                    group.addTask {
                        let r = await self.request(index, prompts[index % prompts.count], model: model, levelStart: levelStart, label: label)
                        if let slots { await slots.release() }
                        return r
                    }
                    i += 1
                }
                for await r in group { records.append(r) }
            }
        }
        let wall = StreamObserver.seconds(levelStart, HTTPStreamClient.now())
        return (records.sorted { $0.index < $1.index }, wall)
    }

    /// Probes the server, sends the warmup requests, runs every level and returns the result.
    public func run(suite: Suite, progress: @Sendable (String) -> Void = { _ in }) async throws -> BenchResult {
        let (prompts, skipped) = EndpointPrompt.from(suite, api: settings.api, maxTokens: settings.maxTokens)
        guard !prompts.isEmpty else {
            throw EndpointError.noPrompts(
                suite: suite.name, reason: "no case can be sent over HTTP" + (skipped.isEmpty ? "" : " (" + skipped.joined(separator: "; ") + ")"))
        }
        let probeStart = HTTPStreamClient.now()
        let served = try await probe()
        let probeSeconds = StreamObserver.seconds(probeStart, HTTPStreamClient.now())
        guard let model = settings.model ?? served.first else {
            throw EndpointError.badReply(url: settings.target.url, reason: "the server lists no model; name one with --model")
        }
        for i in 0..<settings.warmup {
            let r = await request(i, prompts[i % prompts.count], model: model, levelStart: HTTPStreamClient.now(), label: "w")
            if r.error == "connect" {
                throw EndpointError.unreachable(url: settings.target.url, reason: r.errorDetail ?? "connection failed")
            }
            progress("warmup \(i + 1)/\(settings.warmup): \(r.error.map { "failed (\($0): \(r.errorDetail ?? ""))" } ?? "ok")")
        }
        var levels: [LoadLevel] = []
        var cases: [CaseResult] = []
        if settings.consistencyPrompts > 0 {
            let check = await consistency(prompts.prefix(settings.consistencyPrompts), model: model)
            progress("stream-equals-whole: \(check.status.rawValue)")
            cases.append(check)
        }
        for (n, mode) in settings.levels.enumerated() {
            progress("\(mode.caseID): running")
            let (records, wall) = await level(mode, prompts: prompts, model: model, label: "\(n + 1).")
            let (level, result) = summarize(mode, records: records, wall: wall, skipped: skipped)
            progress(
                "\(mode.caseID): \(level.completed)/\(level.sent) ok, \(String(format: "%.2f", level.requestsPerSecond)) req/s, "
                    + "\(String(format: "%.1f", level.outputTokensPerSecond)) output t/s")
            levels.append(level)
            cases.append(result)
        }
        let checks = cases.flatMap(\.checks)
        let aggregate = Aggregate(
            cases: cases.count, passed: cases.filter { $0.status == .passed }.count, failed: cases.filter { $0.status == .failed }.count,
            skipped: cases.filter { $0.status == .skipped }.count, checksPassed: checks.filter(\.passed).count,
            checksFailed: checks.filter { !$0.passed }.count, metrics: [:], peakResidentBytes: nil)
        let cwd = FileManager.default.currentDirectoryPath
        var result = BenchResult(
            createdAt: BenchRunner.timestamp(Date()),
            suite: SuiteInfo(
                name: suite.name, path: suite.path.map { $0.hasPrefix(cwd + "/") ? String($0.dropFirst(cwd.count + 1)) : $0 },
                hash: suite.hash, description: suite.description),
            environment: .current(threads: client.threads),
            model: .endpoint(url: settings.target.url, model: model),
            settings: RunSettings(
                repetitions: 1, warmup: settings.warmup, threads: client.threads, seed: settings.seed, chatFormat: "server",
                kvType: "server"),
            load: LoadInfo(seconds: probeSeconds, quantizeSeconds: nil, memory: MemorySnapshot(MemoryStats.current(), peakWasReset: false)),
            cases: cases, aggregate: aggregate)
        result.endpoint = EndpointRun(
            url: settings.target.url, model: model, serverModels: served, api: settings.api.rawValue,
            numRequests: settings.numRequests, durationSeconds: settings.durationSeconds, maxTokens: settings.maxTokens,
            timeoutSeconds: settings.timeoutSeconds, maxErrorRate: settings.maxErrorRate, slo: settings.slo, levels: levels)
        result.endpoint?.uniquePrompts = settings.uniquePrompts ? true : nil
        return result
    }

    /// A level's figures, distributions and checks. A level passes when at least one
    /// request completed, the failed share is within `--max-error-rate`, every completed
    /// stream was well formed and the figures are finite and positive.
    func summarize(_ mode: LoadMode, records: [RequestRecord], wall: Double, skipped: [String]) -> (LoadLevel, CaseResult) {
        var level: LoadLevel
        switch mode {
        case .concurrency(let n): level = LoadLevel(caseID: mode.caseID, mode: "concurrency", concurrency: n, requestRate: nil, seed: nil)
        case .rate(let r, let cap):
            level = LoadLevel(caseID: mode.caseID, mode: "rate", concurrency: cap, requestRate: r, seed: settings.seed)
            if settings.burstiness != 1 { level.burstiness = settings.burstiness }
        }
        let done = records.filter { $0.error == nil }
        level.wallSeconds = wall
        level.sent = records.count
        level.completed = done.count
        level.failed = records.count - done.count
        for r in records { if let e = r.error { level.errors[e, default: 0] += 1 } }
        for r in done { for v in r.violations { level.streamViolations[v, default: 0] += 1 } }
        level.promptTokens = done.reduce(0) { $0 + ($1.promptTokens ?? 0) }
        level.outputTokens = done.reduce(0) { $0 + ($1.outputTokens ?? 0) }
        if wall > 0 {
            level.requestsPerSecond = Double(done.count) / wall
            level.outputTokensPerSecond = Double(level.outputTokens) / wall
        }
        if let slo = settings.slo {
            let good = done.filter { slo.met(by: $0) }.count
            level.goodRequests = good
            level.goodputRequestsPerSecond = wall > 0 ? Double(good) / wall : nil
        }
        let ttft = done.compactMap(\.ttft), tpot = done.compactMap(\.tpot), e2e = done.compactMap(\.endToEnd)
        let itl = done.flatMap(\.interTokenLatencies)
        level.distributions["ttft_s"] = Distribution(ttft)
        level.distributions["tpot_s"] = Distribution(tpot)
        level.distributions["itl_s"] = Distribution(itl)
        level.distributions["end_to_end_s"] = Distribution(e2e)
        level.distributions["output_tokens"] = Distribution(done.compactMap { $0.outputTokens.map(Double.init) })
        level.requests = settings.requestRecords.kept(records)

        var c = CaseResult(id: mode.caseID, kind: .load)
        c.notes = skipped.map { "not sent: \($0)" }
        if level.requests.count < records.count {
            c.notes.append("\(records.count - level.requests.count) of \(records.count) per-request records left out (--request-records \(settings.requestRecords.rawValue))")
        }
        if done.contains(where: { $0.tokensFrom == "chunks" }) {
            c.notes.append("the server sent no usage for some requests: their output tokens are chunks with text")
        }
        var m: [String: Estimate] = [:]
        m[Metric.timeToFirstToken.rawValue] = Estimate(ttft)
        m[Metric.timePerOutputToken.rawValue] = Estimate(tpot)
        m[Metric.endToEnd.rawValue] = Estimate(e2e)
        if let d = Distribution(ttft) {
            m[Metric.ttftP90.rawValue] = Estimate([d.p90])
            m[Metric.ttftP99.rawValue] = Estimate([d.p99])
        }
        if let d = Distribution(itl) {
            m[Metric.interTokenP50.rawValue] = Estimate([d.median])
            m[Metric.interTokenP90.rawValue] = Estimate([d.p90])
            m[Metric.interTokenP99.rawValue] = Estimate([d.p99])
        }
        if !done.isEmpty {
            m[Metric.requestsPerSecond.rawValue] = Estimate([level.requestsPerSecond])
            m[Metric.outputTokensPerSecond.rawValue] = Estimate([level.outputTokensPerSecond])
            if let g = level.goodputRequestsPerSecond { m[Metric.goodput.rawValue] = Estimate([g]) }
        }
        c.metrics = m.compactMapValues { $0 }
        c.maxTokens = settings.maxTokens

        let errors = level.errors.keys.sorted().map { "\($0) × \(level.errors[$0]!)" }.joined(separator: ", ")
        let share = records.isEmpty ? 1 : Double(level.failed) / Double(records.count)
        let firstError = records.first { $0.error != nil }.map { ": first \($0.error!) (\($0.errorDetail ?? ""))" } ?? ""
        c.checks.append(CheckResult(
            "requests_completed", !done.isEmpty && share <= settings.maxErrorRate,
            "\(done.count) of \(records.count) completed" + (errors.isEmpty ? "" : "; failed: \(errors)\(firstError)")
                + (share > 0 ? String(format: " (%.1f%% failed, at most %.1f%% allowed)", share * 100, settings.maxErrorRate * 100) : "")))
        let violations = level.streamViolations.keys.sorted().map { "\($0) × \(level.streamViolations[$0]!)" }.joined(separator: ", ")
        c.checks.append(CheckResult(
            "streams_well_formed", !done.isEmpty && violations.isEmpty,
            done.isEmpty ? "no completed stream to check" : violations.isEmpty ? "\(done.count) streams, each ending with [DONE]" : violations))
        let finite = !done.isEmpty && !ttft.isEmpty && level.outputTokens > 0 && level.outputTokensPerSecond.isFinite
            && level.outputTokensPerSecond > 0 && ttft.allSatisfy { $0.isFinite && $0 >= 0 }
        c.checks.append(CheckResult(
            "measured", finite,
            finite ? "\(ttft.count) TTFTs, \(level.outputTokens) output tokens in \(String(format: "%.3f", wall)) s"
                : "no request produced a measurable first token and output tokens"))
        c.status = c.checks.allSatisfy(\.passed) ? .passed : .failed
        return (level, c)
    }
}

/// The next request index of a closed-loop level, shared by its clients: none past the
/// level's count or after its deadline.
final class RequestClaims: Sendable {
    let limit: Int
    let deadline: UInt64?
    let counter = Mutex(0)

    init(limit: Int, deadline: UInt64?) {
        self.limit = limit
        self.deadline = deadline
    }

    func next() -> Int? {
        counter.withLock { i in
            guard i < limit else { return nil }
            if let deadline, HTTPStreamClient.now() >= deadline { return nil }
            defer { i += 1 }
            return i
        }
    }
}

public struct ConsistencyFailure: Error, Sendable {
    public let reason: String
}

/// At most `limit` requests in flight (rate mode with `--concurrency`): arrivals past it
/// wait, in order, for one to end.
actor InFlightLimit {
    let limit: Int
    var inFlight = 0
    var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ limit: Int) { self.limit = limit }

    func acquire() async {
        if inFlight < limit {
            inFlight += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            inFlight -= 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
