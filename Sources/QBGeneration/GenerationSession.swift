import QBKernels
import QBModel
import QBSupport
import QBText

/// A model with its own KV cache, serving one request at a time.
///
/// The session owns an `InferenceState` (cache and activations, not safe to share) and
/// never lets it out; requests run one after another in the order they are submitted. The
/// cache outlives requests: a prompt that starts with the ids already in it (a follow-up
/// turn that repeats the conversation so far) only prefills what is new. `fork()` gives an
/// independent session that starts from the same cache contents.
///
/// Cancellation: `cancel()`, cancelling the task that consumes a stream, or dropping the
/// stream ends the running request within one layer of the forward pass (prefill) or one
/// decode step. The cache keeps every position that was completed, so the session is
/// usable at once and a retry reuses them.
///
/// A request runs synchronously on the actor (the forward pass does not suspend), so the
/// session occupies one thread of the cooperative pool while it computes; its
/// `ThreadPool` must not be used by anything else at the same time.
public actor GenerationSession {
    public nonisolated let model: any LanguageModel
    public nonisolated let tokenizer: any Tokenizer
    /// Positions the cache holds: prompt plus generated ids must fit.
    public nonisolated let contextLength: Int
    private let state: InferenceState
    /// The ids whose keys and values fill the cache, in order.
    private var cached: [TokenID] = []
    private let ledger = RequestLedger()
    /// The summary of the most recent request that ran (also one whose stream's consumer
    /// went away before it could read it).
    public private(set) var lastSummary: GenerationSummary?
    private var hooks = Hooks()

    /// Synchronous observers for tests: `onEvent` sees each event as the loop produces it,
    /// `onPoll` sees each cancellation poll (numbered from 1 per request), so tests can
    /// cancel at an exact step or layer instead of after a wall-clock delay.
    struct Hooks: Sendable {
        var onEvent: (@Sendable (GenerationEvent) -> Void)?
        var onPoll: (@Sendable (Int) -> Void)?
    }

    /// A session with an empty cache of `contextLength` positions, computing on `pool`.
    /// `maxBatch` bounds the positions one forward chunk processes (and the activation
    /// memory); cancellation during prefill is polled per layer of each chunk.
    public init(
        model: any LanguageModel, tokenizer: any Tokenizer, contextLength: Int, pool: ThreadPool, maxBatch: Int = 512,
        kvType: KVCacheType = .f16
    ) throws {
        guard contextLength >= 1, contextLength <= model.config.contextLength else {
            throw GenerationError.invalidContextLength(requested: contextLength, modelMaximum: model.config.contextLength)
        }
        self.model = model
        self.tokenizer = tokenizer
        self.contextLength = contextLength
        state = model.makeState(contextLength: contextLength, pool: pool, maxBatch: maxBatch, kvType: kvType)
    }

    private init(
        model: any LanguageModel, tokenizer: any Tokenizer, state: InferenceState, cached: [TokenID]
    ) {
        self.model = model
        self.tokenizer = tokenizer
        contextLength = state.cache.capacity
        self.state = state
        self.cached = cached
    }

    /// The ids currently in the cache (what a follow-up prompt can reuse).
    public var cachedTokens: [TokenID] { cached }

    /// Starts a request and streams its events: `.token` and `.text` as they come, then
    /// `.finished` with the summary, or an error (`GenerationError`,
    /// `SamplingParameterError`, a model error) before anything was generated.
    ///
    /// Cancelling the consuming task or dropping the stream cancels the request; the
    /// stream then ends without `.finished` (`lastSummary` has it).
    public func generate(
        _ prompt: Prompt, parameters: GenerationParameters = GenerationParameters()
    ) -> AsyncThrowingStream<GenerationEvent, any Error> {
        let request = ledger.submit()
        let flag = CancellationFlag()
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: GenerationEvent.self, throwing: (any Error).self)
        continuation.onTermination = { termination in
            if case .cancelled = termination { flag.set() }
        }
        // Inherits this actor: jobs submitted from here run in submission order.
        Task {
            self.runStreamed(request, prompt, parameters, flag: flag, continuation: continuation)
        }
        return stream
    }

    private func runStreamed(
        _ request: UInt64, _ prompt: Prompt, _ parameters: GenerationParameters, flag: CancellationFlag,
        continuation: AsyncThrowingStream<GenerationEvent, any Error>.Continuation
    ) {
        do {
            let summary = try execute(request, prompt, parameters, cancelled: { flag.isSet }) {
                continuation.yield($0)
            }
            continuation.yield(.finished(summary))
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }

    /// Runs a request to the end and returns its text, ids and summary: the same ids and
    /// text `generate` streams. Cancelling the calling task cancels the request (the
    /// result then says `.cancelled`).
    public func collect(
        _ prompt: Prompt, parameters: GenerationParameters = GenerationParameters()
    ) throws -> GenerationResult {
        let request = ledger.submit()
        var text = ""
        let summary = try execute(request, prompt, parameters, cancelled: { Task.isCancelled }) { event in
            if case .text(let piece) = event { text += piece }
        }
        return GenerationResult(text: text, summary: summary)
    }

    /// Cancels the running request and every request submitted before this call. Later
    /// requests are not affected.
    public nonisolated func cancel() {
        ledger.cancelAll()
    }

    /// Empties the cache.
    public func reset() {
        state.cache.truncate(to: 0)
        cached = []
    }

    /// A new session with this one's model, tokenizer and context whose cache holds the
    /// same positions with the same keys and values, so a request on either continues
    /// identically. The fork computes on `pool` (default: a new pool with as many threads
    /// as this session's), since two sessions must not share one pool concurrently.
    public func fork(pool: ThreadPool? = nil) throws -> GenerationSession {
        let forkPool = pool ?? ThreadPool(threads: state.pool.threadCount)
        let forkState = model.makeState(
            contextLength: contextLength, pool: forkPool, maxBatch: state.maxBatch, kvType: state.cache.type)
        try forkState.cache.copyPrefix(from: state.cache, count: cached.count)
        return GenerationSession(model: model, tokenizer: tokenizer, state: forkState, cached: cached)
    }

    func setHooks(_ hooks: Hooks) { self.hooks = hooks }

    /// The filled positions' keys then values, layer by layer and head by head (for tests
    /// that compare caches bit for bit).
    /// The cached key and value bytes (for comparing caches in tests).
    func cacheContents() -> [UInt8] { state.cache.contents() }

    private func execute(
        _ request: UInt64, _ prompt: Prompt, _ parameters: GenerationParameters, cancelled: () -> Bool,
        onEvent: (GenerationEvent) -> Void
    ) throws -> GenerationSummary {
        let hooks = self.hooks, ledger = self.ledger
        var polls = 0
        let summary = try GenerationLoop.run(
            model: model, tokenizer: tokenizer, state: state, cachedTokens: &cached, prompt: prompt,
            parameters: parameters,
            isCancelled: {
                polls += 1
                hooks.onPoll?(polls)
                return cancelled() || ledger.isCancelled(request)
            },
            onEvent: { event in
                onEvent(event)
                hooks.onEvent?(event)
            })
        lastSummary = summary
        return summary
    }
}
