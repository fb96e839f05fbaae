import Foundation
import QBGeneration
import QBKernels
import QBModel
import QBText

/// How a command wants its model: the one set of choices every command's loading takes.
public struct ModelLoadOptions: Sendable {
    /// Nil: the built-in default model (made on first use).
    public var modelPath: String?
    public var tokenizerPath: String?
    /// A `QuantSpec` name (`--quant`), applied at load.
    public var quant: String?
    /// KV cache precision every state of the run uses (`--kv-type`).
    public var kvType: KVCacheType
    /// Read the chat template too (chat), from this Jinja file when given, else the tokenizer's.
    public var chatTemplate: ChatTemplateChoice?

    public enum ChatTemplateChoice: Sendable {
        case tokenizers
        case file(String)
    }

    public init(
        modelPath: String? = nil, tokenizerPath: String? = nil, quant: String? = nil, kvType: KVCacheType = .f16,
        chatTemplate: ChatTemplateChoice? = nil
    ) {
        self.modelPath = modelPath
        self.tokenizerPath = tokenizerPath
        self.quant = quant
        self.kvType = kvType
        self.chatTemplate = chatTemplate
    }
}

/// A model ready to run, as every command gets it from `ModelPipeline.load`.
public struct PreparedModel: Sendable {
    /// The path opened (the default model's when none was named).
    public let path: String
    /// Quantized per the spec and repacked for decode.
    public let model: any LanguageModel
    public let tokenizer: any Tokenizer
    public let spec: QuantSpec?
    public let kvType: KVCacheType
    /// Present when the options asked for it.
    public let chatFormat: ChatPromptFormat?
    /// Opening, converting and the tokenizer (and template).
    public let seconds: Double
    public let quantizeSeconds: Double?
}

/// The one way models are loaded: format detection (`ModelLoader`), quantize at load,
/// the decode layout, tokenizer, chat template and KV cache type. Every command goes
/// through these steps, so a setting means the same thing in `bench`, `eval`, `chat` and
/// `generate`.
public enum ModelPipeline {
    /// Opens a model file or folder of any supported format and architecture.
    public static func open(path: String) throws -> any LanguageModel {
        try ModelLoader.load(path: path)
    }

    /// `model` as every command runs it: converted per `spec` (when given), then repacked
    /// into the layout decode reads fastest (`decodeLayout: false` skips that for commands
    /// that only look at the weights).
    public static func prepare(
        _ model: any LanguageModel, spec: QuantSpec?, pool: ThreadPool, decodeLayout: Bool = true
    ) throws -> any LanguageModel {
        var m = model
        if let spec { m = try m.quantized(spec, pool: pool) }
        return decodeLayout ? try m.interleavedForDecode(pool: pool) : m
    }

    /// The tokenizer for `model`: `explicit` when given, else the one the model carries.
    public static func tokenizer(for model: any LanguageModel, path explicit: String?) throws -> any Tokenizer {
        try TokenizerLoader.load(for: model, path: explicit)
    }

    /// All steps, reporting each to `progress` before it starts (the labels chat's loading
    /// bar shows). Errors name the file and what is wrong with it.
    public static func load(
        _ options: ModelLoadOptions, pool: ThreadPool, progress: (String) -> Void = { _ in }
    ) throws -> PreparedModel {
        // Checked before the slow steps, so a typo fails at once.
        let spec = try options.quant.map { try QuantSpec($0) }
        let clock = ContinuousClock()
        let start = clock.now
        let path: String
        if let p = options.modelPath {
            if p.hasPrefix("builtin:") { progress("preparing the built-in model \(p)") }
            path = try DefaultModel.resolve(p)
        } else {
            progress("preparing the built-in default model")
            path = try DefaultModel.path()
        }
        progress("opening the model")
        var model = try open(path: path)
        var quantizeSeconds: Double?
        if let s = spec {
            progress("converting the weights to \(s.name)")
            let q = clock.now
            model = try model.quantized(s, pool: pool)
            quantizeSeconds = (clock.now - q).seconds
        }
        model = try prepare(model, spec: nil, pool: pool)
        progress("reading the tokenizer")
        let tokenizer = try tokenizer(for: model, path: options.tokenizerPath)
        var format: ChatPromptFormat?
        if let choice = options.chatTemplate {
            progress("reading the chat template")
            var file: String?
            if case .file(let f) = choice { file = f }
            format = try ChatPromptFormat.forTokenizer(tokenizer, templateFile: file)
        }
        return PreparedModel(
            path: path, model: model, tokenizer: tokenizer, spec: spec, kvType: options.kvType, chatFormat: format,
            seconds: (clock.now - start).seconds, quantizeSeconds: quantizeSeconds)
    }

    /// The number of `progress` calls `load` makes for `options`.
    public static func stepCount(_ options: ModelLoadOptions) -> Int {
        2 + (options.modelPath == nil ? 1 : 0) + (options.quant == nil ? 0 : 1) + (options.chatTemplate == nil ? 0 : 1)
    }
}
