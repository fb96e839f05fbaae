import QBKernels

/// Keys and values of every position processed so far, sized to the context asked for
/// (not the model's maximum). Layout `[layer][kv head][position][head dim]`, so one head's
/// keys are contiguous and attention at depth streams them in order.
public final class KVCache: @unchecked Sendable {
    public let layers: Int
    public let kvHeads: Int
    public let headDim: Int
    public let capacity: Int
    /// Positions filled.
    public internal(set) var length: Int = 0
    private let storage: FloatBuffer

    public init(layers: Int, kvHeads: Int, headDim: Int, capacity: Int) {
        self.layers = layers
        self.kvHeads = kvHeads
        self.headDim = headDim
        self.capacity = capacity
        storage = FloatBuffer(count: layers * 2 * kvHeads * capacity * headDim, zeroed: false)
    }

    public var byteCount: Int { storage.count * 4 }

    @inline(__always) public func keys(layer: Int, head: Int) -> UnsafeMutablePointer<Float> {
        storage.pointer + ((layer * 2) * kvHeads + head) * capacity * headDim
    }

    @inline(__always) public func values(layer: Int, head: Int) -> UnsafeMutablePointer<Float> {
        storage.pointer + ((layer * 2 + 1) * kvHeads + head) * capacity * headDim
    }

    /// Makes this cache hold `source`'s first `count` positions (a fork of a conversation
    /// at an earlier turn starts from the shared prefix without recomputing it).
    public func copyPrefix(from source: KVCache, count: Int) throws {
        guard source.layers == layers, source.kvHeads == kvHeads, source.headDim == headDim else {
            throw ModelError.invalidField(path: "KV cache", field: "shape", reason: "caches of different models")
        }
        guard count >= 0, count <= source.length, count <= capacity else {
            throw ModelError.contextFull(needed: count, capacity: min(capacity, source.length))
        }
        for l in 0..<layers {
            for h in 0..<kvHeads {
                keys(layer: l, head: h).update(from: source.keys(layer: l, head: h), count: count * headDim)
                values(layer: l, head: h).update(from: source.values(layer: l, head: h), count: count * headDim)
            }
        }
        length = count
    }

    /// Forgets every position from `length` on (a later turn or fork re-extends from there).
    public func truncate(to newLength: Int) {
        length = max(0, min(length, newLength))
    }
}
