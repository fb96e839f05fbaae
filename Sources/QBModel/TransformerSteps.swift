import QBKernels

/// The steps decoder-only transformers are built from, over one chunk of `count`
/// positions starting at cache position `start`: each architecture's forward pass is a
/// sequence of these (as mlx-lm's models/ and llama.cpp's graph builders share theirs).
/// Activations flow through the state's buffers: `x` is the residual stream, `xb` the
/// normed input of a block, `q`/`k`/`v`/`att` attention's, `hb`/`hb2` the MLP's.
struct TransformerSteps {
    let config: TransformerConfig
    let rope: Rope
    let weights: ModelWeights
    let s: InferenceState
    let start: Int
    let count: Int
    /// Batched decode (`LanguageModel.forwardBatch`): row t is one position of sequence t,
    /// in its own cache; nil for a chunk of consecutive positions of `s.cache`.
    let batch: DecodeBatch?

    init(config: TransformerConfig, rope: Rope, weights: ModelWeights, state: InferenceState, count: Int) {
        self.config = config
        self.rope = rope
        self.weights = weights
        self.s = state
        self.start = state.cache.length
        self.count = count
        self.batch = state.decodeBatch
    }

    var pool: ThreadPool { s.pool }

    /// The cache position of row `t`.
    @inline(__always) func position(_ t: Int) -> Int { batch?.positions[t] ?? start + t }

    /// The cache row `t` is stored in and attends over.
    @inline(__always) func cache(_ t: Int) -> KVCache { batch?.caches[t] ?? s.cache }

    /// Y[i] = X W[i]ᵀ over the chunk's rows: prefill's products for consecutive positions
    /// (`Linear.matmul`: the tiles, or for a short chunk the batched decode kernels), the
    /// batched decode kernels (`Linear.matvecRows`: each weight block read once for all
    /// rows, each row's arithmetic that of a single row) for a batch of sequences, so each
    /// sequence's logits do not depend on its neighbours.
    func matmul(_ ws: [Matrix], _ x: UnsafePointer<Float>, _ ys: [UnsafeMutablePointer<Float>], rows: Int) {
        if batch != nil {
            Linear.matvecRows(ws, x, ys, count: rows, pool: pool, kernel: s.batchKernel)
        } else {
            Linear.matmul(ws, x, ys, count: rows, pool: pool)
        }
    }

    /// x = the tokens' embedding rows.
    func embed(_ tokens: [Int32]) {
        for (t, id) in tokens.enumerated() {
            weights.embedding.row(Int(id), into: s.x.pointer + t * config.hiddenSize)
        }
    }

    /// While a pass is traced (see `LanguageModel.traceNonFinite`): records `what` as the
    /// first place the residual stream holds a NaN or infinity. Free otherwise.
    func trace(_ what: @autoclosure () -> String) {
        guard s.trace != nil, s.trace?.first == nil else { return }
        let dim = config.hiddenSize
        for t in 0..<count {
            if !Ops.allFinite(UnsafeBufferPointer(start: s.x.pointer + t * dim, count: dim)) {
                let place = "\(what()) at position \((s.trace?.positionOffset ?? 0) + t)"
                s.trace?.first = place
                return
            }
        }
    }

    /// After block `layer`'s output was added to the residual stream.
    func traceLayer(_ layer: Int) { trace("layer \(layer) (of \(config.numHiddenLayers))") }

    /// cos and sin of every position's RoPE angles, shared by all layers.
    func ropeAngles() {
        let hd = config.headDimension
        for t in 0..<count {
            rope.angles(position: position(t), cos: s.cos.pointer + t * hd / 2, sin: s.sin.pointer + t * hd / 2)
        }
    }

    /// The angles of `local`, the RoPE of sliding-window layers (Gemma 3's own base), shared
    /// by those layers; `rotateQK(local: true)` applies them.
    func localRopeAngles(_ local: Rope) {
        let hd = config.headDimension
        for t in 0..<count {
            local.angles(position: position(t), cos: s.localCos.pointer + t * hd / 2, sin: s.localSin.pointer + t * hd / 2)
        }
    }

    /// x *= factor over the chunk (Gemma scales embeddings by sqrt(hidden)).
    func scaleResidual(by factor: Float) {
        Ops.scale(s.x.pointer, by: factor, count: count * config.hiddenSize)
    }

    /// xb = RMSNorm(x) with `weight`, row by row.
    func norm(_ weight: FloatBuffer) {
        rmsnormRows(s.x.pointer, weight, into: s.xb.pointer, rows: count)
    }

