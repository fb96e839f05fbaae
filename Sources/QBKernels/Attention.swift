import CQBKernels

/// Attention over a KV cache of one KV head (`qb_attention.c`): the stores that fill
/// narrow caches and the kernels that read them. Each cache holds rows of `headDim`
/// values laid out `[position][row]`; `Reference.attentionHead` is the plain definition.
public enum Attention {
    /// The narrow element types the cache kernels read and write (f32 rows go through
    /// `Ops.attentionHead`).
    public enum RowType: Sendable {
        /// IEEE half precision, rounded to nearest even.
        case f16
        /// GGML's Q8_0 blocks (an f16 scale and 32 int8 values); `headDim` a multiple of 32.
        case q8_0

        var ggmlID: Int32 { self == .f16 ? Int32(QB_F16) : Int32(QB_Q8_0) }
    }

    /// Converts one row of `headDim` f32 values into `dst` as `type`.
    public static func store(_ src: UnsafePointer<Float>, into dst: UnsafeMutableRawPointer, as type: RowType, headDim: Int) {
        switch type {
        case .f16: qb_store_kv_f16(src, dst.assumingMemoryBound(to: UInt16.self), Int64(headDim))
        case .q8_0: qb_store_kv_q8_0(src, dst, Int64(headDim))
        }
    }

    /// out = softmax(K q · scale) V for one query head over cached rows `first ..< count` of
    /// `type` (`first` > 0: a sliding window; the rows before it take no part). Against Q8_0
    /// rows the query is rounded to Q8_0 first (as GGML does), for integer dot products.
    /// `scores` has room for `count - first` floats.
    public static func head(
        _ type: RowType, q: UnsafePointer<Float>, keys: UnsafeRawPointer, values: UnsafeRawPointer,
        first: Int = 0, count: Int, headDim: Int, scale: Float, scores: UnsafeMutablePointer<Float>,
        out: UnsafeMutablePointer<Float>
    ) {
        switch type {
        case .f16:
            qb_attention_head_f16(
                q, keys.assumingMemoryBound(to: UInt16.self), values.assumingMemoryBound(to: UInt16.self),
                Int64(first), Int64(count), Int64(headDim), scale, scores, out)
        case .q8_0:
            qb_attention_head_q8_0(q, keys, values, Int64(first), Int64(count), Int64(headDim), scale, scores, out)
        }
    }

    /// Whether `group` can take rows of `headDim` values (at most 512, a multiple of 32).
    public static func groupFits(headDim: Int) -> Bool { headDim <= 512 && headDim % 32 == 0 }

    /// The `group` query heads that share one KV head (grouped-query attention), queries and
    /// outputs `group` x `headDim` contiguous, over cached rows `first ..< count` of `type`
    /// (as `head`): each cached row is read once for the whole group. `scores` has room for
    /// `group` x (`count` - `first`) floats; `headDim` must satisfy `groupFits`.
    public static func group(
        _ type: RowType, queries: UnsafePointer<Float>, keys: UnsafeRawPointer, values: UnsafeRawPointer,
        group: Int, first: Int = 0, count: Int, headDim: Int, scale: Float, scores: UnsafeMutablePointer<Float>,
        out: UnsafeMutablePointer<Float>
    ) {
        qb_attention_group(
            type.ggmlID, queries, keys, values, Int64(first), Int64(count), Int64(headDim), Int64(group), scale, scores, out)
    }

    /// `group` for `positions` consecutive positions of a prefill chunk in one call
    /// (`qb_attention_rows`): position i's queries at `queries + i * queryStride`, its
    /// outputs at `out + i * outStride`, over cached rows `max(0, end - window) ..< end`
    /// with end = `firstEnd + i` (no window: from 0). Each cached row is widened once for
    /// all of them; each output is bitwise what `group` gives for its position alone.
    /// `scores` has room for `rowsScratch(...)` floats.
    public static func rows(
        _ type: RowType, queries: UnsafePointer<Float>, queryStride: Int, positions: Int, keys: UnsafeRawPointer,
        values: UnsafeRawPointer, firstEnd: Int, window: Int?, group: Int, headDim: Int, scale: Float,
        scores: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>, outStride: Int
    ) {
        qb_attention_rows(
            type.ggmlID, queries, Int64(queryStride), Int64(positions), keys, values, Int64(firstEnd), Int64(window ?? 0),
            Int64(headDim), Int64(group), scale, scores, out, Int64(outStride))
    }

    /// The floats of `rows`' scores for `positions` positions from `firstEnd`.
    public static func rowsScratch(positions: Int, firstEnd: Int, window: Int?, group: Int) -> Int {
        positions * group * max(1, firstEnd + positions - 1 - windowFirst(end: firstEnd, window: window))
    }

    /// The first cached row a position attending rows `..< end` reads: `end - window` on a
    /// sliding-window layer (never below 0), else 0 (qb_attention.c's `window_first`).
    public static func windowFirst(end: Int, window: Int?) -> Int {
        window.map { max(0, end - $0) } ?? 0
    }
}

extension Ops {
    /// out = softmax(K q · scale) V over cached f32 positions `first ..< count` laid out
    /// `[count][headDim]` (`first` > 0: a sliding window). `scores` has room for
    /// `count - first` floats.
    public static func attentionHead(
        q: UnsafePointer<Float>, keys: UnsafePointer<Float>, values: UnsafePointer<Float>,
        first: Int = 0, count: Int, headDim: Int, scale: Float, scores: UnsafeMutablePointer<Float>,
        out: UnsafeMutablePointer<Float>
    ) {
        qb_attention_head(q, keys, values, Int64(first), Int64(count), Int64(headDim), scale, scores, out)
    }
}
