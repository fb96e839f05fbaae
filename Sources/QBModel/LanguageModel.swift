import QBFormats
import QBKernels

/// Which logits a forward call returns.
public enum LogitsRequest: Sendable {
    /// None (prefill of a prompt prefix).
    case none
    /// The last position's (generation).
    case last
    /// Every position's, `[count][vocab]` (evaluation and oracle tests).
    case all
}

/// What every model holds whatever its architecture: config, rotary embedding, weights,
/// where it came from, and the token ids it declares.
public struct ModelParts: Sendable {
    public var config: TransformerConfig
    public var rope: Rope
    public var weights: ModelWeights
    public var source: ModelSource
    public var stopTokens: [Int32]
    public var bosToken: Int32?

    public init(
        config: TransformerConfig, rope: Rope, weights: ModelWeights, source: ModelSource, stopTokens: [Int32],
        bosToken: Int32?
    ) {
        self.config = config
        self.rope = rope
        self.weights = weights
        self.source = source
        self.stopTokens = stopTokens
        self.bosToken = bosToken
    }
}

/// A decoder-only language model of any supported architecture: what generation, the
/// runner, chat and the command line use. Immutable and shareable; all per-request state
/// lives in an `InferenceState`.
///
/// An architecture supplies its layer table (`Architecture`) and its forward pass over one
/// chunk of positions (`forwardChunk`), built from the shared steps in `TransformerSteps`;
/// chunking, checks, quantizing and repacking are shared here.
public protocol LanguageModel: AnyObject, Sendable {
    /// The architecture this model type implements.
    static var architecture: Architecture { get }
    var parts: ModelParts { get }
    /// Checks that `parts` hold what this architecture's forward pass reads.
    init(parts: ModelParts) throws
    /// One chunk of at most `state.maxBatch` positions, appended to the cache; nil when
    /// `isCancelled` fired. Call `forward`, which checks its input and chunks it.
    func forwardChunk(
        _ tokens: [Int32], state: InferenceState, logits: LogitsRequest, isCancelled: () -> Bool
    ) -> [Float]?
}

extension LanguageModel {
    public var architecture: Architecture { Self.architecture }
    public var config: TransformerConfig { parts.config }
    public var rope: Rope { parts.rope }
    public var weights: ModelWeights { parts.weights }
    public var source: ModelSource { parts.source }
    /// Token ids that end a generation, as the model declares them.
    public var stopTokens: [Int32] { parts.stopTokens }
    /// The beginning-of-sequence id the model was trained with, if it declares one.
    public var bosToken: Int32? { parts.bosToken }

    /// The same architecture over other weights (quantized, repacked).
    public func replacing(weights: ModelWeights, source: ModelSource? = nil) throws -> Self {
        var p = parts
        p.weights = weights
        if let source { p.source = source }
        return try Self(parts: p)
    }

    /// A fresh state (KV cache and activations) for a context of `contextLength` positions.
    /// A q8_0 cache falls back to f16 when the head dimension is not a multiple of 32.
    /// `maxBatch` bounds the positions one forward step processes at once (prefill chunks):
    /// larger chunks dequantize each weight tile fewer times; the activations cost
    /// `maxBatch` x (4 x hidden + 2 x ffn) floats.
    public func makeState(
        contextLength: Int, pool: ThreadPool, maxBatch: Int = 512, kvType: KVCacheType = .f32
    ) -> InferenceState {
        let type = kvType.fits(headDim: config.headDimension) ? kvType : .f16
        return InferenceState(config: config, contextLength: contextLength, maxBatch: maxBatch, pool: pool, kvType: type)
    }

