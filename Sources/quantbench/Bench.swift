import ArgumentParser
import Foundation
import QBModel
import QBRunner
import QBSupport

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a prompt suite (default: smoke) or llama-bench-style --pp/--tg tests; write JSON and Markdown results.",
        discussion: """
            Results go to results/<suite>-<model>-<quant>-<time>.json with a .md summary beside it \
            (--out names the JSON instead), written atomically; an interrupted run writes nothing. \
            Exit status: 0 when every check passed, 1 when one failed (the results are still written). \
            With --endpoint URL the suite's prompts are streamed to an OpenAI-compatible server under load \
            (--concurrency, --request-rate) and each level reports TTFT, TPOT, inter-token latencies, \
            throughput, goodput (--slo) and streaming-format checks; exit 2 when the server cannot be reached.
            """)

    @OptionGroup var options: BenchModelOptions

    @OptionGroup var history: DatabaseOptions

    @OptionGroup(title: "Measuring a server (--endpoint)") var endpointOptions: EndpointOptions

    @Option(help: "Suite: a name in Prompts/ (smoke, chat, long-prompt, unicode, stops, cancel, throughput; built into the binary) or a YAML file.")
    var suite: String?

    @Option(name: [.customShort("p"), .customLong("pp")], help: "llama-bench prompt tests: prefill N random ids (comma-separated list, e.g. 512; 0 for none).")
    var pp: String?

    @Option(name: [.customShort("n"), .customLong("tg")], help: "llama-bench generation tests: N single-id decode steps (comma-separated list, e.g. 128; 0 for none).")
    var tg: String?

    @Option(name: [.customShort("d"), .customLong("depth")], help: "Context prefilled (untimed) before each --pp/--tg test, like llama-bench -d (comma-separated list).")
    var depth: String?

    @Option(name: [.customShort("r"), .customLong("repetitions")], help: "Measured repetitions per case.")
    var repetitions: Int = BenchRunner.defaultRepetitions

    @Option(name: [.customShort("o"), .customLong("output")], help: "Print llama-bench's records of the throughput tests on standard output in this format: md, csv, json, jsonl, sql (sql loads into sqlite3; the fields are llama-bench's).")
    var output: String?

    @Option(help: "Unmeasured runs before them.")
    var warmup: Int = BenchRunner.defaultWarmup

    @Option(name: .customLong("min-sample-seconds"), help: "Throughput tests: repeat each timed operation until the sample has lasted this long, and report per-operation figures.")
    var minSampleSeconds: Double = BenchRunner.defaultMinSampleSeconds

    @Option(help: "Seed of the random ids of throughput tests.")
    var seed: UInt64 = BenchRunner.defaultSeed

    @Option(help: "Write the JSON here (the Markdown summary goes beside it, .md).")
    var out: String?

    @Flag(help: "Measure this machine's ceilings (as `roofline` does) in this run, before the cases, and report against them instead of the stored ones; each decode repetition is also preceded by a short read-bandwidth probe.")
    var roofline = false

    @Flag(help: "Run throughput cases round by round (each case's first repetition, then each case's second...) so cases compared with each other see the same drift in this machine's speed; each run's peak memory then includes every case's state.")
    var interleave = false

    @Flag(help: "Print the result JSON on standard output instead of the summary.")
    var json = false

    func validate() throws {
        if endpointOptions.endpoint != nil {
            if let flag = inProcessFlagsGiven.first { throw ValidationError("\(flag) measures the engine in-process; it does not go with --endpoint") }
            if options.models.count > 1 { throw ValidationError("with --endpoint, -m/--model names the one served model, got \(options.models.count)") }
        }
        guard (1...10_000).contains(repetitions) else { throw ValidationError("--repetitions must be between 1 and 10000") }
        guard (0...10_000).contains(warmup) else { throw ValidationError("--warmup must be between 0 and 10000") }
        _ = try options.threadCounts()
        _ = try options.kvTypes()
        _ = try options.quants()
        guard minSampleSeconds.isFinite, (0...3600).contains(minSampleSeconds) else {
            throw ValidationError("--min-sample-seconds must be between 0 and 3600")
        }
        if suite != nil && (pp != nil || tg != nil) { throw ValidationError("--suite and --pp/--tg are alternatives; give one") }
        if depth != nil && pp == nil && tg == nil { throw ValidationError("--depth goes with --pp or --tg") }
        let prompts = try Self.tests(pp, "--pp"), generations = try Self.tests(tg, "--tg")
        if (pp != nil || tg != nil) && prompts.isEmpty && generations.isEmpty {
            throw ValidationError("--pp and --tg name no test: 0 skips one, as llama-bench's -p 0 and -n 0 do")
        }
        _ = try Self.list(depth, "--depth", minimum: 0)
        if let output, LlamaBenchRecord.Format(rawValue: output) == nil {
            throw ValidationError("-o/--output takes md, csv, json, jsonl or sql, got '\(output)'")
        }
        if json && output != nil { throw ValidationError("--json and -o/--output are alternatives; give one") }
    }

    /// A --pp or --tg list as llama-bench reads -p and -n: 0 names no test (`-p 512 -n 0` runs
    /// pp512 alone).
    static func tests(_ text: String?, _ flag: String) throws -> [Int] {
        try list(text, flag, minimum: 0).filter { $0 > 0 }
    }

    static func list(_ text: String?, _ flag: String, minimum: Int) throws -> [Int] {
        guard let text else { return [] }
        return try text.split(separator: ",").map { part in
            guard let n = Int(part.trimmingCharacters(in: .whitespaces)), n >= minimum, n <= 1 << 20 else {
                throw ValidationError("\(flag) takes comma-separated whole numbers from \(minimum) to \(1 << 20), got '\(text)'")
            }
            return n
        }
    }

    func run() async throws {
        if let url = endpointOptions.endpoint { return try await runEndpoint(url) }
        let suite: Suite
        if pp != nil || tg != nil {
            suite = SuiteLoader.throughputSuite(
                prompt: try Self.tests(pp, "--pp"), generate: try Self.tests(tg, "--tg"),
                depths: try Self.list(depth, "--depth", minimum: 0))
        } else {
            suite = try SuiteLoader.resolve(self.suite ?? SuiteLoader.defaultSuite)
        }
        // The sweep: every model, quantization, KV cache type and thread count, in
        // llama-bench's order (model outermost).
        let models: [String?] = options.models.isEmpty ? [nil] : options.models
        let quants: [String?] = try options.quants().map { Optional($0) }
        var combos: [(model: String?, quant: String?, kv: KVCacheType, threads: Int)] = []
        for m in models {
            for q in (quants.isEmpty ? [nil] : quants) {
                for kv in try options.kvTypes() {
                    for t in try options.threadCounts() { combos.append((m, q, kv, t)) }
                }
            }
        }
        // Before the model loads and the suite runs: the results can be written, and they
        // overwrite none of the inputs.
        let suitePath: String? = self.suite.flatMap { try? SuiteLoader.locate($0) }
        let inputs: [String?] = options.models.map { Optional($0) } + [options.tokenizer, suitePath]
        for path in out.map({ [$0, ResultsFile.markdownURL(for: URL(fileURLWithPath: $0)).path] }) ?? ["results/results.json"] {
            try OutputGuard.check(output: path, kind: .file, flag: "--out", inputs: inputs)
        }

        let interrupt = InterruptFlag()
        let signals = interrupt.handleSignals()
        let display = ProgressDisplay.automatic()
        // Converting and repacking a large model show a bar (or lines) too.
        LongWork.observe { display.show($0) }
        defer { LongWork.observe(nil) }
        var results: [BenchResult] = []
        var urls: [URL] = []
        for (i, combo) in combos.enumerated() {
            if combos.count > 1 {
                let what = [combo.model ?? "default model", combo.quant, "kv \(combo.kv.rawValue)", "\(combo.threads) threads"]
                display.line("[\(i + 1)/\(combos.count)] " + what.compactMap { $0 }.joined(separator: ", "))
            }
            let loaded: LoadedModel
            do {
                loaded = try LoadedModel.open(
                    modelPath: combo.model, tokenizerPath: options.tokenizer, quant: combo.quant, threads: combo.threads,
                    kvType: combo.kv)
            } catch is WorkInterrupted {
                FileHandle.standardError.write(Data("\(BenchInterrupted())\n".utf8))
                throw ExitCode(130)
            }
            if interrupt.isSet {
                FileHandle.standardError.write(Data("\(BenchInterrupted())\n".utf8))
                throw ExitCode(130)
            }
            var ceilings: Roofline?
            if roofline {
                FileHandle.standardError.write(Data("measuring this machine's ceilings...\n".utf8))
                let measured = Roofline.measure(pool: loaded.pool)
                try measured.store()
                ceilings = measured
            }
            let runner = BenchRunner(
                loaded: loaded, repetitions: repetitions, warmup: warmup, seed: seed, interrupt: interrupt,
                progress: { display.show($0) }, roofline: ceilings, interleave: interleave,
                minSampleSeconds: minSampleSeconds)
            let result: BenchResult
            do {
                result = try await runner.run(suite)
            } catch let e as BenchInterrupted {
                FileHandle.standardError.write(Data("\(e)\n".utf8))
                throw ExitCode(130)
            }
            var url = out.map { URL(fileURLWithPath: $0) }
                ?? ResultsFile.uniqueURL(folder: URL(fileURLWithPath: "results"), stem: ResultsFile.defaultStem(for: result))
            if combos.count > 1 {
                // One file per combination of the sweep, numbered in its order.
                let stem = url.deletingPathExtension().lastPathComponent + "-\(i + 1)"
                url = url.deletingLastPathComponent().appendingPathComponent(stem).appendingPathExtension("json")
            }
            // A signal after the last step but before the files are in place still writes
            // nothing, as the interrupt message promises.
            do {
                guard !interrupt.isSet else { throw WriteCancelled() }
                try ResultsFile.write(result, markdown: BenchReport.markdown(result), to: url, commitIf: { !interrupt.isSet })
            } catch is WriteCancelled {
                FileHandle.standardError.write(Data("\(BenchInterrupted())\n".utf8))
                throw ExitCode(130)
            }
            history.record(result, jsonPath: url.path)
            results.append(result)
            urls.append(url)
        }
        withExtendedLifetime(signals) {}

        if json {
            let docs = try results.map { String(decoding: try ResultsFile.encode($0), as: UTF8.self) }
            let text = docs.count == 1 ? docs[0] : "[\n" + docs.map { $0.trimmingCharacters(in: .newlines) }.joined(separator: ",\n") + "\n]\n"
            FileHandle.standardOutput.write(Data(text.utf8))
        } else if let output, let format = LlamaBenchRecord.Format(rawValue: output) {
            print(LlamaBenchRecord.render(results.flatMap(LlamaBenchRecord.records), as: format), terminator: "")
        } else if pp != nil || tg != nil {
            print(LlamaBenchRecord.markdown(results.flatMap(LlamaBenchRecord.records)), terminator: "")
        } else {
            for r in results { print(BenchReport.markdown(r), terminator: "") }
        }
        for url in urls {
            FileHandle.standardError.write(Data("wrote \(url.path) and \(ResultsFile.markdownURL(for: url).path)\n".utf8))
        }
        if results.contains(where: { !$0.passed }) { throw ExitCode(1) }
    }
}

