import QBFormats
import QBKernels

/// The element type of a KV cache (`--kv-type`).
public enum KVCacheType: String, Sendable, CaseIterable, Codable {
    /// Exact; what the oracle tests use.
    case f32
    /// Half the bytes of f32 at no visible cost: the default, as in llama.cpp.
    case f16
    /// GGML's Q8_0 blocks (32 values per f16 scale): about a quarter of f32, for long
    /// contexts. Needs a head dimension that is a multiple of 32. Queries are rounded to
    /// Q8_0 before their dot products with the keys (integer arithmetic, as GGML does).
    case q8_0

    /// Bytes of one cached row of `headDim` values.
    public func rowBytes(headDim: Int) -> Int {
        switch self {
        case .f32: return headDim * 4
        case .f16: return headDim * 2
        case .q8_0: return headDim / 32 * 34
        }
    }

    /// Whether rows of `headDim` values can be stored in this type.
    public func fits(headDim: Int) -> Bool { self != .q8_0 || headDim % 32 == 0 }
}

/// Keys and values of every position processed so far, sized to the context asked for
/// (not the model's maximum). Layout `[layer][kv head][position][row]`, so one head's
/// keys are contiguous and attention at depth streams them in order.
public final class KVCache: @unchecked Sendable {
    public let layers: Int
    public let kvHeads: Int
    public let headDim: Int
    public let capacity: Int
    public let type: KVCacheType
    /// Positions filled.
    public internal(set) var length: Int = 0
    public let rowBytes: Int
    private let storage: UnsafeMutableRawPointer
    /// On transparent huge pages, as the weights: attention at depth streams megabytes of
    /// rows per token, and on 4 KiB pages each page of them cost a TLB miss.
    private let pages: PageBuffer
    private let byteSize: Int

    public init(layers: Int, kvHeads: Int, headDim: Int, capacity: Int, type: KVCacheType = .f32) {
        self.layers = layers
        self.kvHeads = kvHeads
        self.headDim = headDim
        self.capacity = capacity
        self.type = type
        rowBytes = type.rowBytes(headDim: headDim)
        byteSize = max(1, layers * 2 * kvHeads * capacity * rowBytes)
        pages = PageBuffer(bytes: byteSize, for: "the KV cache (\(capacity) positions, \(type))")
        storage = pages.pointer
    }

    public var byteCount: Int { byteSize }

    /// The kernels' row type of a narrow cache (nil for f32, which is stored as is).
    private var narrowType: Attention.RowType? {
        switch type {
        case .f32: return nil
        case .f16: return .f16
        case .q8_0: return .q8_0
        }
    }

    /// The rows of one head's keys (`capacity` rows of `rowBytes`).
    @inline(__always) public func keyRows(layer: Int, head: Int) -> UnsafeMutableRawPointer {
        storage + ((layer * 2) * kvHeads + head) * capacity * rowBytes
    }

    @inline(__always) public func valueRows(layer: Int, head: Int) -> UnsafeMutableRawPointer {
        storage + ((layer * 2 + 1) * kvHeads + head) * capacity * rowBytes
    }

    /// Stores one position's key and value rows (f32) for one head, converting them.
    @inline(__always) public func store(layer: Int, head: Int, position: Int, key: UnsafePointer<Float>, value: UnsafePointer<Float>) {
        let k = keyRows(layer: layer, head: head) + position * rowBytes
        let v = valueRows(layer: layer, head: head) + position * rowBytes
        guard let rowType = narrowType else {
            k.copyMemory(from: key, byteCount: rowBytes)
            v.copyMemory(from: value, byteCount: rowBytes)
            return
        }
        Attention.store(key, into: k, as: rowType, headDim: headDim)
        Attention.store(value, into: v, as: rowType, headDim: headDim)
    }

    /// Attention of one query head over positions `first ..< count` of KV head `head`
    /// (`first` > 0 on a sliding-window layer).
    @inline(__always) func attend(
        layer: Int, head: Int, query: UnsafePointer<Float>, first: Int = 0, count: Int, scale: Float,
        scores: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>
    ) {
        let k = keyRows(layer: layer, head: head), v = valueRows(layer: layer, head: head)
        guard let rowType = narrowType else {
            return Ops.attentionHead(
                q: query, keys: k.assumingMemoryBound(to: Float.self), values: v.assumingMemoryBound(to: Float.self),
                first: first, count: count, headDim: headDim, scale: scale, scores: scores, out: out)
        }
        Attention.head(
            rowType, q: query, keys: k, values: v, first: first, count: count, headDim: headDim, scale: scale,
            scores: scores, out: out)
    }

