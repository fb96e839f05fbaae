import ArgumentParser
import Foundation
import QBEndpoint
import QBRunner
import QBSupport

/// `bench --endpoint`'s flags: an OpenAI-compatible server measured under load instead of
/// the engine in-process.
struct EndpointOptions: ParsableArguments {
    @Option(help: "Measure the OpenAI-compatible server at this URL (http://host:port, optionally ending in /v1) instead of the engine in-process: the suite's prompts streamed under load. -m/--model then names the served model (default: the first /v1/models lists).")
    var endpoint: String?

    @Option(name: .customLong("api-key"), help: "With --endpoint: sent as 'Authorization: Bearer KEY'.")
    var apiKey: String?

    @Option(help: "With --endpoint: auto (chat cases to /v1/chat/completions, text prompts to /v1/completions), chat or completions.")
    var api: String = "auto"

    @Option(help: "With --endpoint: clients sending back to back, one load level each (comma-separated, e.g. 1,2,4,8); with --request-rate, the most requests in flight.")
    var concurrency: String?

    @Option(name: .customLong("request-rate"), help: "With --endpoint: Poisson arrivals at R requests per second (seeded by --seed), one load level each (comma-separated).")
    var requestRate: String?

    @Option(help: "With --endpoint and --request-rate: the gamma shape of the gaps between arrivals (1: Poisson; below 1 burstier, above 1 more even).")
    var burstiness: Double = 1

    @Option(name: .customLong("consistency-prompts"), help: "With --endpoint: before the levels, send the first N prompts once streamed and once not, one at a time, and check the texts are equal and free of stop strings (0: skip).")
    var consistencyPrompts: Int = 8

    @Option(name: .customLong("num-requests"), help: "With --endpoint: requests per level (default: 4 per client, at least 16; 32 at a request rate; unlimited with --duration).")
    var numRequests: Int?

    @Option(help: "With --endpoint: seconds a level keeps sending requests (those in flight then finish).")
    var duration: Double?

    @Option(name: .customLong("max-tokens"), help: "With --endpoint: every request's max_tokens instead of its case's.")
    var maxTokens: Int?

    @Option(help: "With --endpoint: service-level objectives for goodput, e.g. ttft=0.5,tpot=0.05,e2e=10 (seconds, or with an ms suffix).")
    var slo: String?

    @Option(help: "With --endpoint: seconds a request may take in all before it counts as failed (timeout).")
    var timeout: Double = 300

    @Option(name: .customLong("max-error-rate"), help: "With --endpoint: the share of failed requests (0-1) a level may have and still pass.")
    var maxErrorRate: Double = 0

    @Option(help: "With --endpoint: prompts from a JSON Lines file instead of the suite, one object per line: prompt (text) or messages (chat), optional id, max_tokens (default 128) and temperature (default 0).")
    var dataset: String?

    @Flag(name: .customLong("unique-prompts"), help: "With --endpoint: start every prompt with 'Request <level>.<n>: ' so no request shares a prefix with an earlier one (a server's prompt cache cannot answer it; vllm bench serve's random prompts do the same).")
    var uniquePrompts = false

    @Option(name: .customLong("request-records"), help: "With --endpoint: which requests the results list one by one: all, failed or none (the figures always use every request; a long soak's records run to a hundred megabytes).")
    var requestRecords = "all"

    /// The load levels: each concurrency, or each rate (capped by a single concurrency).
    func levels() throws -> [LoadMode] {
        let counts = try Bench.list(concurrency, "--concurrency", minimum: 1)
        if let counts = counts.first(where: { $0 > 4096 }) { throw ValidationError("--concurrency must be at most 4096, got \(counts)") }
        guard let requestRate else { return counts.isEmpty ? [.concurrency(1)] : counts.map { .concurrency($0) } }
        if counts.count > 1 { throw ValidationError("--request-rate takes one --concurrency (the most requests in flight), got \(counts.count)") }
        let rates = try requestRate.split(separator: ",").map { part -> Double in
            guard let r = Double(part.trimmingCharacters(in: .whitespaces)), r.isFinite, r >= 0.001, r <= 1e6 else {
                throw ValidationError("--request-rate takes comma-separated numbers from 0.001 to 1000000 (requests per second), got '\(requestRate)'")
            }
            return r
        }
        return rates.map { .rate($0, cap: counts.first) }
    }

