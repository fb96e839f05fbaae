import Foundation
import QBGeneration
import QBKernels
import QBModel
import QBText

/// Everything a chat needs to start, as the command line gives it.
public struct ChatSetupOptions: Sendable {
    /// Nil: the built-in default model (made on first use).
    public var modelPath: String?
    public var tokenizerPath: String?
    /// A `QuantSpec` name (`--quant`).
    public var quant: String?
    /// KV cache positions; nil: the model's context, at most `defaultContextCap`.
    public var contextLength: Int?
    /// KV cache precision (`--kv-type`).
    public var kvType: KVCacheType
    /// A Jinja file used instead of the tokenizer's chat template.
    public var chatTemplatePath: String?
    public var parameters: GenerationParameters
    /// The history to start from (`--resume`, `--system`).
    public var conversation: ChatConversation

    public init(
        modelPath: String? = nil, tokenizerPath: String? = nil, quant: String? = nil, contextLength: Int? = nil,
        kvType: KVCacheType = .f16, chatTemplatePath: String? = nil, parameters: GenerationParameters = GenerationParameters(),
        conversation: ChatConversation = ChatConversation()
    ) {
        self.conversation = conversation
        self.kvType = kvType
        self.modelPath = modelPath
        self.tokenizerPath = tokenizerPath
        self.quant = quant
        self.contextLength = contextLength
        self.chatTemplatePath = chatTemplatePath
        self.parameters = parameters
    }

    /// The default KV cache size: enough for a long chat, and small enough that a model
    /// with a 128K context does not reserve gigabytes for it.
    public static let defaultContextCap = 4096
}

/// Where loading is, for a progress bar: `completed` of `total` steps done, `label` says
/// what runs now.
public struct ChatLoadProgress: Sendable, Equatable {
    public var completed: Int
    public var total: Int
    public var label: String
}

extension ProgressDisplay {
    /// Shows a loading step as `loading [####....] 2/5 opening the model`.
    public func show(_ p: ChatLoadProgress) {
        guard p.total > 0 else { return }
        bar("loading", done: p.completed, of: p.total, suffix: p.label)
    }
}

/// A chat ready to go and what the banner says about it.
public struct ChatSetup: Sendable {
    public let engine: ChatEngine
    /// The model as the person named it (or "built-in default model").
    public let modelName: String
    public let loadSeconds: Double

    /// Opens the model (converting it per `quant`), its tokenizer and chat template, and
    /// allocates the KV cache, reporting each step to `progress` before it starts and once
    /// more when all are done. Errors name the file and what is wrong with it.
    public static func load(_ options: ChatSetupOptions, pool: ThreadPool, progress: (ChatLoadProgress) -> Void = { _ in }) throws -> ChatSetup {
        let loadOptions = ModelLoadOptions(
            modelPath: options.modelPath, tokenizerPath: options.tokenizerPath, quant: options.quant, kvType: options.kvType,
            chatTemplate: options.chatTemplatePath.map { .file($0) } ?? .tokenizers)
        // The pipeline's steps, then the cache.
        let total = ModelPipeline.stepCount(loadOptions) + 1
        var done = 0
        func step(_ label: String) {
            progress(ChatLoadProgress(completed: done, total: total, label: label))
            done += 1
        }
        let prepared = try ModelPipeline.load(loadOptions, pool: pool, progress: step)
        let model = prepared.model, tokenizer = prepared.tokenizer, spec = prepared.spec
        try options.parameters.validate(vocabularySize: model.config.vocabSize)
        let format = try prepared.chatFormat ?? ChatPromptFormat.forTokenizer(tokenizer, templateFile: options.chatTemplatePath)
        let maximum = model.config.contextLength
        let context = options.contextLength ?? min(maximum, ChatSetupOptions.defaultContextCap)
        guard context >= 2, context <= maximum else { throw ChatError.invalidContext(requested: context, modelMaximum: maximum) }
        let cacheStart = ContinuousClock().now
        step("allocating the KV cache (\(context) positions)")
        let session = try GenerationSession(
            model: model, tokenizer: tokenizer, contextLength: context, pool: pool, kvType: options.kvType)
        progress(ChatLoadProgress(completed: total, total: total, label: "ready"))

        let name = options.modelPath.map { URL(fileURLWithPath: $0).lastPathComponent } ?? "built-in default model (\(DefaultModel.preset.rawValue))"
        return ChatSetup(
            engine: ChatEngine(session: session, format: format, parameters: options.parameters, conversation: options.conversation,
                inputs: [options.modelPath ?? model.source.path, options.tokenizerPath, options.chatTemplatePath].compactMap { $0 }),
            modelName: name + (spec.map { " as \($0.name)" } ?? ""), loadSeconds: prepared.seconds + (ContinuousClock().now - cacheStart).seconds)
    }

    /// The first lines a chat prints: what runs and how to drive it.
    public var banner: String {
        let e = engine
        return "chat with \(modelName): \(e.format.summary); context \(e.contextLength) positions, "
            + "replies up to \(e.parameters.maxTokens) tokens (loaded in \(String(format: "%.2f", loadSeconds)) s)\n"
            + "type a message and press Enter; /help lists the commands; Ctrl-C stops a reply; Ctrl-D exits\n"
    }
}