    func rmsnormRows(
        _ x: UnsafeMutablePointer<Float>, _ weight: FloatBuffer, into out: UnsafeMutablePointer<Float>, rows: Int
    ) {
        let dim = config.hiddenSize
        for t in 0..<rows {
            Ops.rmsnorm(x + t * dim, weight: weight.pointer, out: out + t * dim, count: dim, eps: config.eps)
        }
    }

    /// q, k, v = the projections of xb, in one pass over the activations.
    func projectQKV(_ layer: LayerWeights) {
        matmul([layer.wq, layer.wk, layer.wv], s.xb.pointer, [s.q.pointer, s.k.pointer, s.v.pointer], rows: count)
    }

    /// q, k, v += their biases (after the product, as transformers adds them).
    func addQKVBiases(q: FloatBuffer, k: FloatBuffer, v: FloatBuffer) {
        Ops.addBias(q.pointer, to: s.q.pointer, rows: count, cols: config.qDim)
        Ops.addBias(k.pointer, to: s.k.pointer, rows: count, cols: config.kvDim)
        Ops.addBias(v.pointer, to: s.v.pointer, rows: count, cols: config.kvDim)
    }

    /// RMSNorm of every query head with `q` and every key head with `k` (weights of one
    /// head's width), in place.
    func normHeads(q: FloatBuffer, k: FloatBuffer) {
        let hd = config.headDimension
        for (buffer, weight, heads) in [(s.q, q, count * config.numAttentionHeads), (s.k, k, count * config.kvHeads)] {
            for h in 0..<heads {
                let row = buffer.pointer + h * hd
                Ops.rmsnorm(row, weight: weight.pointer, out: row, count: hd, eps: config.eps)
            }
        }
    }

    /// RoPE on every query and key head at its position, with the angles of `ropeAngles`
    /// (or of `localRopeAngles` when `local`).
    func rotateQK(local: Bool = false) {
        let c = config, hd = c.headDimension
        let cosines = local ? s.localCos : s.cos, sines = local ? s.localSin : s.sin
        for t in 0..<count {
            let cs = cosines.pointer + t * hd / 2, sn = sines.pointer + t * hd / 2
            rope.apply(s.q.pointer + t * c.qDim, heads: c.numAttentionHeads, cos: cs, sin: sn)
            rope.apply(s.k.pointer + t * c.kvDim, heads: c.kvHeads, cos: cs, sin: sn)
        }
    }

    /// Appends k and v to layer `layer`'s cache.
    func storeKV(layer: Int) {
        let hd = config.headDimension, kvDim = config.kvDim
        for h in 0..<config.kvHeads {
            for t in 0..<count {
                cache(t).store(
                    layer: layer, head: h, position: position(t), key: s.k.pointer + t * kvDim + h * hd,
                    value: s.v.pointer + t * kvDim + h * hd)
            }
        }
    }

    /// Positions of a prefill chunk whose attention is one work item (`attendRows`).
    static let attentionBlock = 8

    /// att = causal grouped-query attention: query head h reads KV head h / (heads /
    /// kvHeads), position t sees positions 0 ... start + t, or with a `window` only the last
    /// `window` of them (p with t - p < window, as transformers' and llama.cpp's sliding
    /// masks). Scores are scaled by `scale`, 1/sqrt(head dim) unless given.
    func attention(layer: Int, scale: Float? = nil, window: Int? = nil) {
        let c = config
        let hd = c.headDimension
        let group = c.numAttentionHeads / c.kvHeads
        let scale = scale ?? 1 / Float(hd).squareRoot()
        let s = self.s, steps = self
        let kvHeads = c.kvHeads
        let capacity = batch?.caches.map(\.capacity).max() ?? s.cache.capacity
        if batch == nil && count > 1 {
            // A prefill chunk: items of `attentionBlock` consecutive positions and one KV
            // head, each cached row widened once for all their queries.
            let block = Self.attentionBlock, blocks = (count + block - 1) / block
            let scratch = Attention.rowsScratch(positions: block, firstEnd: start + count, window: window, group: group)
            s.pool.parallelFor(blocks * kvHeads) { range, thread in
                let scores = s.pool.scratch(thread: thread, floats: scratch)
                for item in range {
                    let b = item / kvHeads, kvh = item % kvHeads
                    let t0 = b * block, n = min(block, count - t0)
                    let row = t0 * c.qDim + kvh * group * hd
                    s.cache.attendRows(
                        layer: layer, head: kvh, queries: s.q.pointer + row, queryStride: c.qDim, positions: n,
                        firstEnd: steps.start + t0 + 1, window: window, group: group, scale: scale, scores: scores,
                        out: s.att.pointer + row, outStride: c.qDim)
                }
            }
            return
        }
        // One item per (position, KV head, part of its group): the heads of a part read the
        // cache once.
        let parts = Self.groupParts(group: group, items: count * kvHeads, threads: s.pool.threadCount)
        let heads = group / parts
        s.pool.parallelFor(count * kvHeads * parts) { range, thread in
            let scores = s.pool.scratch(thread: thread, floats: heads * capacity)
            for item in range {
                let t = item / (kvHeads * parts), kvh = item / parts % kvHeads, part = item % parts
                let row = t * c.qDim + (kvh * group + part * heads) * hd
                let end = steps.position(t) + 1
                steps.cache(t).attendGroup(
                    layer: layer, head: kvh, queries: s.q.pointer + row, group: heads,
                    first: Attention.windowFirst(end: end, window: window), count: end, scale: scale, scores: scores,
                    out: s.att.pointer + row)
            }
        }
    }

