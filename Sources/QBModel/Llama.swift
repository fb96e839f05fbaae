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

/// A Llama model: config, rotary embedding and weights. Immutable and shareable; all
/// per-request state lives in an `InferenceState`.
public final class LlamaModel: Sendable {
    public let config: LlamaConfig
    public let rope: Rope
    public let weights: LlamaWeights
    public let source: ModelSource
    /// Token ids that end a generation, as the model declares them.
    public let stopTokens: [Int32]
    /// The beginning-of-sequence id the model was trained with, if it declares one.
    public let bosToken: Int32?

    public init(
        config: LlamaConfig, ropeStyle: RopeStyle, weights: LlamaWeights, source: ModelSource,
        stopTokens: [Int32], bosToken: Int32?, rope: Rope? = nil
    ) throws {
        self.config = config
        self.rope = try rope ?? config.rope(style: ropeStyle, path: source.path)
        self.weights = weights
        self.source = source
        self.stopTokens = stopTokens
        self.bosToken = bosToken
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
        var start = 0
        while start < tokens.count {
            let end = min(tokens.count, start + state.maxBatch)
            let chunk = Array(tokens[start..<end])
            let isLast = end == tokens.count
            let want: LogitsRequest = request == .all ? .all : (isLast ? request : .none)
            guard let out = forwardChunk(chunk, state: state, logits: want, isCancelled: isCancelled) else {
                throw ForwardCancelled(processed: start)
            }
            if request == .all || isLast { result += out }
            start = end
        }
        return result
    }

    // One chunk, top to bottom as the paper draws it.
    private func forwardChunk(
        _ tokens: [Int32], state s: InferenceState, logits request: LogitsRequest, isCancelled: () -> Bool
    ) -> [Float]? {
        let c = config
        let n = tokens.count
        let dim = c.hiddenSize, hd = c.headDimension
        let pool = s.pool
        let p0 = s.cache.length

        embed(tokens, into: s.x.pointer)
        for t in 0..<n {
            rope.angles(position: p0 + t, cos: s.cos.pointer + t * hd / 2, sin: s.sin.pointer + t * hd / 2)
        }

        for (l, layer) in weights.layers.enumerated() {
            if isCancelled() { return nil }
            // Attention.
            rmsnormRows(s.x.pointer, layer.attentionNorm, into: s.xb.pointer, rows: n)
            Linear.matmul(
                [layer.wq, layer.wk, layer.wv], s.xb.pointer, [s.q.pointer, s.k.pointer, s.v.pointer], count: n,
                pool: pool)
            for t in 0..<n {
                let cs = s.cos.pointer + t * hd / 2, sn = s.sin.pointer + t * hd / 2
                rope.apply(s.q.pointer + t * c.qDim, heads: c.numAttentionHeads, cos: cs, sin: sn)
                rope.apply(s.k.pointer + t * c.kvDim, heads: c.kvHeads, cos: cs, sin: sn)
            }
            storeKV(layer: l, cache: s.cache, keys: s.k.pointer, values: s.v.pointer, start: p0, count: n)
            attention(layer: l, state: s, start: p0, count: n)
            Linear.matmul(layer.wo, s.att.pointer, s.xb.pointer, count: n, pool: pool)
            Ops.add(s.xb.pointer, into: s.x.pointer, count: n * dim)

            // Feed-forward (SwiGLU).
            rmsnormRows(s.x.pointer, layer.ffnNorm, into: s.xb.pointer, rows: n)
            Linear.matmul([layer.gate, layer.up], s.xb.pointer, [s.hb.pointer, s.hb2.pointer], count: n, pool: pool)
            Ops.swiglu(gate: s.hb.pointer, up: s.hb2.pointer, count: n * c.intermediateSize)
            Linear.matmul(layer.down, s.hb.pointer, s.xb.pointer, count: n, pool: pool)
            Ops.add(s.xb.pointer, into: s.x.pointer, count: n * dim)
        }
        s.cache.length = p0 + n

        switch request {
        case .none:
            return []
        case .last:
            rmsnormRows(s.x.pointer + (n - 1) * dim, weights.finalNorm, into: s.xb.pointer, rows: 1)
            return head(s.xb.pointer, rows: 1, pool: pool)
        case .all:
            rmsnormRows(s.x.pointer, weights.finalNorm, into: s.xb.pointer, rows: n)
            return head(s.xb.pointer, rows: n, pool: pool)
        }
    }