    /// Attention of the queries of `positions` consecutive positions of a prefill chunk,
    /// the `group` heads of each that share KV head `head` (`queries + i * queryStride`,
    /// outputs at `out + i * outStride`, each `group` x headDim), position i over cached
    /// positions up to `firstEnd + i` (from `firstEnd + i - window` on a sliding-window
    /// layer). Each output is bitwise `attendGroup`'s for its position alone; f16 caches
    /// widen each cached row once for all the positions. `scores` holds
    /// `Attention.rowsScratch(positions:firstEnd:window:group:)` floats.
    func attendRows(
        layer: Int, head: Int, queries: UnsafePointer<Float>, queryStride: Int, positions: Int, firstEnd: Int,
        window: Int?, group: Int, scale: Float, scores: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>,
        outStride: Int
    ) {
        guard let rowType = narrowType, Attention.groupFits(headDim: headDim) else {
            for i in 0..<positions {
                let end = firstEnd + i
                attendGroup(
                    layer: layer, head: head, queries: queries + i * queryStride, group: group,
                    first: Attention.windowFirst(end: end, window: window), count: end, scale: scale, scores: scores,
                    out: out + i * outStride)
            }
            return
        }
        Attention.rows(
            rowType, queries: queries, queryStride: queryStride, positions: positions, keys: keyRows(layer: layer, head: head),
            values: valueRows(layer: layer, head: head), firstEnd: firstEnd, window: window, group: group,
            headDim: headDim, scale: scale, scores: scores, out: out, outStride: outStride)
    }

    /// Attention of the `group` query heads that share KV head `head` (queries and outputs
    /// `group` x headDim, contiguous) over its positions `first ..< count` (`first` > 0 on a
    /// sliding-window layer); `scores` holds group x (count - first) floats. Narrow caches
    /// widen each cached row once for the whole group.
    @inline(__always) public func attendGroup(
        layer: Int, head: Int, queries: UnsafePointer<Float>, group: Int, first: Int = 0, count: Int, scale: Float,
        scores: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>
    ) {
        guard let rowType = narrowType, Attention.groupFits(headDim: headDim) else {
            let n = count - first
            for g in 0..<group {
                attend(
                    layer: layer, head: head, query: queries + g * headDim, first: first, count: count, scale: scale,
                    scores: scores + g * n, out: out + g * headDim)
            }
            return
        }
        Attention.group(
            rowType, queries: queries, keys: keyRows(layer: layer, head: head), values: valueRows(layer: layer, head: head),
            group: group, first: first, count: count, headDim: headDim, scale: scale, scores: scores, out: out)
    }

    /// The cached bytes of the first `count` positions, layer by layer and head by head
    /// (for comparing caches).
    public func contents(count: Int? = nil) -> [UInt8] {
        let n = min(count ?? length, length) * rowBytes
        var out: [UInt8] = []
        out.reserveCapacity(2 * layers * kvHeads * n)
        for l in 0..<layers {
            for h in 0..<kvHeads {
                out.append(contentsOf: UnsafeRawBufferPointer(start: keyRows(layer: l, head: h), count: n))
                out.append(contentsOf: UnsafeRawBufferPointer(start: valueRows(layer: l, head: h), count: n))
            }
        }
        return out
    }

    /// Makes this cache hold `source`'s first `count` positions (a fork of a conversation
    /// at an earlier turn starts from the shared prefix without recomputing it).
    public func copyPrefix(from source: KVCache, count: Int) throws {
        guard source.layers == layers, source.kvHeads == kvHeads, source.headDim == headDim, source.type == type else {
            throw ModelError.invalidField(path: "KV cache", field: "shape", reason: "caches of different models or types")
        }
        guard count >= 0, count <= source.length, count <= capacity else {
            throw ModelError.contextFull(needed: count, capacity: min(capacity, source.length))
        }
        for l in 0..<layers {
            for h in 0..<kvHeads {
                keyRows(layer: l, head: h).copyMemory(from: source.keyRows(layer: l, head: h), byteCount: count * rowBytes)
                valueRows(layer: l, head: h).copyMemory(from: source.valueRows(layer: l, head: h), byteCount: count * rowBytes)
            }
        }
        length = count
    }

    /// Forgets every position from `length` on (a later turn or fork re-extends from there).
    public func truncate(to newLength: Int) {
        length = max(0, min(length, newLength))
    }
}
