import QBSupport
import XCTest
import QBTestSupport
import QBKernels
@testable import QBModel

/// Attention over each cache type against the reference attention over the values the
/// cache actually holds (its rows widened back to f32).
final class KVCacheTests: XCTestCase, SeededKernelTestCase {
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
    func heldQuery(_ q: [Float], type: KVCacheType) throws -> [Float] {
        guard type == .q8_0 else { return q }
        return try Quantizer.quantize(q, rows: 1, cols: q.count, to: .ggml(.q8_0), pool: ThreadPool(threads: 1)).toFloats()
    }

    func testAttentionMatchesReferenceForEveryCacheType() throws {
        try onEveryKernelSet {
            let hd = 64, n = 300
            for type in KVCacheType.allCases {
                let (cache, keys, heldK, heldV) = filledCache(type, headDim: hd, positions: n)
                let q = (0..<hd).map { _ in Float.random(in: -1...1, using: &rng) }
                var scores = [Float](repeating: 0, count: n), out = [Float](repeating: 0, count: hd)
                cache.attend(layer: 0, head: 0, query: q, count: n, scale: 0.125, scores: &scores, out: &out)
                let expected = Reference.attentionHead(q: try heldQuery(q, type: type), keys: heldK, values: heldV, count: n, headDim: hd, scale: 0.125)
                let worst = zip(out, expected).map { abs($0 - $1) }.max()!
                XCTAssertLessThan(worst, 1e-5, type.rawValue)
                // And the held values are the stored ones to the type's precision.
                let err = zip(heldK, keys).map { abs($0 - $1) }.max()!
                XCTAssertLessThanOrEqual(err, type == .f32 ? 0 : (type == .f16 ? 2e-3 : 2.0 / 127), type.rawValue)
            }
        }
    }

    /// Grouped-query attention (each cached row read once for the heads that share it)
    /// against the reference per head, over the held values, for tile remainders, head
    /// sizes with and without a whole number of 64-column blocks, and group sizes 1 to 8.
    func testGroupedAttentionMatchesReferencePerHead() throws {
        try onEveryKernelSet {
            for type in KVCacheType.allCases {
                for (hd, n, group) in [(64, 1, 4), (64, 37, 4), (64, 4100, 4), (256, 40, 4), (96, 16, 2), (128, 9, 1), (128, 40, 3), (32, 300, 3), (160, 48, 8), (64, 33, 17), (256, 25, 3), (512, 20, 2)] {
                    let (cache, _, heldK, heldV) = filledCache(type, headDim: hd, positions: n)
                    let q = (0..<(group * hd)).map { _ in Float.random(in: -1...1, using: &rng) }
                    var scores = [Float](repeating: 0, count: group * n), out = [Float](repeating: .nan, count: group * hd)
                    cache.attendGroup(layer: 0, head: 0, queries: q, group: group, count: n, scale: 0.125, scores: &scores, out: &out)
                    for g in 0..<group {
                        let head = Array(q[(g * hd)..<((g + 1) * hd)]), got = Array(out[(g * hd)..<((g + 1) * hd)])
                        let expected = Reference.attentionHead(
                            q: try heldQuery(head, type: type), keys: heldK, values: heldV, count: n, headDim: hd, scale: 0.125)
                        let worst = zip(got, expected).map { abs($0 - $1) }.max()!
                        XCTAssertLessThan(worst, 1e-5, "\(type.rawValue) hd \(hd) n \(n) head \(g) of \(group)")
                        // And bitwise what the head gets alone, in a group of one: however a kernel
                        // takes a group's heads together, each head's sums are its own, in the
                        // same order. Not for Q8_0 groups of more than 16:
                        // the integer kernels (AVX-512 and AVX2 sets) take 16 heads at most and
                        // larger groups go to the float kernels, which round otherwise.
                        if type == .q8_0 && group > 16 { continue }
                        var one = [Float](repeating: 0, count: n), alone = [Float](repeating: .nan, count: hd)
                        cache.attendGroup(layer: 0, head: 0, queries: head, group: 1, count: n, scale: 0.125, scores: &one, out: &alone)
                        let differing = zip(got, alone).filter { $0.bitPattern != $1.bitPattern }.count
                        XCTAssertEqual(differing, 0, "\(type.rawValue) hd \(hd) n \(n) head \(g) of \(group): \(differing) outputs differ from the head's alone")
                    }
                }
            }
        }
    }

