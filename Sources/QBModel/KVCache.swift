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

    /// Forgets every position from `length` on (a later turn or fork re-extends from there).
    public func truncate(to newLength: Int) {
        length = max(0, min(length, newLength))
    }
}
