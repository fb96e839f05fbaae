import Foundation
import XCTest
@testable import QBGeneration
import QBSupport
import QBText

final class ChainSamplerTests: XCTestCase {
    /// Deterministic pseudo-random logits (an LCG, so the test data never changes).
    func logits(_ n: Int, seed: UInt64, scale: Float = 4, ties: Bool = false) -> [Float] {
        var x = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return (0..<n).map { _ in
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let u = Float(x >> 40) / Float(1 << 24)
            // With ties, values are coarse so many logits are exactly equal.
            return ties ? (u * 8).rounded(.down) / 2 : (u - 0.5) * scale
        }
    }

    func sample(_ p: SamplingParameters, _ l: [Float], history: [TokenID] = []) -> TokenID {
        var s = ChainSampler(p, vocabularySize: l.count)
        var copy = l
        return s.sample(&copy, history: history[...])
    }

    func testGreedyIsTheFirstMaximum() {
        XCTAssertEqual(sample(.greedy, [1, 3, 2, 3]), 1)
        XCTAssertEqual(sample(.greedy, [.nan, -1, -1]), 1, "NaN never wins")
        XCTAssertEqual(sample(.greedy, [0, 5, 5]), 1)
    }

    func testPenaltiesAndBiasFollowLlamaCppsFormulas() {
        var p = SamplingParameters(repeatPenalty: 2, repeatLastN: 3, presencePenalty: 0.25, frequencyPenalty: 0.5)
        p.logitBias = [LogitBias(token: 4, bias: 1), LogitBias(token: 4, bias: 0.5)]
        var s = ChainSampler(p, vocabularySize: 5)
        var l: [Float] = [2, -1, 3, 0.5, 0]
        // Window = the last 3 ids: 0, 0, 1 (id 3 falls outside it).
        _ = s.sample(&l, history: [3, 0, 0, 1][...])
        let penalisedPositive: Float = 2 / 2 - 2 * 0.5 - 0.25
        let penalisedNegative: Float = -1 * 2 - 1 * 0.5 - 0.25
        XCTAssertEqual(l, [penalisedPositive, penalisedNegative, 3, 0.5, 1.5])
        // Counts were reset: the same call again penalises from scratch.
        var m: [Float] = [2, -1, 3, 0.5, 0]
        _ = s.sample(&m, history: [3, 0, 0, 1][...])
        XCTAssertEqual(m, l)
        // At temperature 0 the penalised logits decide.
        let q = SamplingParameters(repeatPenalty: 10)
        XCTAssertEqual(sample(q, [5, 4, 1], history: [0]), 1)
        XCTAssertEqual(sample(SamplingParameters(repeatLastN: 0), [5, 4, 1], history: [0]), 0)
    }

    func testBannedTokensAreNeverSampled() {
        var p = SamplingParameters(temperature: 1.5, topK: 0, topP: 1, minP: 0)
        p.logitBias = [LogitBias(token: 0, bias: -.infinity), LogitBias(token: 2, bias: -.infinity)]
        var s = ChainSampler(p, vocabularySize: 4)
        for _ in 0..<500 {
            var l: [Float] = [3, 0, 3, 0]
            let t = s.sample(&l, history: [])
            XCTAssertTrue(t == 1 || t == 3)
        }
    }

    func testTruncationKeepsExactlyTheDocumentedSets() {
        // Probabilities 0.5, 0.3, 0.15, 0.05 at temperature 1.
        let l: [Float] = [0.5, 0.3, 0.15, 0.05].map { Float(log($0)) }
        func support(_ p: SamplingParameters) -> Set<TokenID> {
            var s = ChainSampler(p, vocabularySize: l.count)
            var seen = Set<TokenID>()
            for _ in 0..<3000 {
                var c = l
                seen.insert(s.sample(&c, history: []))
            }
            return seen
        }
        XCTAssertEqual(support(SamplingParameters(temperature: 1, topK: 2, topP: 1, minP: 0)), [0, 1])
        XCTAssertEqual(support(SamplingParameters(temperature: 1, topK: 0, topP: 0.75, minP: 0)), [0, 1])
        XCTAssertEqual(support(SamplingParameters(temperature: 1, topK: 0, topP: 0.85, minP: 0)), [0, 1, 2])
        XCTAssertEqual(support(SamplingParameters(temperature: 1, topK: 0, topP: 1, minP: 0.2)), [0, 1, 2])
        XCTAssertEqual(support(SamplingParameters(temperature: 1, topK: 0, topP: 1, minP: 0)), [0, 1, 2, 3])
        // Top-p after top-k renormalises over the survivors: 0.5/0.8 = 0.625 < 0.7.
        XCTAssertEqual(support(SamplingParameters(temperature: 1, topK: 2, topP: 0.7, minP: 0)), [0, 1])
        XCTAssertEqual(support(SamplingParameters(temperature: 1, topK: 2, topP: 0.6, minP: 0)), [0])
    }

    func testFrequenciesFollowTheTemperedDistribution() {
        let l: [Float] = [0.5, 0.3, 0.2].map { Float(log($0)) }
        for (t, expected) in [(1.0, [0.5, 0.3, 0.2]), (0.5, [25.0 / 38, 9.0 / 38, 4.0 / 38])] {
            var s = ChainSampler(SamplingParameters(temperature: t, topK: 0, topP: 1, minP: 0, seed: 5), vocabularySize: 3)
            var counts = [0, 0, 0]
            let n = 20_000
            for _ in 0..<n {
                var c = l
                counts[Int(s.sample(&c, history: []))] += 1
            }
            for i in 0..<3 {
                // 4 standard deviations of a binomial at n = 20000 is under 0.015.
                XCTAssertEqual(Double(counts[i]) / Double(n), expected[i], accuracy: 0.015, "temperature \(t), id \(i)")
            }
        }
    }

