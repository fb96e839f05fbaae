import ArgumentParser
import Foundation
import QBKernels
import QBModel
import QBRunner
import QBSupport

struct Eval: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare quantization settings on one model: size, speed, memory, perplexity, KL divergence and top-1 agreement.",
        discussion: """
            Perplexity is over non-overlapping windows of --ctx positions, each BOS then the next \
            ctx-1 ids of the text, every text id predicted exactly once (or, with --windows \
            llama-perplexity, over llama-perplexity's chunks, scored as it scores them). KL divergence \
            and top-1 agreement are against --reference or else the entry (a --quants setting or a \
            --models file) with the most bits per weight. Writes \
            results/eval-<model>-<time>.json, .md and .svg (speed against quality) unless --out names the JSON. \
            With --kl-base FILE (written by `llama-perplexity --kl-divergence-base`), prints instead \
            llama-perplexity's --kl-divergence statistics of the model against llama.cpp's logits.
            """)

    @Option(name: [.customShort("m"), .customLong("model")], help: "Model (default: the built-in tiny synthetic model, whose random weights make quality figures meaningless).")
    var model: String?

    @Option(help: "Tokenizer for models that carry none.")
    var tokenizer: String?

    @Option(help: "Comma-separated settings, e.g. f32,q8_0,q4_0,mlx-q4-g64 (any of: \(QuantSpec.all.joined(separator: ", "))).")
    var quants: String = ""

    @Option(help: "Model files to compare as they are, comma-separated: GGUF files, MLX or Hugging Face folders quantized by any tool (they must share the vocabulary and tokenize the text alike).")
    var models: String?

    @Option(help: "The file every other one is compared with (KL, Δp, same top, perplexity ratio); default: the entry with the most bits per weight. Also the base model of --quants when --model is not given.")
    var reference: String?

    @Option(help: "UTF-8 text to score (required unless --kl-base).")
    var text: String?

    @Option(name: .customLong("kl-base"), help: "Instead of comparing settings: llama-perplexity's --kl-divergence statistics of each --quants setting (default: the model as stored) against the log-probabilities `llama-perplexity --kl-divergence-base FILE` wrote, on the file's own tokens (--chunks: the first N of its chunks).")
    var klBase: String?

    @Option(help: "Window size in positions (default: the model's context, at most 512).")
    var ctx: Int?

    @Option(help: "Split the text into documents at this string (e.g. '<|endoftext|>'); windows never span two.")
    var separator: String?

    @Option(name: .customLong("max-tokens"), help: "Score at most this many ids (default: the whole text).")
    var maxTokens: Int?

    @Option(help: "How windows are cut: 'all' (default: BOS + ctx-1 ids, every id scored once) or 'llama-perplexity' (llama.cpp's: the text tokenized once, ctx-id chunks each starting with BOS, only each chunk's second half scored).")
    var windows: String = PerplexityWindows.Mode.scoreAll.rawValue

    @Option(help: "With --windows llama-perplexity: score only the first N chunks (llama-perplexity's --chunks).")
    var chunks: Int?

    @Option(help: "Measured repetitions of the speed tests.")
    var repetitions: Int = 3

    @Option(name: [.customShort("t"), .customLong("threads")], help: "Worker threads (default: every core).")
    var threads: Int?

    @Option(name: .customLong("kv-type"), help: "KV cache precision: f32, f16 (default, as every command), q8_0.")
    var kvType: KVCacheType = .f16

    @Option(help: "Write the JSON here (.md and .svg beside it).")
    var out: String?

    @Flag(help: "Print the result JSON on standard output instead of the table.")
    var json = false

    @OptionGroup var history: DatabaseOptions

    func validate() throws {
        if let c = ctx, !(2...Generate.maximumTokens).contains(c) { throw ValidationError("--ctx must be between 2 and \(Generate.maximumTokens)") }
        if let m = maxTokens, !(2...Generate.maximumTokens).contains(m) {
            throw ValidationError("--max-tokens must be between 2 and \(Generate.maximumTokens)")
        }
        _ = try ThreadCount.resolve(threads)
        guard (1...1000).contains(repetitions) else { throw ValidationError("--repetitions must be between 1 and 1000") }
        if separator == "" { throw ValidationError("--separator cannot be empty") }
        guard let mode = PerplexityWindows.Mode(rawValue: windows) else {
            throw ValidationError("unknown --windows '\(windows)'; choose from \(PerplexityWindows.Mode.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let c = chunks, c < 1 { throw ValidationError("--chunks must be at least 1") }
        if mode == .llamaPerplexity {
            if separator != nil { throw ValidationError("--separator does not apply to --windows llama-perplexity (the text is one sequence)") }
            if maxTokens != nil { throw ValidationError("--max-tokens does not apply to --windows llama-perplexity; use --chunks") }
        } else if chunks != nil && klBase == nil {
            throw ValidationError("--chunks applies to --windows llama-perplexity and --kl-base only")
        }
        if klBase == nil {
            // Which settings or files to compare is checked in run(), as main's eval does.
            if text == nil { throw ValidationError("--text is required (unless --kl-base)") }
        } else {
            // --kl-base scores one model (and its --quants settings) against llama.cpp's
            // logits; the file comparison's options would be silently ignored.
            if text != nil { throw ValidationError("--kl-base scores the file's own tokens; --text does not apply") }
            if models != nil || reference != nil { throw ValidationError("--models and --reference do not apply to --kl-base (the reference is the base file); use --model") }
            if out != nil { throw ValidationError("--kl-base prints its statistics (--json for JSON) and writes no results file; --out does not apply") }
        }
    }

    func run() throws {
        if let klBase { return try runKLDivergence(base: klBase) }
        // validate() requires --text whenever --kl-base is absent.
        guard let textPath = text else { throw ValidationError("--text is required (unless --kl-base)") }
        let names = quants.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        for n in names where (try? QuantSpec(n)) == nil {
            throw ValidationError("unknown setting '\(OutputGuard.shown(n, limit: 40))' in --quants; choose from \(QuantSpec.all.joined(separator: ", "))")
        }
        let files = (models ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        if names.isEmpty && files.isEmpty && reference == nil {
            throw ValidationError("name settings (--quants f32,q8_0,...) or files (--models a.gguf,b/)")
        }
        let path = try model ?? reference ?? (names.isEmpty ? files.first : nil) ?? DefaultModel.path()
        // Before any work: the results can be written and overwrite none of the inputs.
        let inputs: [String?] = [path, tokenizer, text, reference] + files.map { Optional($0) }
        let outURL = out.map { URL(fileURLWithPath: $0) }
        for target in outURL.map({ [$0, ResultsFile.markdownURL(for: $0), EvalFiles.svgURL(for: $0)].map(\.path) }) ?? ["results/eval.json"] {
            try OutputGuard.check(output: target, kind: .file, flag: "--out", inputs: inputs)
        }
        let pool = ThreadPool(threads: try ThreadCount.resolve(threads))
        // Each setting is converted from the model as opened, through the same pipeline steps
        // as every other command.
        let base = try ModelPipeline.open(path: path)
        let tok = try ModelPipeline.tokenizer(for: base, path: tokenizer)
        let interrupt = InterruptFlag()
        let signals = interrupt.handleSignals()
        // Converting each setting shows a bar (or lines) when the model is large.
        let display = ProgressDisplay.automatic()
        LongWork.observe { display.show($0) }
        defer { LongWork.observe(nil) }
        var evaluation = QuantEvaluation(quants: names, context: ctx, separator: separator, maxTokens: maxTokens)
        evaluation.files = files
        evaluation.referenceFile = reference
        evaluation.repetitions = repetitions
        evaluation.windowMode = PerplexityWindows.Mode(rawValue: windows) ?? .scoreAll
        evaluation.chunks = chunks
        evaluation.kvType = kvType
        evaluation.interrupt = interrupt
        evaluation.progress = { FileHandle.standardError.write(Data("eval: \($0)\n".utf8)) }
        let run: QuantEvaluation.Run
        do {
            run = try evaluation.run(model: base, tokenizer: tok, textPath: textPath, pool: pool, modelHash: FileHash.model(path: path).hash)
        } catch let e as BenchInterrupted {
            FileHandle.standardError.write(Data("\(e)\n".utf8))
            throw ExitCode(130)
        } catch is WorkInterrupted {
            FileHandle.standardError.write(Data("\(BenchInterrupted())\n".utf8))
            throw ExitCode(130)
        }
        withExtendedLifetime(signals) {}

        let result = run.result
        let url = outURL ?? ResultsFile.uniqueURL(folder: URL(fileURLWithPath: "results"), stem: EvalFiles.defaultStem(result), extensions: ["json", "md", "svg"])
        try EvalFiles.write(result, to: url)
        history.record(result, jsonPath: url.path)
        if json {
            FileHandle.standardOutput.write(try EvalFiles.encode(result))
        } else {
            print(result.markdown, terminator: "")
        }
        FileHandle.standardError.write(Data("wrote \(url.path), .md and .svg\n".utf8))
    }

    /// `--kl-base`: llama-perplexity's KL-divergence statistics per setting.
    func runKLDivergence(base klPath: String) throws {
        let names = quants.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let specs: [QuantSpec?] = try names.isEmpty ? [nil] : names.map { n in
            do { return try QuantSpec(n) } catch {
                throw ValidationError("unknown setting '\(OutputGuard.shown(n, limit: 40))' in --quants; choose from \(QuantSpec.all.joined(separator: ", "))")
            }
        }
        let file = try LlamaLogitsFile(path: klPath)
        let path = try model ?? DefaultModel.path()
        let pool = ThreadPool(threads: try ThreadCount.resolve(threads))
        let base = try ModelPipeline.open(path: path)
        let tok = try ModelPipeline.tokenizer(for: base, path: tokenizer)
        let interrupt = InterruptFlag()
        let signals = interrupt.handleSignals()
        defer { withExtendedLifetime(signals) {} }
        let n = min(chunks ?? file.chunks, file.chunks)
        FileHandle.standardError.write(Data("eval: \(klPath): n_ctx \(file.context), n_vocab \(file.vocab), \(file.chunks) chunks (scoring \(n), \(n * file.rowsPerChunk) positions)\n".utf8))
        var all: [String: LlamaKLDivergence] = [:]
        for spec in specs {
            let name = spec?.name ?? "as stored"
            let model = try ModelPipeline.prepare(base, spec: spec, pool: pool)
            let kld: LlamaKLDivergence
            do {
                kld = try LlamaKLDivergence.score(
                    model, base: file, bos: tok.addsBOS ? tok.bosTokenID : nil, maxChunks: n, pool: pool, kvType: kvType, interrupt: interrupt
                ) { c, total in FileHandle.standardError.write(Data("eval: \(name): chunk \(c + 1)/\(total)\n".utf8)) }
            } catch let e as BenchInterrupted {
                FileHandle.standardError.write(Data("\(e)\n".utf8))
                throw ExitCode(130)
            }
            all[name] = kld
            print("## \(name) against \(klPath)\n")
            print(kld.report)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let summary = all.mapValues { k in
                ["positions": Double(k.count), "mean_kl": k.meanKL.value, "mean_kl_uncertainty": k.meanKL.uncertainty,
                 "same_top": k.sameTopFraction, "perplexity": k.perplexity.ours, "perplexity_base": k.perplexity.base]
            }
            // The reports above went through print's buffer; write them out first, so a
            // piped stdout carries them before the JSON, in the order they were made.
            fflush(nil)
            FileHandle.standardOutput.write(try encoder.encode(summary))
        }
    }
}