    /// A prefill chunk's attention in one call (`attendRows`: each cached row widened once for
    /// the queries of several positions) is bitwise the group kernel's for each position
    /// alone, on every kernel set and cache type: causal and windowed, windows starting
    /// inside the chunk, tile remainders, head sizes off the 64-column blocks, a first
    /// position that sees one row, strided queries and outputs.
    func testPrefillRowsAreBitwiseTheGroupKernelPerPosition() throws {
        try onEveryKernelSet {
            for type in KVCacheType.allCases {
                for (hd, group, positions, firstEnd, window) in [
                    (256, 4, 8, 93, nil), (64, 4, 8, 40, nil), (256, 4, 8, 90, 37), (128, 3, 5, 36, nil), (160, 8, 3, 46, 20),
                    (64, 17, 2, 32, nil), (96, 2, 7, 1, nil), (64, 4, 8, 10, 3), (32, 1, 6, 300, 137), (256, 4, 1, 17, nil),
                    (512, 2, 3, 23, nil), (64, 4, 8, 203, 150), (64, 4, 4, 22, nil),
                ] as [(Int, Int, Int, Int, Int?)] {
                    let n = firstEnd + positions - 1
                    let (cache, _, heldK, heldV) = filledCache(type, headDim: hd, positions: n)
                    let stride = group * hd + 16
                    let q = (0..<(positions * stride)).map { _ in Float.random(in: -1...1, using: &rng) }
                    let scratch = Attention.rowsScratch(positions: positions, firstEnd: firstEnd, window: window, group: group)
                    var scores = [Float](repeating: .nan, count: scratch), out = [Float](repeating: .nan, count: positions * stride)
                    q.withUnsafeBufferPointer { qp in
                        cache.attendRows(
                            layer: 0, head: 0, queries: qp.baseAddress!, queryStride: stride, positions: positions, firstEnd: firstEnd,
                            window: window, group: group, scale: 0.125, scores: &scores, out: &out, outStride: stride)
                    }
                    let what = "\(type.rawValue) hd \(hd) group \(group) positions \(positions) from \(firstEnd) window \(window.map(String.init) ?? "none")"
                    for i in 0..<positions {
                        let end = firstEnd + i, first = window.map { max(0, end - $0) } ?? 0
                        let queries = Array(q[(i * stride)..<(i * stride + group * hd)])
                        var one = [Float](repeating: .nan, count: group * (end - first)), alone = [Float](repeating: .nan, count: group * hd)
                        cache.attendGroup(
                            layer: 0, head: 0, queries: queries, group: group, first: first, count: end, scale: 0.125, scores: &one, out: &alone)
                        let got = Array(out[(i * stride)..<(i * stride + group * hd)])
                        let differing = zip(got, alone).filter { $0.bitPattern != $1.bitPattern }.count
                        XCTAssertEqual(differing, 0, "\(what): position \(i): \(differing) of \(got.count) outputs differ in their bits")
                        // And against the definition, head by head.
                        for g in 0..<group {
                            let expected = Reference.attentionHead(
                                q: try heldQuery(Array(queries[(g * hd)..<((g + 1) * hd)]), type: type), keys: heldK, values: heldV,
                                count: end, headDim: hd, scale: 0.125, first: first)
                            let worst = zip(got[(g * hd)..<((g + 1) * hd)], expected).map { abs($0 - $1) }.max()!
                            XCTAssertLessThan(worst, 1e-5, "\(what): position \(i) head \(g)")
                        }
                    }
                }
            }
        }
    }

    /// Sliding-window attention (positions first ..< n) over every cache type, grouped and per
    /// head, against the reference over the held values: windows that start inside a 16-row
    /// tile, on its boundary, one row before it, cover the whole cache, or hold one row, so
    /// the tiled Q8_0/f16 loops' remainders fall everywhere. Seeded (printed, replay with
    /// QB_TEST_SEED).
    func testWindowedAttentionMatchesReferenceForEveryCacheType() throws {
        let seed = ProcessInfo.processInfo.environment["QB_TEST_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("testWindowedAttentionMatchesReferenceForEveryCacheType random seed \(seed) (replay: QB_TEST_SEED=\(seed) swift test --filter KVCacheTests)")
        try onEveryKernelSet {
            var seeded = SplitMix64(seed: seed)
            for type in KVCacheType.allCases {
                for (hd, n, group, first) in [
                    (64, 48, 4, 17), (64, 48, 4, 16), (64, 48, 4, 15), (64, 48, 1, 0), (256, 100, 4, 37), (256, 530, 4, 18),
                    (64, 40, 2, 39), (96, 70, 3, 5), (128, 33, 1, 32), (32, 300, 3, 137),
                ] {
                    let (cache, _, heldK, heldV) = filledCache(type, headDim: hd, positions: n)
                    let q = (0..<(group * hd)).map { _ in Float.random(in: -1...1, using: &seeded) }
                    let window = n - first
                    var scores = [Float](repeating: .nan, count: group * window), out = [Float](repeating: .nan, count: group * hd)
                    cache.attendGroup(
                        layer: 0, head: 0, queries: q, group: group, first: first, count: n, scale: 0.125, scores: &scores, out: &out)
                    var single = [Float](repeating: .nan, count: hd), one = [Float](repeating: .nan, count: window)
                    for g in 0..<group {
                        let query = Array(q[(g * hd)..<((g + 1) * hd)])
                        let expected = Reference.attentionHead(
                            q: try heldQuery(query, type: type), keys: heldK, values: heldV, count: n, headDim: hd, scale: 0.125, first: first)
                        let worst = zip(out[(g * hd)..<((g + 1) * hd)], expected).map { abs($0 - $1) }.max()!
                        XCTAssertLessThan(worst, 1e-5, "\(type.rawValue) hd \(hd) n \(n) first \(first) head \(g) of \(group)")
                        cache.attend(layer: 0, head: 0, query: query, first: first, count: n, scale: 0.125, scores: &one, out: &single)
                        let worstSingle = zip(single, expected).map { abs($0 - $1) }.max()!
                        XCTAssertLessThan(worstSingle, 1e-5, "single head \(type.rawValue) hd \(hd) n \(n) first \(first)")
                    }
                }
            }
        }
    }
}
