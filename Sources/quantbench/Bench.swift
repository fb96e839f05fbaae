import ArgumentParser
import Foundation
import QBRunner
import QBSupport

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a prompt suite (default: smoke) or llama-bench-style --pp/--tg tests; write JSON and Markdown results.",
        discussion: """
            Results go to results/<suite>-<model>-<quant>-<time>.json with a .md summary beside it \
            (--out names the JSON instead), written atomically; an interrupted run writes nothing. \
            Exit status: 0 when every check passed, 1 when one failed (the results are still written).
            """)

    @OptionGroup var options: ModelOptions

    @OptionGroup var history: DatabaseOptions

    @Option(help: "Suite: a name in Prompts/ (smoke, chat, long-prompt, unicode, stops, cancel, throughput) or a YAML file.")
    var suite: String?

    @Option(help: "llama-bench prompt tests: prefill N random ids (comma-separated list, e.g. 512).")
    var pp: String?

    @Option(help: "llama-bench generation tests: N single-id decode steps (comma-separated list, e.g. 128).")
    var tg: String?

    @Option(help: "Context prefilled (untimed) before each --pp/--tg test, like llama-bench -d (comma-separated list).")
    var depth: String?

    @Option(help: "Measured repetitions per case.")
    var repetitions: Int = BenchRunner.defaultRepetitions

    @Option(help: "Unmeasured runs before them.")
    var warmup: Int = BenchRunner.defaultWarmup

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
        guard (1...10_000).contains(repetitions) else { throw ValidationError("--repetitions must be between 1 and 10000") }
        guard (0...10_000).contains(warmup) else { throw ValidationError("--warmup must be between 0 and 10000") }
        _ = try ThreadCount.resolve(options.threads)
        if suite != nil && (pp != nil || tg != nil) { throw ValidationError("--suite and --pp/--tg are alternatives; give one") }
        if depth != nil && pp == nil && tg == nil { throw ValidationError("--depth goes with --pp or --tg") }
        _ = try Self.list(pp, "--pp", minimum: 1)
        _ = try Self.list(tg, "--tg", minimum: 1)
        _ = try Self.list(depth, "--depth", minimum: 0)
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
        let suite: Suite
        if pp != nil || tg != nil {
            suite = SuiteLoader.throughputSuite(
                prompt: try Self.list(pp, "--pp", minimum: 1), generate: try Self.list(tg, "--tg", minimum: 1),
                depths: try Self.list(depth, "--depth", minimum: 0))
        } else {
            suite = try SuiteLoader.load(path: SuiteLoader.locate(self.suite ?? SuiteLoader.defaultSuite))
        }
        // Before the model loads and the suite runs: the results can be written, and they
        // overwrite none of the inputs.
        let inputs = [options.model, options.tokenizer, self.suite.flatMap { try? SuiteLoader.locate($0) }]
        for path in out.map({ [$0, ResultsFile.markdownURL(for: URL(fileURLWithPath: $0)).path] }) ?? ["results/results.json"] {
            try OutputGuard.check(output: path, kind: .file, flag: "--out", inputs: inputs)
        }
        let loaded = try LoadedModel.open(
            modelPath: options.model, tokenizerPath: options.tokenizer, quant: options.quant,
            threads: ThreadCount.resolve(options.threads), kvType: options.kvType)

        let interrupt = InterruptFlag()
        let signals = interrupt.handleSignals()
        let display = ProgressDisplay.automatic()
        var ceilings: Roofline?
        if roofline {
            FileHandle.standardError.write(Data("measuring this machine's ceilings...\n".utf8))
            let measured = Roofline.measure(pool: loaded.pool)
            try measured.store()
            ceilings = measured
        }
        let runner = BenchRunner(
            loaded: loaded, repetitions: repetitions, warmup: warmup, seed: seed, interrupt: interrupt,
            progress: { display.show($0) }, roofline: ceilings, interleave: interleave)
        let result: BenchResult
        do {
            result = try await runner.run(suite)
        } catch let e as BenchInterrupted {
            FileHandle.standardError.write(Data("\(e)\n".utf8))
            throw ExitCode(130)
        }
        withExtendedLifetime(signals) {}

        let url = out.map { URL(fileURLWithPath: $0) }
            ?? ResultsFile.uniqueURL(folder: URL(fileURLWithPath: "results"), stem: ResultsFile.defaultStem(for: result))
        let markdown = BenchReport.markdown(result)
        try ResultsFile.write(result, markdown: markdown, to: url)
        history.record(result, jsonPath: url.path)

        if json {
            FileHandle.standardOutput.write(try ResultsFile.encode(result))
        } else if pp != nil || tg != nil {
            print(BenchReport.llamaBenchTable(result))
        } else {
            print(markdown, terminator: "")
        }
        FileHandle.standardError.write(Data("wrote \(url.path) and \(ResultsFile.markdownURL(for: url).path)\n".utf8))
        if !result.passed { throw ExitCode(1) }
    }
}