    private func embed(_ tokens: [Int32], into x: UnsafeMutablePointer<Float>) {
        for (t, id) in tokens.enumerated() {
            weights.embedding.row(Int(id), into: x + t * config.hiddenSize)
        }
    }

    private func rmsnormRows(
        _ x: UnsafeMutablePointer<Float>, _ weight: FloatBuffer, into out: UnsafeMutablePointer<Float>, rows: Int
    ) {
        let dim = config.hiddenSize
        for t in 0..<rows {
            Ops.rmsnorm(x + t * dim, weight: weight.pointer, out: out + t * dim, count: dim, eps: config.eps)
        }
    }

    private func storeKV(
        layer: Int, cache: KVCache, keys: UnsafePointer<Float>, values: UnsafePointer<Float>, start: Int, count: Int
    ) {
        let hd = config.headDimension, kvDim = config.kvDim
        for h in 0..<config.kvHeads {
            for t in 0..<count {
                cache.store(
                    layer: layer, head: h, position: start + t, key: keys + t * kvDim + h * hd,
                    value: values + t * kvDim + h * hd)
            }
        }
    }

    /// Causal grouped-query attention: query head h reads KV head h / (heads / kvHeads),
    /// position t sees positions 0 ... start + t.
    private func attention(layer: Int, state s: InferenceState, start: Int, count: Int) {
        let c = config
        let hd = c.headDimension
        let group = c.numAttentionHeads / c.kvHeads
        let scale = 1 / Float(hd).squareRoot()
        let cache = s.cache
        let kvHeads = c.kvHeads
        // One item per (position, KV head): the heads of a group read the cache once.
        s.pool.parallelFor(count * kvHeads) { range, thread in
            let scores = s.pool.scratch(thread: thread, floats: group * cache.capacity)
            for item in range {
                let t = item / kvHeads, kvh = item % kvHeads
                let first = t * c.qDim + kvh * group * hd
                cache.attendGroup(
                    layer: layer, head: kvh, queries: s.q.pointer + first, group: group, count: start + t + 1,
                    scale: scale, scores: scores, out: s.att.pointer + first)
            }
        }
    }

    private func head(_ x: UnsafePointer<Float>, rows: Int, pool: ThreadPool) -> [Float] {
        let vocab = config.vocabSize
        return [Float](unsafeUninitializedCapacity: rows * vocab) { buf, count in
            Linear.matmul(weights.output, x, buf.baseAddress!, count: rows, pool: pool)
            count = rows * vocab
        }
    }
}

/// Thrown by `LlamaModel.forward` when its `isCancelled` check fires. `processed` tokens
/// of the call's input made it into the cache.
public struct ForwardCancelled: Error, Equatable {
    public let processed: Int
}

/// Per-request state of a forward pass: the KV cache and activation buffers for up to
/// `maxBatch` positions at a time, allocated once.
public final class InferenceState: @unchecked Sendable {
    public let cache: KVCache
    public let pool: ThreadPool
    public let maxBatch: Int
    let x, xb, q, k, v, att, hb, hb2, cos, sin: FloatBuffer

    init(config c: LlamaConfig, contextLength: Int, maxBatch: Int, pool: ThreadPool, kvType: KVCacheType) {
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
    }

    /// Bytes of activation scratch (excluding the KV cache), for the memory breakdown.
    public var scratchBytes: Int {
        [x, xb, q, k, v, att, hb, hb2, cos, sin].reduce(0) { $0 + $1.count * 4 }
    }
}
