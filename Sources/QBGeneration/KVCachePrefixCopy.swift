import QBModel
import QBText

/// Gives a fresh `InferenceState` the first positions of another's KV cache, for forks.
///
/// `KVCache` exposes its storage (`keys(layer:head:)`, `values(layer:head:)`, layout
/// `[layer][kv head][position][head dim]`, `capacity` positions per head) but not a way to
/// mark positions filled: `length` only grows through the forward pass. So the target's
/// length is set by running the ids through the model once, and then every position is
/// overwritten with the source's keys and values, which makes the fork's cache bitwise
/// the parent's (a recomputation alone could differ in the last bits, since batched
/// prefill and single-step decode round differently). When `KVCache` gains a public way
/// to set its length (or to copy a prefix), the forward call here goes away.
enum KVCachePrefixCopy {
    static func fill(_ target: InferenceState, from source: InferenceState, tokens: [TokenID], model: LlamaModel) throws {
        let count = tokens.count
        target.cache.truncate(to: 0)
        guard count > 0 else { return }
        _ = try model.forward(tokens, state: target, logits: .none)
        copyPositions(from: source.cache, to: target.cache, count: count)
    }

    /// Copies positions `0..<count` of every layer and KV head.
    static func copyPositions(from source: KVCache, to target: KVCache, count: Int) {
        let n = min(count, source.length, target.capacity) * source.headDim
        guard n > 0 else { return }
        for layer in 0..<source.layers {
            for head in 0..<source.kvHeads {
                target.keys(layer: layer, head: head).update(from: source.keys(layer: layer, head: head), count: n)
                target.values(layer: layer, head: head).update(from: source.values(layer: layer, head: head), count: n)
            }
        }
    }
}
