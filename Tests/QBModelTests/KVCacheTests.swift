import XCTest
import QBTestSupport
import QBKernels
@testable import QBModel

/// Attention over each cache type against the reference attention over the values the
/// cache actually holds (its rows widened back to f32).
final class KVCacheTests: XCTestCase {
    lazy var rng = SeededGenerator(for: "KVCacheTests")

    /// A one-head cache of `type` holding `n` random positions, and the keys and values it
    /// actually holds, widened back to f32 through the same formats' dequantizers.
    func filledCache(_ type: KVCacheType, headDim hd: Int, positions n: Int) -> (cache: KVCache, keys: [Float], heldK: [Float], heldV: [Float]) {
        let cache = KVCache(layers: 1, kvHeads: 1, headDim: hd, capacity: n, type: type)
        let keys = (0..<(n * hd)).map { _ in Float.random(in: -2...2, using: &rng) }
        let values = (0..<(n * hd)).map { _ in Float.random(in: -1...1, using: &rng) }
        for p in 0..<n {
            keys.withUnsafeBufferPointer { k in
                values.withUnsafeBufferPointer { v in
                    cache.store(layer: 0, head: 0, position: p, key: k.baseAddress! + p * hd, value: v.baseAddress! + p * hd)
                }
            }
        }
        let format: WeightFormat = type == .f32 ? .dense(.f32) : (type == .f16 ? .dense(.f16) : .ggml(.q8_0))
        let heldK = Matrix(format: format, rows: n, cols: hd, base: UnsafeRawPointer(cache.keyRows(layer: 0, head: 0)), owner: cache).toFloats()
        let heldV = Matrix(format: format, rows: n, cols: hd, base: UnsafeRawPointer(cache.valueRows(layer: 0, head: 0)), owner: cache).toFloats()
        return (cache, keys, heldK, heldV)
    }

    /// The query a cache of `type` dots with its keys: a Q8_0 cache's kernels round the
    /// query to Q8_0 first (as GGML does for Q8_0 keys), through the format's own quantizer.
    func heldQuery(_ q: [Float], type: KVCacheType) -> [Float] {
        guard type == .q8_0 else { return q }
        return Quantizer.quantize(q, rows: 1, cols: q.count, to: .ggml(.q8_0), pool: ThreadPool(threads: 1)).toFloats()
    }

    func testAttentionMatchesReferenceForEveryCacheType() {
        let hd = 64, n = 300
        for type in KVCacheType.allCases {
            let (cache, keys, heldK, heldV) = filledCache(type, headDim: hd, positions: n)
            let q = (0..<hd).map { _ in Float.random(in: -1...1, using: &rng) }
            var scores = [Float](repeating: 0, count: n), out = [Float](repeating: 0, count: hd)
            cache.attend(layer: 0, head: 0, query: q, count: n, scale: 0.125, scores: &scores, out: &out)
            let expected = Reference.attentionHead(q: heldQuery(q, type: type), keys: heldK, values: heldV, count: n, headDim: hd, scale: 0.125)
            let worst = zip(out, expected).map { abs($0 - $1) }.max()!
            XCTAssertLessThan(worst, 1e-5, type.rawValue)
            // And the held values are the stored ones to the type's precision.
            let err = zip(heldK, keys).map { abs($0 - $1) }.max()!
            XCTAssertLessThanOrEqual(err, type == .f32 ? 0 : (type == .f16 ? 2e-3 : 2.0 / 127), type.rawValue)
        }
    }

    /// Grouped-query attention (each cached row read once for the heads that share it)
    /// against the reference per head, over the held values, for tile remainders, head
    /// sizes with and without a whole number of 64-column blocks, and group sizes 1 to 8.
    func testGroupedAttentionMatchesReferencePerHead() {
        for type in KVCacheType.allCases {
            for (hd, n, group) in [(64, 1, 4), (64, 37, 4), (64, 4100, 4), (96, 16, 2), (128, 9, 1), (128, 40, 3), (32, 300, 3), (160, 48, 8), (64, 33, 17)] {
                let (cache, _, heldK, heldV) = filledCache(type, headDim: hd, positions: n)
                let q = (0..<(group * hd)).map { _ in Float.random(in: -1...1, using: &rng) }
                var scores = [Float](repeating: 0, count: group * n), out = [Float](repeating: .nan, count: group * hd)
                cache.attendGroup(layer: 0, head: 0, queries: q, group: group, count: n, scale: 0.125, scores: &scores, out: &out)
                for g in 0..<group {
                    let expected = Reference.attentionHead(
                        q: heldQuery(Array(q[(g * hd)..<((g + 1) * hd)]), type: type), keys: heldK, values: heldV, count: n, headDim: hd, scale: 0.125)
                    let worst = zip(out[(g * hd)..<((g + 1) * hd)], expected).map { abs($0 - $1) }.max()!
                    XCTAssertLessThan(worst, 1e-5, "\(type.rawValue) hd \(hd) n \(n) head \(g) of \(group)")
                }
            }
        }
    }
}