    static func parseSLO(_ text: String) throws -> ServiceLevels {
        var s = ServiceLevels()
        for part in text.split(separator: ",") {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard kv.count == 2 else { throw ValidationError("--slo takes key=value pairs (ttft, tpot, e2e), got '\(part)'") }
            var v = kv[1].lowercased()
            var scale = 1.0
            if v.hasSuffix("ms") {
                v.removeLast(2)
                scale = 1e-3
            } else if v.hasSuffix("s") {
                v.removeLast()
            }
            guard let x = Double(v), x.isFinite, x > 0 else { throw ValidationError("--slo \(kv[0]): expected a positive number of seconds, got '\(kv[1])'") }
            switch kv[0] {
            case "ttft": s.ttft = x * scale
            case "tpot": s.tpot = x * scale
            case "e2e": s.endToEnd = x * scale
            default: throw ValidationError("--slo: unknown objective '\(kv[0])' (ttft, tpot, e2e)")
            }
        }
        return s
    }

    /// Flags that only make sense with --endpoint, named when given without it.
    var loadFlagsGiven: [String] {
        [
            apiKey.map { _ in "--api-key" }, api != "auto" ? "--api" : nil, concurrency.map { _ in "--concurrency" },
            requestRate.map { _ in "--request-rate" }, numRequests.map { _ in "--num-requests" }, duration.map { _ in "--duration" },
            maxTokens.map { _ in "--max-tokens" }, slo.map { _ in "--slo" }, timeout != 300 ? "--timeout" : nil,
            maxErrorRate != 0 ? "--max-error-rate" : nil, uniquePrompts ? "--unique-prompts" : nil,
            dataset.map { _ in "--dataset" }, burstiness != 1 ? "--burstiness" : nil,
            consistencyPrompts != 8 ? "--consistency-prompts" : nil, requestRecords != "all" ? "--request-records" : nil,
        ].compactMap { $0 }
    }

    func validate() throws {
        guard endpoint != nil else {
            if let first = loadFlagsGiven.first { throw ValidationError("\(first) goes with --endpoint") }
            return
        }
        guard EndpointAPI(rawValue: api) != nil else { throw ValidationError("--api takes auto, chat or completions, got '\(api)'") }
        guard RequestRecords(rawValue: requestRecords) != nil else {
            throw ValidationError("--request-records takes all, failed or none, got '\(requestRecords.prefix(40))'")
        }
        _ = try levels()
        if let n = numRequests, !(1...10_000_000).contains(n) { throw ValidationError("--num-requests must be between 1 and 10000000") }
        if let d = duration, !(d.isFinite && d > 0 && d <= 7 * 86400) { throw ValidationError("--duration must be a positive number of seconds (at most a week)") }
        if let m = maxTokens, !(1...1_000_000).contains(m) { throw ValidationError("--max-tokens must be between 1 and 1000000") }
        if let slo { _ = try Self.parseSLO(slo) }
        guard (0...10_000).contains(consistencyPrompts) else { throw ValidationError("--consistency-prompts must be between 0 and 10000") }
        guard burstiness.isFinite, burstiness >= 0.01, burstiness <= 100 else { throw ValidationError("--burstiness must be between 0.01 and 100") }
        if burstiness != 1 && requestRate == nil { throw ValidationError("--burstiness goes with --request-rate") }
        guard timeout.isFinite, timeout > 0, timeout <= 86400 else { throw ValidationError("--timeout must be between 0 and 86400 seconds") }
        guard maxErrorRate.isFinite, (0...1).contains(maxErrorRate) else { throw ValidationError("--max-error-rate must be between 0 and 1") }
    }
}

