import ArgumentParser
import QBKernels
import QBModel
import QBRunner
import QBText

/// Options shared by every command that runs a model.
struct ModelOptions: ParsableArguments {
    @Option(help: "Model: a Hugging Face folder, a .safetensors file in one, or a llama2.c checkpoint. Default: the built-in tiny synthetic model.")
    var model: String?

    @Option(help: "Tokenizer for models that carry none (llama2.c tokenizer.bin, tokenizer.json, or a folder).")
    var tokenizer: String?

    @Option(help: "Worker threads (default: every core).")
    var threads: Int?

    @Option(name: .customLong("kv-type"), help: "KV cache precision: f32, f16 (default), q8_0 (q8_0 needs a head size that is a multiple of 32; else f16).")
    var kvType: KVCacheType = .f16

    @Option(help: "Convert the weights at load: \(QuantSpec.all.joined(separator: ", ")).")
    var quant: String?

    /// Opens the model and applies `--quant`.
    func loadModel(pool: ThreadPool) throws -> LlamaModel {
        let m = try ModelLoader.load(path: model ?? DefaultModel.path())
        guard let q = quant else { return m }
        return try m.quantized(QuantSpec(q), pool: pool)
    }

    func loadTokenizer(for model: LlamaModel) throws -> any Tokenizer {
        try TokenizerLoader.load(for: model, path: tokenizer)
    }

    func makePool() throws -> ThreadPool {
        ThreadPool(threads: try ThreadCount.resolve(threads))
    }
}

extension KVCacheType: ExpressibleByArgument {}
