import CQBKernels
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
        pages = PageBuffer(bytes: byteSize)
        storage = pages.pointer
    }

    public var byteCount: Int { byteSize }

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
        switch type {
        case .f32:
            k.copyMemory(from: key, byteCount: rowBytes)
            v.copyMemory(from: value, byteCount: rowBytes)
        case .f16:
            qb_store_kv_f16(key, k.assumingMemoryBound(to: UInt16.self), Int64(headDim))
            qb_store_kv_f16(value, v.assumingMemoryBound(to: UInt16.self), Int64(headDim))
        case .q8_0:
            qb_store_kv_q8_0(key, k, Int64(headDim))
            qb_store_kv_q8_0(value, v, Int64(headDim))
        }
    }

    /// Attention of one query head over the first `count` positions of KV head `head`.
    @inline(__always) func attend(
        layer: Int, head: Int, query: UnsafePointer<Float>, count: Int, scale: Float,
        scores: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>
    ) {
        let k = keyRows(layer: layer, head: head), v = valueRows(layer: layer, head: head)
        switch type {
        case .f32:
            Ops.attentionHead(
                q: query, keys: k.assumingMemoryBound(to: Float.self), values: v.assumingMemoryBound(to: Float.self),
                count: count, headDim: headDim, scale: scale, scores: scores, out: out)
        case .f16:
            qb_attention_head_f16(
                query, k.assumingMemoryBound(to: UInt16.self), v.assumingMemoryBound(to: UInt16.self),
                Int64(count), Int64(headDim), scale, scores, out)
        case .q8_0:
            qb_attention_head_q8_0(query, k, v, Int64(count), Int64(headDim), scale, scores, out)
        }
    }

    /// Attention of the `group` query heads that share KV head `head` (queries and outputs
    /// `group` x headDim, contiguous) over its first `count` positions; `scores` holds
    /// group x count floats. Narrow caches widen each cached row once for the whole group.
    @inline(__always) public func attendGroup(
        layer: Int, head: Int, queries: UnsafePointer<Float>, group: Int, count: Int, scale: Float,
        scores: UnsafeMutablePointer<Float>, out: UnsafeMutablePointer<Float>
    ) {
        if type == .f32 || headDim > 512 || headDim % 32 != 0 {
            for g in 0..<group {
                attend(
                    layer: layer, head: head, query: queries + g * headDim, count: count, scale: scale,
                    scores: scores + g * count, out: out + g * headDim)
            }
            return
        }
        qb_attention_group(
            type == .f16 ? Int32(QB_F16) : Int32(QB_Q8_0), queries, keyRows(layer: layer, head: head), valueRows(layer: layer, head: head),
            Int64(count), Int64(headDim), Int64(group), scale, scores, out)
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
