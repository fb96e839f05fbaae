import ArgumentParser
import QBKernels
import QBModel
import QBRunner
import QBText

/// Options shared by every command that runs a model.
struct ModelOptions: ParsableArguments {
    @Option(name: [.customShort("m"), .customLong("model")], help: "Model: a Hugging Face or MLX folder, a .safetensors file in one, a GGUF file, or a llama2.c checkpoint. Default: the built-in tiny synthetic model.")
    var model: String?

    @Option(help: "Tokenizer for models that carry none (llama2.c tokenizer.bin, tokenizer.json, or a folder).")
    var tokenizer: String?

    @Option(name: [.customShort("t"), .customLong("threads")], help: "Worker threads (default: every core).")
    var threads: Int?

    @Option(name: .customLong("kv-type"), help: "KV cache precision: f32, f16 (default), q8_0 (q8_0 needs a head size that is a multiple of 32; else f16).")
    var kvType: KVCacheType = .f16

    @Option(help: "Convert the weights at load: \(QuantSpec.all.joined(separator: ", ")).")
    var quant: String?

    var loadOptions: ModelLoadOptions {
        ModelLoadOptions(modelPath: model, tokenizerPath: tokenizer, quant: quant, kvType: kvType)
    }

    /// The model, tokenizer and KV cache type through the pipeline every command shares.
    func load(pool: ThreadPool) throws -> PreparedModel {
        try ModelPipeline.load(loadOptions, pool: pool)
    }

    /// The model with `--quant` applied, in its stored layout (`inspect`, which needs no
    /// tokenizer and runs nothing).
    func loadModel(pool: ThreadPool) throws -> any LanguageModel {
        let m = try ModelPipeline.open(path: model.map(DefaultModel.resolve) ?? DefaultModel.path())
        return try ModelPipeline.prepare(m, spec: quant.map { try QuantSpec($0) }, pool: pool, decodeLayout: false)
    }

    func loadTokenizer(for model: any LanguageModel) throws -> any Tokenizer {
        try ModelPipeline.tokenizer(for: model, path: tokenizer)
    }

    func makePool() throws -> ThreadPool {
        ThreadPool(threads: try ThreadCount.resolve(threads))
    }
}

extension KVCacheType: ExpressibleByArgument {}
