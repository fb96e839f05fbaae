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
            ctx-1 ids of the text, every text id predicted exactly once. KL divergence and top-1 \
            agreement are against the setting with the most bits per weight. Writes \
            results/eval-<model>-<time>.json, .md and .svg (speed against quality) unless --out names the JSON.
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

    @Option(help: "UTF-8 text to score.")
    var text: String

    @Option(help: "Window size in positions (default: the model's context, at most 512).")
    var ctx: Int?

    @Option(help: "Split the text into documents at this string (e.g. '<|endoftext|>'); windows never span two.")
    var separator: String?

    @Option(name: .customLong("max-tokens"), help: "Score at most this many ids (default: the whole text).")
    var maxTokens: Int?

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
    }

    func run() throws {
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
        evaluation.kvType = kvType
        evaluation.interrupt = interrupt
        evaluation.progress = { FileHandle.standardError.write(Data("eval: \($0)\n".utf8)) }
        let run: QuantEvaluation.Run
        do {
            run = try evaluation.run(model: base, tokenizer: tok, textPath: text, pool: pool, modelHash: FileHash.model(path: path).hash)
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
}