extension Bench {
    /// Bench flags that measure the engine in-process, named when given with --endpoint.
    var inProcessFlagsGiven: [String] {
        [
            options.tokenizer.map { _ in "--tokenizer" }, options.threads.map { _ in "--threads" }, options.kvType.map { _ in "--kv-type" },
            options.quant.map { _ in "--quant" }, pp.map { _ in "--pp" }, tg.map { _ in "--tg" }, depth.map { _ in "--depth" },
            output.map { _ in "-o/--output" }, roofline ? "--roofline" : nil, interleave ? "--interleave" : nil,
            repetitions != BenchRunner.defaultRepetitions ? "--repetitions" : nil,
            minSampleSeconds != BenchRunner.defaultMinSampleSeconds ? "--min-sample-seconds" : nil,
        ].compactMap { $0 }
    }

    /// `bench --endpoint`: exit 0 when every level passed, 1 when one failed (results still
    /// written), 2 when the server could not be measured at all.
    func runEndpoint(_ url: String) async throws {
        let e = endpointOptions
        let target: EndpointTarget
        do {
            target = try EndpointTarget(url, apiKey: e.apiKey)
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        if e.dataset != nil && self.suite != nil { throw ValidationError("--dataset and --suite are alternatives; give one") }
        let suite: Suite
        do {
            suite = try e.dataset.map { path throws(EndpointError) in try EndpointDataset.load(path: path) }
                ?? SuiteLoader.resolve(self.suite ?? SuiteLoader.defaultSuite)
        } catch let error as EndpointError {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        let suitePath: String? = e.dataset ?? self.suite.flatMap { try? SuiteLoader.locate($0) }
        for path in out.map({ [$0, ResultsFile.markdownURL(for: URL(fileURLWithPath: $0)).path] }) ?? ["results/results.json"] {
            try OutputGuard.check(output: path, kind: .file, flag: "--out", inputs: [suitePath])
        }
        var settings = EndpointSettings(target: target, levels: try e.levels())
        settings.model = options.models.first
        settings.api = EndpointAPI(rawValue: e.api) ?? .auto
        settings.numRequests = e.numRequests
        settings.durationSeconds = e.duration
        settings.warmup = warmup
        settings.maxTokens = e.maxTokens
        settings.seed = seed
        settings.slo = try e.slo.map(EndpointOptions.parseSLO)
        settings.timeoutSeconds = e.timeout
        settings.maxErrorRate = e.maxErrorRate
        settings.uniquePrompts = e.uniquePrompts
        settings.burstiness = e.burstiness
        settings.consistencyPrompts = e.consistencyPrompts
        settings.requestRecords = RequestRecords(rawValue: e.requestRecords) ?? .all
        let client = HTTPStreamClient()
        let quiet = json
        let result: BenchResult
        do {
            result = try await EndpointBenchmark(settings: settings, client: client).run(suite: suite) { line in
                if !quiet { FileHandle.standardError.write(Data("\(line)\n".utf8)) }
            }
        } catch let error as EndpointError {
            await client.shutdown()
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        await client.shutdown()
        let url = out.map { URL(fileURLWithPath: $0) }
            ?? ResultsFile.uniqueURL(folder: URL(fileURLWithPath: "results"), stem: EndpointReport.stem(result))
        let markdown = EndpointReport.markdown(result)
        try ResultsFile.write(result, markdown: markdown, to: url)
        history.record(result, jsonPath: url.path)
        if json {
            FileHandle.standardOutput.write(try ResultsFile.encode(result))
        } else {
            print(markdown, terminator: "")
        }
        FileHandle.standardError.write(Data("wrote \(url.path) and \(ResultsFile.markdownURL(for: url).path)\n".utf8))
        if !result.passed { throw ExitCode(1) }
    }
}
