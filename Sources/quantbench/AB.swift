import ArgumentParser
import Foundation
import QBSupport
import QBKernels
import QBRunner

struct AB: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ab",
        abstract: "Run one suite with two quantbench binaries, interleaved round by round, and gate on the paired verdict.",
        discussion: """
            Each round runs `BIN bench ... --out FILE` once per side, in a fresh process from a fresh copy of BIN; \
            rounds come in pairs, one baseline-first and one candidate-first, which first drawn at random \
            (--order-seed), so the machine's drift hits both alike. Only `bench` and the \
            options given here are passed on, so a baseline built before `ab` existed works. Default: the `ci` suite \
            on the built-in 125M-parameter q4_0 model (builtin:ci-125m), 24 rounds within 150 s, more (up to 96) while a metric \
            is unsettled: a noisy machine measures longer instead of guessing. \
            Exit status: 0 nothing regressed with confidence, 1 a regression, 2 bad input or a run that failed \
            (the result JSON is still written), 3 a correctness check failed.
            """)

    @Option(help: "The reference quantbench executable (typically the parent commit's build).")
    var baseline: String?

    @Option(help: "The quantbench executable under test.")
    var candidate: String?

    @Option(help: "Judge the rounds recorded in this ab result JSON again, under this run's thresholds (and this binary's rule), instead of running anything.")
    var rejudge: String?

    @Option(help: "Rounds (each one process per side); at least 2, and 8 or more for the test to be able to show a change among 10 metrics.")
    var rounds: Int = ABRunner.defaultRounds

    @Option(name: .customLong("max-rounds"), help: "Past --rounds, add pairs of rounds while a metric is unsettled (its interval still reaches the threshold without gating), up to this many in all and within --max-seconds (default: 4 x --rounds; --max-rounds equal to --rounds adds none).")
    var maxRounds: Int?

    @Option(name: .customLong("max-seconds"), help: "Time budget: stop adding rounds when the next would end past it (the first 2 always run).")
    var maxSeconds: Double = ABRunner.defaultMaxSeconds

    @Option(name: .customLong("max-regression"), help: "Practical threshold for times and speeds, in percent.")
    var maxRegression: Double = GatePolicy.defaultTimeThreshold * 100

    @Option(name: .customLong("max-work-regression"), help: "Practical threshold for work counters (instructions, cycles), in percent.")
    var maxWorkRegression: Double = GatePolicy.defaultWorkThreshold * 100

    @Option(name: .customLong("memory-slack-mib"), help: "Memory differences up to this many MiB are the same.")
    var memorySlackMiB: Double = GatePolicy.defaultMemorySlackBytes / 1_048_576

    @Option(help: "Write the result JSON here (default: results/ab-<suite>-<model>-<time>.json).")
    var out: String?

    @Option(help: "Write the Markdown verdict here (it also goes to $GITHUB_STEP_SUMMARY when set).")
    var summary: String?

    @Option(help: "Write JUnit XML here: each check and each gated metric a test case.")
    var junit: String?

    @Option(name: .customLong("order-seed"), help: "Draw each pair of rounds' order (AB then BA, or BA then AB) from this seed (default: a random one; the result records it).")
    var orderSeed: UInt32?

    @Option(name: .customLong("keep-runs"), help: "Keep every run's JSON and output in this folder (default: a temporary folder, removed).")
    var keepRuns: String?

    // Passed through to `bench` on both sides, only when given.
    @Option(help: "bench --model (default: builtin:ci-125m, made on first use; builtin: names are resolved here).")
    var model: String?
    @Option(help: "bench --tokenizer.") var tokenizer: String?
    @Option(help: "bench --quant.") var quant: String?
    @Option(help: "bench --threads.") var threads: Int?
    @Option(name: .customLong("kv-type"), help: "bench --kv-type.") var kvType: String?
    @Option(help: "bench --suite (default: ci when neither --suite nor --pp/--tg is given).") var suite: String?
    @Option(help: "bench --pp.") var pp: String?
    @Option(help: "bench --tg.") var tg: String?
    @Option(help: "bench --depth.") var depth: String?
    @Option(help: "bench --repetitions (default here: 3).") var repetitions: Int?
    @Option(help: "bench --warmup (default here: 1).") var warmup: Int?
    @Option(help: "bench --seed.") var seed: UInt64?
    @Option(name: .customLong("min-sample-seconds"), help: "bench --min-sample-seconds (both binaries must know it).")
    var minSampleSeconds: Double?
    @Option(name: .customLong("bench-arg"), help: "Any other bench argument, passed as is (repeatable).")
    var benchArgs: [String] = []

    static let defaultRepetitions = 3
    static let defaultWarmup = 1

    func validate() throws {
        if rejudge != nil {
            if baseline != nil || candidate != nil { throw ValidationError("--rejudge reads recorded rounds; it takes no --baseline or --candidate") }
        } else if baseline == nil || candidate == nil {
            throw ValidationError("give --baseline and --candidate (or --rejudge FILE)")
        }
        guard (2...1000).contains(rounds) else { throw ValidationError("--rounds must be between 2 and 1000") }
        if let m = maxRounds, !(rounds...4000).contains(m) { throw ValidationError("--max-rounds must be between --rounds (\(rounds)) and 4000") }
        guard maxSeconds.isFinite, maxSeconds > 0, maxSeconds <= 7 * 86400 else { throw ValidationError("--max-seconds must be a positive number of seconds (at most a week)") }
        for (name, v) in [("--max-regression", maxRegression), ("--max-work-regression", maxWorkRegression)] {
            guard v.isFinite, v >= 0, v < 100 else { throw ValidationError("\(name) must be a percentage in [0, 100)") }
        }
        guard memorySlackMiB.isFinite, memorySlackMiB >= 0, memorySlackMiB <= 1_048_576 else { throw ValidationError("--memory-slack-mib must be between 0 and 1048576") }
        if let r = repetitions, !(1...10_000).contains(r) { throw ValidationError("--repetitions must be between 1 and 10000") }
        if let w = warmup, !(0...10_000).contains(w) { throw ValidationError("--warmup must be between 0 and 10000") }
        if let t = threads { _ = try ThreadCount.resolve(t) }
        if let m = minSampleSeconds, !(m.isFinite && m >= 0 && m <= 3600) { throw ValidationError("--min-sample-seconds must be between 0 and 3600") }
        if suite != nil && (pp != nil || tg != nil) { throw ValidationError("--suite and --pp/--tg are alternatives; give one") }
    }

    /// Exits 2 with one line.
    func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("error: \(message)\n".utf8))
        return ExitCode(2)
    }

    var policy: GatePolicy {
        GatePolicy(timeThreshold: maxRegression / 100, workThreshold: maxWorkRegression / 100, memorySlackBytes: memorySlackMiB * 1_048_576)
    }

    func run() throws {
        if let rejudge { return try runRejudge(rejudge) }
        guard let baseline, let candidate else { throw fail("give --baseline and --candidate") }
        let fm = FileManager.default
        for (side, bin) in [("baseline", baseline), ("candidate", candidate)] {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: bin, isDirectory: &isDir), !isDir.boolValue else { throw fail("\(side) binary \(bin): no such file") }
            guard fm.isExecutableFile(atPath: bin) else { throw fail("\(side) binary \(bin): not executable") }
        }
        var args: [String] = []
        let modelPath: String
        do {
            modelPath = try DefaultModel.resolve(model ?? "builtin:\(CIModel.preset.rawValue)")
        } catch {
            throw fail("\(error)")
        }
        args += ["--model", modelPath]
        if let tokenizer { args += ["--tokenizer", tokenizer] }
        if let quant { args += ["--quant", quant] }
        if let threads { args += ["--threads", "\(threads)"] }
        if let kvType { args += ["--kv-type", kvType] }
        if pp != nil || tg != nil {
            if let pp { args += ["--pp", pp] }
            if let tg { args += ["--tg", tg] }
            if let depth { args += ["--depth", depth] }
        }
        let suiteName = pp == nil && tg == nil ? suite ?? "ci" : nil
        // A file on disk, found before any work starts so a wrong name fails at once.
        var suitePath: String?
        var embeddedSuite: (file: String, text: String)?
        if let suiteName {
            do {
                suitePath = try SuiteLoader.locate(suiteName)
            } catch {
                guard let builtIn = SuiteLoader.embedded(suiteName) else { throw fail("\(error)") }
                embeddedSuite = builtIn
            }
        }
        // Before any round runs: every output can be written and replaces none of the inputs
        // (the two binaries, the model, the tokenizer, the suite). Otherwise an unwritable
        // --out fails only after all the rounds, and `--junit OLD-BINARY` replaces it.
        let inputs: [String?] = [baseline, candidate, modelPath, tokenizer, suitePath]
        var outputs: [(flag: String, path: String)] = []
        if let out {
            outputs += [("--out", out), ("--out", ResultsFile.markdownURL(for: URL(fileURLWithPath: out)).path)]
        } else {
            outputs.append(("--out", "results/ab.json"))
        }
        if let summary { outputs.append(("--summary", summary)) }
        if let junit { outputs.append(("--junit", junit)) }
        for output in outputs {
            do {
                try OutputGuard.check(output: output.path, kind: .file, flag: output.flag, inputs: inputs)
            } catch {
                throw fail("\(error)")
            }
        }
        args += ["--repetitions", "\(repetitions ?? Self.defaultRepetitions)", "--warmup", "\(warmup ?? Self.defaultWarmup)"]
        if let seed { args += ["--seed", "\(seed)"] }
        if let minSampleSeconds { args += ["--min-sample-seconds", "\(minSampleSeconds)"] }
        args += benchArgs

        let work: URL
        if let keepRuns {
            work = URL(fileURLWithPath: keepRuns)
        } else {
            work = fm.temporaryDirectory.appendingPathComponent("quantbench-ab-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        }
        do {
            try fm.createDirectory(at: work, withIntermediateDirectories: true)
        } catch {
            throw fail("cannot create \(work.path): \(error.localizedDescription)")
        }
        defer { if keepRuns == nil { try? fm.removeItem(at: work) } }
        // Both binaries get a path, so they read the very same file whatever their own
        // Prompts/ lookup finds; a suite known only from this binary's embedded copy is
        // written into the work folder first (a copied binary has no Prompts/ beside it).
        if let embeddedSuite {
            let file = work.appendingPathComponent(embeddedSuite.file)
            do {
                try AtomicWriter.write(Data(embeddedSuite.text.utf8), to: file)
            } catch {
                throw fail("cannot write the suite to \(file.path): \(error)")
            }
            suitePath = file.path
        }
        if let suitePath { args += ["--suite", suitePath] }

        let interrupt = InterruptFlag()
        let signals = interrupt.handleSignals(message: "interrupting: stopping after the current run; the result is still written (again to quit now)\n")
        let runner = ABRunner(
            baseline: baseline, candidate: candidate, benchArguments: args, rounds: rounds, maxRounds: maxRounds, maxSeconds: maxSeconds,
            policy: policy, workDirectory: work, interrupt: interrupt, orderSeed: orderSeed ?? .random(in: 0...UInt32.max),
            log: { FileHandle.standardError.write(Data("ab: \($0)\n".utf8)) })
        let (result, abSummary) = runner.run()
        withExtendedLifetime(signals) {}
        let url = out.map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: "results").appendingPathComponent("ab-" + ResultsFile.defaultStem(for: result) + ".json")
        try finish(result, report: abSummary.report, url: url)
    }

    /// `--rejudge FILE`: the recorded rounds under this run's policy; the JSON is written only
    /// with --out (never over FILE).
    func runRejudge(_ path: String) throws {
        var result: BenchResult
        do {
            result = try ResultsFile.load(path: path)
        } catch {
            throw fail("\(error)")
        }
        guard let recorded = result.ab else { throw fail("\(path): not an ab result (no \"ab\" section)") }
        let rejudged = recorded.rejudged(policy: policy, source: path)
        result.ab = rejudged
        var outputs: [(flag: String, path: String)] = []
        if let out { outputs += [("--out", out), ("--out", ResultsFile.markdownURL(for: URL(fileURLWithPath: out)).path)] }
        if let summary { outputs.append(("--summary", summary)) }
        if let junit { outputs.append(("--junit", junit)) }
        for output in outputs {
            do {
                try OutputGuard.check(output: output.path, kind: .file, flag: output.flag, inputs: [path])
            } catch {
                throw fail("\(error)")
            }
        }
        try finish(result, report: rejudged.report, url: out.map { URL(fileURLWithPath: $0) })
    }

    /// Writes what was asked for, prints the verdict and exits with its status.
    func finish(_ result: BenchResult, report: GateReport, url: URL?) throws {
        var writeErrors: [String] = []
        if let url {
            do {
                try ResultsFile.write(result, markdown: report.markdown(), to: url)
            } catch {
                writeErrors.append("cannot write \(url.path): \(error)")
            }
        }
        do {
            try report.writeSummary(to: summary)
        } catch {
            writeErrors.append("cannot write the summary: \(error)")
        }
        if let junit {
            do {
                try AtomicWriter.write(Data(report.junit().utf8), to: URL(fileURLWithPath: junit))
            } catch {
                writeErrors.append("cannot write \(junit): \(error)")
            }
        }
        print(report.markdown(), terminator: "")
        for f in report.failures { FileHandle.standardError.write(Data("error: \(f)\n".utf8)) }
        for e in writeErrors { FileHandle.standardError.write(Data("error: \(e)\n".utf8)) }
        if let url { FileHandle.standardError.write(Data("wrote \(url.path)\n".utf8)) }
        if !writeErrors.isEmpty { throw ExitCode(2) }
        if report.status != .fine { throw ExitCode(report.status.rawValue) }
    }
}
