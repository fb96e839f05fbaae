import ArgumentParser
import Foundation
import QBModel
import QBRunner
import QBSupport

struct Quantize: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a model in another format: GGUF for f*/q* settings, an MLX folder for mlx-* settings.")

    @OptionGroup var options: ModelOptions

    @Option(help: "Output: a .gguf file, or a folder for mlx-* settings.")
    var out: String

    func run() throws {
        guard let q = options.quant else { throw ValidationError("--quant is required: \(QuantSpec.all.joined(separator: ", "))") }
        let spec = try QuantSpec(q)
        let pool = try options.makePool()
        let modelPath = try options.model.map(DefaultModel.resolve) ?? DefaultModel.path()
        // Before any work: the output must not be (or contain, or lie inside) the model.
        try OutputGuard.check(output: out, kind: spec.isMLX ? .folder : .file, flag: "--out", inputs: [modelPath, options.tokenizer])
        // Progress on standard error; Ctrl-C or SIGTERM removes what was written, exit 130.
        let signals = WorkSignalHandlers(display: ProgressDisplay.automatic())
        defer { withExtendedLifetime(signals) {} }
        // As opened: the export converts each matrix itself, from the stored weights.
        let model = try ModelPipeline.open(path: modelPath)
        let tokenizer = try? options.loadTokenizer(for: model)
        do {
            try ModelExporter.export(model, tokenizer: tokenizer, spec: spec, to: URL(fileURLWithPath: out), pool: pool)
        } catch is WorkInterrupted {
            WorkSignalHandlers.exitNow()
        }
        print("wrote \(out) (\(spec.name))")
    }
}