    /// Runs `tokens` through the model at the positions following those already in
    /// `state`'s cache, appends their keys and values, and returns the logits asked for.
    /// Long inputs are processed in chunks of `state.maxBatch` positions.
    ///
    /// `isCancelled` is polled before every layer of every chunk; when it returns true the
    /// call throws `ForwardCancelled`. The cache then holds exactly the chunks that
    /// completed (`state.cache.length` says how many positions), so it stays usable.
    public func forward(
        _ tokens: [Int32], state: InferenceState, logits request: LogitsRequest = .last,
        isCancelled: () -> Bool = { false }
    ) throws -> [Float] {
        let vocab = config.vocabSize
        for t in tokens where t < 0 || Int(t) >= weights.embedding.rows {
            throw ModelError.invalidToken(id: Int(t), vocabularySize: weights.embedding.rows)
        }
        let needed = state.cache.length + tokens.count
        guard needed <= state.cache.capacity else {
            throw ModelError.contextFull(needed: needed, capacity: state.cache.capacity)
        }
        var result: [Float] = []
        if request == .all { result.reserveCapacity(tokens.count * vocab) }
        let origin = state.cache.length
        var start = 0
        while start < tokens.count {
            let end = min(tokens.count, start + state.maxBatch)
            let chunk = Array(tokens[start..<end])
            let isLast = end == tokens.count
            let want: LogitsRequest = request == .all ? .all : (isLast ? request : .none)
            guard let out = forwardChunk(chunk, state: state, logits: want, isCancelled: isCancelled) else {
                throw ForwardCancelled(processed: start)
            }
            // Cheap: one pass over the logits. Only when it fails is the pass run again,
            // tracing every layer, to name where the values first went wrong.
            if !out.withUnsafeBufferPointer(Ops.allFinite) {
                throw traceNonFinite(tokens, state: state, origin: origin)
            }
            // Logits from the last chunk alone are the result as they are (a row of Gemma 3's
            // took a 1 MiB copy a token); those of several chunks gather in the reserved array.
            if request == .all || isLast { if isLast && result.isEmpty { result = out } else { result += out } }
            start = end
        }
        return result
    }

    /// Runs `tokens` again from cache position `origin` with the per-layer check on, finds
    /// the first step whose output is not finite, and leaves the cache at `origin`.
    func traceNonFinite(_ tokens: [Int32], state: InferenceState, origin: Int) -> NonFiniteLogits {
        state.cache.truncate(to: origin)
        state.trace = NonFiniteTrace()
        defer {
            state.trace = nil
            state.cache.truncate(to: origin)
        }
        var start = 0
        var found: String?
        while start < tokens.count && found == nil {
            let end = min(tokens.count, start + state.maxBatch)
            state.trace?.positionOffset = origin + start
            let out = forwardChunk(Array(tokens[start..<end]), state: state, logits: .all, isCancelled: { false }) ?? []
            found = state.trace?.first
            if found == nil && !out.withUnsafeBufferPointer(Ops.allFinite) { found = "the final norm and output head (the hidden states were finite)" }
            start = end
        }
        return NonFiniteLogits(
            model: source.path, layers: config.numHiddenLayers, place: found ?? "a step that did not repeat (the values are not reproducible)")
    }
}

/// A forward pass that produced NaN or infinite logits: the model's weights (or its
/// configuration) are broken. Names the first place the values went wrong.
public struct NonFiniteLogits: Error, CustomStringConvertible, Sendable {
    public let model: String
    public let layers: Int
    /// "layer 3 (of 16) at position 0", "the token embedding of id 5", ...
    public let place: String
    public var description: String {
        "\(model): the model computes NaN or infinite values, first in \(place); its weights are probably corrupt"
    }
}

/// Where a traced forward pass first saw a non-finite activation.
struct NonFiniteTrace {
    var positionOffset = 0
    var first: String?
}

/// One batched decode step: row t of the step is the next position of the sequence whose
/// cache is `caches[t]`, at `positions[t]` (its cache's length).
struct DecodeBatch {
    let caches: [KVCache]
    let positions: [Int]
}