/// `bench`'s model flags: as every command's (`ModelOptions`), but each takes a list, and
/// the run sweeps their cross product, as llama-bench does.
struct BenchModelOptions: ParsableArguments {
    @Option(name: [.customShort("m"), .customLong("model")], help: "Model(s): a Hugging Face or MLX folder, a GGUF file, a llama2.c checkpoint; comma-separated or repeated. Default: the built-in tiny synthetic model.")
    var model: [String] = []

    @Option(help: "Tokenizer for models that carry none (llama2.c tokenizer.bin, tokenizer.json, or a folder).")
    var tokenizer: String?

    @Option(name: [.customShort("t"), .customLong("threads")], help: "Worker threads, comma-separated list (default: every core).")
    var threads: String?

    @Option(name: .customLong("kv-type"), help: "KV cache precision(s), comma-separated: f32, f16 (default), q8_0.")
    var kvType: String?

    @Option(help: "Convert the weights at load, comma-separated list: \(QuantSpec.all.joined(separator: ", ")).")
    var quant: String?

    var models: [String] { model.flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty } }

    func threadCounts() throws -> [Int] {
        guard let threads else { return [try ThreadCount.resolve(nil)] }
        return try threads.split(separator: ",").map { part in
            guard let n = Int(part.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("--threads takes comma-separated whole numbers, got '\(threads)'")
            }
            return try ThreadCount.resolve(n)
        }
    }

    func kvTypes() throws -> [KVCacheType] {
        guard let kvType else { return [.f16] }
        return try kvType.split(separator: ",").map { part in
            guard let t = KVCacheType(rawValue: part.trimmingCharacters(in: .whitespaces)) else {
                throw ValidationError("--kv-type takes f32, f16 or q8_0 (comma-separated), got '\(part)'")
            }
            return t
        }
    }

    func quants() throws -> [String] {
        guard let quant else { return [] }
        return try quant.split(separator: ",").map { part in
            let name = part.trimmingCharacters(in: .whitespaces)
            do { _ = try QuantSpec(name) } catch { throw ValidationError("--quant: \(error)") }
            return name
        }
    }
}
