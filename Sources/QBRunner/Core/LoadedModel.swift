import Foundation
import QBGeneration
import QBKernels
import QBModel
import QBText

/// A model opened for benchmarking: weights (converted with --quant if asked), tokenizer,
/// how chat prompts are rendered for it, the worker pool it computes on, and what loading
/// cost.
public struct LoadedModel: Sendable {
    public let model: any LanguageModel
    public let tokenizer: any Tokenizer
    public let pool: ThreadPool
    public let load: LoadInfo
    public let info: ModelInfo
    /// The KV cache precision every session and state of the run uses (`--kv-type`;
    /// default f16, the session's and the command line's default).
    public let kvType: KVCacheType
    /// The chat's rendering for this tokenizer (`ChatPromptFormat.forTokenizer`). A template
    /// that does not parse is kept as the error, so only the cases that chat fail on it.
    public let chatFormat: Result<ChatPromptFormat, any Error>

    public init(
        model: any LanguageModel, tokenizer: any Tokenizer, pool: ThreadPool, load: LoadInfo, info: ModelInfo,
        kvType: KVCacheType = .f16
    ) {
        self.model = model
        self.tokenizer = tokenizer
        self.pool = pool
        self.load = load
        self.info = info
        self.kvType = kvType
        chatFormat = Result { try ChatPromptFormat.forTokenizer(tokenizer) }
    }

    /// Opens the model at `modelPath` (the built-in default model when nil) through
    /// `ModelPipeline`, and hashes its files. Load time covers opening,
    /// converting and the tokenizer, not hashing.
    public static func open(
        modelPath: String?, tokenizerPath: String?, quant: String?, threads: Int, kvType: KVCacheType = .f16
    ) throws -> LoadedModel {
        let pool = ThreadPool(threads: threads)
        let peakReset = MemoryStats.resetPeak()
        let prepared = try ModelPipeline.load(
            ModelLoadOptions(modelPath: modelPath, tokenizerPath: tokenizerPath, quant: quant, kvType: kvType), pool: pool)
        let model = prepared.model, tokenizer = prepared.tokenizer, path = prepared.path
        let memory = MemorySnapshot(MemoryStats.current(), peakWasReset: peakReset)
        let hash = try FileHash.model(path: path)
        let tokenizerName = "\(type(of: tokenizer))" + (tokenizerPath.map { " (\($0))" } ?? "")
        return LoadedModel(
            model: model, tokenizer: tokenizer, pool: pool,
            load: LoadInfo(seconds: prepared.seconds, quantizeSeconds: prepared.quantizeSeconds, memory: memory),
            info: ModelInfo(model, hash: hash, tokenizer: tokenizerName), kvType: kvType)
    }

    /// The ids that end a generation: the model's and the tokenizer's.
    public var stopTokenIDs: [TokenID] {
        Array(Set(model.stopTokens).union(tokenizer.eosTokenIDs)).filter { $0 >= 0 && Int($0) < model.config.vocabSize }.sorted()
    }

    /// A state for `contextLength` positions in chunks of `batch` (the engine's default
    /// when nil), with the run's KV cache type.
    public func makeState(contextLength: Int, batch: Int?) -> InferenceState {
        if let b = batch { return model.makeState(contextLength: contextLength, pool: pool, maxBatch: b, kvType: kvType) }
        return model.makeState(contextLength: contextLength, pool: pool, kvType: kvType)
    }

    /// A session likewise.
    public func makeSession(contextLength: Int, batch: Int?) throws -> GenerationSession {
        if let b = batch {
            return try GenerationSession(
                model: model, tokenizer: tokenizer, contextLength: contextLength, pool: pool, maxBatch: b, kvType: kvType)
        }
        return try GenerationSession(model: model, tokenizer: tokenizer, contextLength: contextLength, pool: pool, kvType: kvType)
    }

    /// The bytes the engine accounts for with a cache of `contextLength` positions and
    /// chunks of `batch`, read from a state made for the purpose (its cache is never
    /// touched, so it costs address space, not memory).
    public func memoryBreakdown(contextLength: Int, batch: Int?) -> MemoryBreakdown {
        let state = makeState(contextLength: contextLength, batch: batch)
        return MemoryBreakdown(
            weightsBytes: model.weightMatrixBytes, kvCacheBytes: state.cache.byteCount, scratchBytes: state.scratchBytes)
    }
}