    /// Parts each KV head's group of query heads is split into for decode: one while the
    /// (position, KV head) items alone keep every thread busy, else as many as the threads
    /// left idle can take (a divisor of the group), so that a model with fewer KV heads than
    /// threads (Gemma 3's one) does not attend on one core. Each head's output is bitwise the
    /// same in any part (`qb_attention_group`: a group's heads share the cache reads, not
    /// their sums), except Q8_0 caches' groups above 16 heads, which are never split.
    static func groupParts(group: Int, items: Int, threads: Int) -> Int {
        guard items > 0, items < threads, group > 1, group <= 16 else { return 1 }
        let wanted = (threads + items - 1) / items
        return (1...min(group, wanted)).last { group % $0 == 0 } ?? 1
    }

    /// x += wo att, or x += RMSNorm(wo att) with `postNorm` (Gemma's norm of the block's output).
    func attentionOutput(_ wo: Matrix, postNorm: FloatBuffer? = nil) {
        matmul([wo], s.att.pointer, [s.xb.pointer], rows: count)
        addToResidual(postNorm: postNorm)
    }

    /// x += down(silu(gate xb) * up xb).
    func swigluMLP(_ layer: LayerWeights) {
        gatedMLP(layer) { Ops.swiglu(gate: $0, up: $1, count: $2) }
        addToResidual(postNorm: nil)
    }

    /// x += RMSNorm(down(gelu_tanh(gate xb) * up xb)) with `postNorm` when given (Gemma's GeGLU).
    func gegluMLP(_ layer: LayerWeights, postNorm: FloatBuffer?) {
        gatedMLP(layer) { Ops.geglu(gate: $0, up: $1, count: $2) }
        addToResidual(postNorm: postNorm)
    }

    /// xb = down(activate(gate xb, up xb)).
    private func gatedMLP(
        _ layer: LayerWeights, _ activate: (UnsafeMutablePointer<Float>, UnsafePointer<Float>, Int) -> Void
    ) {
        matmul([layer.gate, layer.up], s.xb.pointer, [s.hb.pointer, s.hb2.pointer], rows: count)
        // Row by row, the rows shared out: each row is then computed as it is alone (the
        // same vector and tail split), and a batched step does not run it on one core.
        let n = config.intermediateSize, gate = s.hb.pointer, up = s.hb2.pointer
        pool.parallelFor(count) { range, _ in
            for t in range { activate(gate + t * n, up + t * n, n) }
        }
        matmul([layer.down], s.hb.pointer, [s.xb.pointer], rows: count)
    }

    /// x += xb, normed in place first when `postNorm` is given.
    private func addToResidual(postNorm: FloatBuffer?) {
        if let postNorm { rmsnormRows(s.xb.pointer, postNorm, into: s.xb.pointer, rows: count) }
        Ops.add(s.xb.pointer, into: s.x.pointer, count: count * config.hiddenSize)
    }

    /// Marks the chunk's positions as cached.
    func commit() {
        guard let batch else { s.cache.length = start + count; return }
        for (cache, p) in zip(batch.caches, batch.positions) { cache.length = p + 1 }
    }

    /// The final norm and the output head over the positions asked for.
    func logits(_ request: LogitsRequest) -> [Float] {
        let dim = config.hiddenSize
        switch request {
        case .none:
            return []
        case .last:
            rmsnormRows(s.x.pointer + (count - 1) * dim, weights.finalNorm, into: s.xb.pointer, rows: 1)
            return head(rows: 1)
        case .all:
            rmsnormRows(s.x.pointer, weights.finalNorm, into: s.xb.pointer, rows: count)
            return head(rows: count)
        }
    }

    private func head(rows: Int) -> [Float] {
        let vocab = config.vocabSize
        return [Float](unsafeUninitializedCapacity: rows * vocab) { buf, n in
            guard let out = buf.baseAddress else { n = 0; return }
            matmul([weights.output], s.xb.pointer, [out], rows: rows)
            n = rows * vocab
        }
    }
}