extension LanguageModel {
    /// One decode step of several sequences at once (continuous batching): `tokens[t]` is
    /// appended to `states[t]`'s cache at its next position, and the result holds each
    /// sequence's logits (`[count][vocab]`). The products read every weight once for all
    /// rows (`Linear.matvecRows`), each row's arithmetic that of decode's single row, so
    /// sequence t's logits are bitwise those of
    /// `forward([tokens[t]], state: states[t])` alone. Attention runs per sequence over its
    /// own cache. `scratch` supplies the activations of the batch (its `maxBatch` at least
    /// `tokens.count`; its own cache is not touched) and the worker pool.
    public func forwardBatch(
        _ tokens: [Int32], states: [InferenceState], scratch: InferenceState, isCancelled: () -> Bool = { false }
    ) throws -> [[Float]] {
        guard tokens.count == states.count else {
            throw ModelError.invalidField(
                path: "batch", field: "states", reason: "\(tokens.count) tokens for \(states.count) sequences")
        }
        guard !tokens.isEmpty else { return [] }
        guard tokens.count <= scratch.maxBatch else {
            throw ModelError.invalidField(
                path: "batch", field: "size", reason: "\(tokens.count) sequences, scratch for \(scratch.maxBatch)")
        }
        for t in tokens where t < 0 || Int(t) >= weights.embedding.rows {
            throw ModelError.invalidToken(id: Int(t), vocabularySize: weights.embedding.rows)
        }
        for s in states where s.cache.length >= s.cache.capacity {
            throw ModelError.contextFull(needed: s.cache.length + 1, capacity: s.cache.capacity)
        }
        let caches = states.map(\.cache)
        guard Set(caches.map { ObjectIdentifier($0) }).count == caches.count else {
            throw ModelError.invalidField(path: "batch", field: "states", reason: "a sequence appears twice")
        }
        scratch.decodeBatch = DecodeBatch(caches: caches, positions: caches.map(\.length))
        defer { scratch.decodeBatch = nil }
        guard let out = forwardChunk(tokens, state: scratch, logits: .all, isCancelled: isCancelled) else {
            throw ForwardCancelled(processed: 0)
        }
        let vocab = config.vocabSize
        // Each sequence's logits are copied out on the pool: at 8 sequences of a 128K
        // vocabulary the copy is 4 MB, which the caller alone took 0.4 ms a step over (1% of
        // a two-thread step, with the other thread idle).
        var rows = [[Float]](repeating: [], count: tokens.count)
        out.withUnsafeBufferPointer { src in
            rows.withUnsafeMutableBufferPointer { dst in
                scratch.pool.parallelFor(tokens.count) { range, _ in
                    for t in range { dst[t] = Array(src[(t * vocab)..<((t + 1) * vocab)]) }
                }
            }
        }
        return rows
    }
}

/// Thrown by `LanguageModel.forward` when its `isCancelled` check fires. `processed`
/// tokens of the call's input made it into the cache.
public struct ForwardCancelled: Error, Equatable {
    public let processed: Int
}

/// Per-request state of a forward pass: the KV cache and activation buffers for up to
/// `maxBatch` positions at a time, allocated once.
public final class InferenceState: @unchecked Sendable {
    public let cache: KVCache
    public let pool: ThreadPool
    public let maxBatch: Int
    /// Set by `forwardBatch` for the duration of one batched decode step.
    var decodeBatch: DecodeBatch?
    /// The kernel batched decode steps with this state as scratch run interleaved Q4_0 on:
    /// the engine's choice unless a benchmark sets the earlier four-row kernel to time the
    /// two side by side (`quantbench serve --bench-batch`).
    public var batchKernel: Linear.BatchKernel = .best
    let x, xb, q, k, v, att, hb, hb2, cos, sin: FloatBuffer
    /// RoPE angles of the sliding-window layers, for configs whose windowed layers have a
    /// RoPE base of their own (Gemma 3); empty otherwise.
    let localCos, localSin: FloatBuffer
    /// Set only while `forward` re-runs a pass to find where non-finite values begin.
    var trace: NonFiniteTrace?

    init(config c: TransformerConfig, contextLength: Int, maxBatch: Int, pool: ThreadPool, kvType: KVCacheType) {
        self.pool = pool
        // A chunk never needs more positions than the context holds.
        self.maxBatch = max(1, min(maxBatch, contextLength))
        let b = self.maxBatch
        cache = KVCache(
            layers: c.numHiddenLayers, kvHeads: c.kvHeads, headDim: c.headDimension, capacity: contextLength, type: kvType)
        x = FloatBuffer(count: b * c.hiddenSize)
        xb = FloatBuffer(count: b * max(c.hiddenSize, c.qDim))
        q = FloatBuffer(count: b * c.qDim)
        k = FloatBuffer(count: b * c.kvDim)
        v = FloatBuffer(count: b * c.kvDim)
        att = FloatBuffer(count: b * c.qDim)
        hb = FloatBuffer(count: b * c.intermediateSize)
        hb2 = FloatBuffer(count: b * c.intermediateSize)
        cos = FloatBuffer(count: b * c.headDimension / 2)
        sin = FloatBuffer(count: b * c.headDimension / 2)
        let local = c.localRopeTheta == nil ? 0 : b * c.headDimension / 2
        localCos = FloatBuffer(count: local)
        localSin = FloatBuffer(count: local)
    }

    /// Bytes of activation scratch (excluding the KV cache), for the memory breakdown.
    public var scratchBytes: Int {
        [x, xb, q, k, v, att, hb, hb2, cos, sin, localCos, localSin].reduce(0) { $0 + $1.count * 4 }
    }
}