    func testSameSeedSameStreamOtherSeedOtherStream() {
        let l = logits(1000, seed: 1)
        func run(_ seed: UInt64) -> [TokenID] {
            var s = ChainSampler(SamplingParameters(temperature: 1, topK: 0, topP: 0.95, minP: 0, seed: seed), vocabularySize: l.count)
            return (0..<50).map { _ in
                var c = l
                return s.sample(&c, history: [])
            }
        }
        XCTAssertEqual(run(3), run(3))
        XCTAssertNotEqual(run(3), run(4))
    }

    /// The partial selections (bounded heap for top-k, min-p prefilter, widening top-p)
    /// choose exactly what a plain full sort would, draw for draw, ties included.
    func testPartialSelectionMatchesAFullSortReference() {
        let settings: [(topK: Int, topP: Double, minP: Double)] = [
            (40, 0.95, 0.05), (0, 0.95, 0.05), (0, 0.9, 0), (0, 0.999, 0), (7, 1, 0), (0, 1, 0.3), (3000, 0.5, 0),
            (0, 1, 0), (1, 1, 0), (0, 0.5, 0.2), (0, 0.999_999, 0),
        ]
        for n in [1, 5, 1000, 3000] {
            for (i, s) in settings.enumerated() {
                for ties in [false, true] {
                    var l = logits(n, seed: UInt64(n * 31 + i), scale: n > 1000 ? 0.5 : 6, ties: ties)
                    // Banned ids too, away from the maximum.
                    if ties && n > 5 { for b in stride(from: 3, to: n, by: 7) where b != l.firstIndex(of: l.max()!) { l[b] = -.infinity } }
                    let p = SamplingParameters(temperature: 0.8, topK: s.topK, topP: s.topP, minP: s.minP, seed: UInt64(i))
                    var fast = ChainSampler(p, vocabularySize: n)
                    var rng = Xoshiro256StarStar(seed: p.seed)
                    let order = (0..<n).sorted { l[$0] > l[$1] || (l[$0] == l[$1] && $0 < $1) }
                    for step in 0..<(n > 1000 ? 6 : 12) {
                        var c = l
                        let got = fast.sample(&c, history: [])
                        let want = referenceSample(p, l, order, &rng)
                        XCTAssertEqual(got, want, "n \(n), settings \(s), ties \(ties), step \(step)")
                    }
                }
            }
        }
    }

    /// The documented chain written the slow, obvious way.
    /// `order` is every id by (logit descending, id ascending).
    func referenceSample(_ p: SamplingParameters, _ l: [Float], _ order: [Int], _ rng: inout Xoshiro256StarStar) -> TokenID {
        let n = l.count
        let maxLogit = l[order[0]]
        var kept = p.topK > 0 ? Array(order.prefix(p.topK)) : order
        if p.topP < 1 {
            let z = kept.reduce(0.0) { $0 + exp(Double(l[$1]) - Double(maxLogit)) }
            var cumulative = 0.0, cut = kept.count
            for (k, id) in kept.enumerated() {
                cumulative += exp(Double(l[id]) - Double(maxLogit)) / z
                if cumulative >= p.topP { cut = k + 1; break }
            }
            kept = Array(kept.prefix(cut))
        }
        if p.minP > 0 {
            let threshold = maxLogit + Float(log(p.minP))
            kept = Array(kept.prefix { l[$0] >= threshold })
            if kept.isEmpty { kept = [order[0]] }
        }
        // Without top-k or top-p the walk is in id order.
        if !((p.topK > 0 && p.topK < n) || p.topP < 1) { kept.sort() }
        let best = Double(maxLogit)
        let z = kept.reduce(0.0) { $0 + exp((Double(l[$1]) - best) / p.temperature) }
        let target = rng.nextUnitDouble() * z
        var cumulative = 0.0
        for id in kept {
            cumulative += exp((Double(l[id]) - best) / p.temperature)
            if target < cumulative { return TokenID(id) }
        }
        return TokenID(kept[kept.count - 1])
    }

    func testLlama2cTopPBreaksTiesByIndex() {
        // Four equal probabilities, top-p 0.6: cutoff 0.4/3 keeps all four, in index order;
        // the running sum passes 0.6 at the third, so r = coin * 0.75. Seed 42's first coin
        // is 0.33908522 (RandomTests), r = 0.2543: past the first CDF step (0.25), inside
        // the second, so run.c picks index 1.
        var s = Llama2cSampler(.llama2c(temperature: 1, topP: 0.6, seed: 42))
        var l: [Float] = [0, 0, 0, 0]
        XCTAssertEqual(s.sample(&l, history: []), 1)
        // sample_mult over the same distribution: the coin 0.78 lands in the fourth quarter.
        var m = Llama2cSampler(.llama2c(temperature: 1, topP: 1, seed: 42))
        var warm: [Float] = [0, 0, 0, 0]
        _ = m.sample(&warm, history: [])
        var l2: [Float] = [0, 0, 0, 0]
        XCTAssertEqual(m.sample(&l2, history: []), 3)
        var g = Llama2cSampler(.llama2c(temperature: 0, seed: 42))
        var l3: [Float] = [1, 4, 4]
        XCTAssertEqual(g.sample(&l3, history: []), 1)
    }
}
