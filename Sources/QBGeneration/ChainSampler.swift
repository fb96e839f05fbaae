import Foundation
import QBText

/// The default sampler: logit bias, penalties, top-k, top-p, min-p, temperature, one draw
/// (see `SamplingParameters` for the order and each stage's definition).
///
/// Every ordering it makes is by (logit descending, id ascending), a total order, so the
/// result never depends on sort stability or hash order. It sorts only what the truncation
/// stages can keep: top-k selects its k with a bounded heap (O(V log k)); min-p bounds the
/// candidates by a logit threshold in one pass; a bare top-p grows a heap selection until
/// the kept mass reaches p. Scratch arrays are allocated once per request.
public struct ChainSampler: TokenSampler {
    public let parameters: SamplingParameters
    private var rng: Xoshiro256StarStar
    /// Occurrence counts for the penalty window; all zero between calls.
    private var counts: [Int32]
    /// Candidate ids; a heap while selecting, then sorted best first.
    private var candidates: [Int32]
    private let bias: [(index: Int, value: Float)]

    public init(_ parameters: SamplingParameters, vocabularySize: Int) {
        self.parameters = parameters
        rng = Xoshiro256StarStar(seed: parameters.seed)
        counts = parameters.hasPenalties ? [Int32](repeating: 0, count: max(vocabularySize, 0)) : []
        candidates = []
        candidates.reserveCapacity(min(max(parameters.topK, 256), max(vocabularySize, 1)))
        // Sorted by id so sums over duplicate entries happen in one fixed order.
        bias = parameters.logitBias.map { (Int($0.token), $0.bias) }.sorted { $0.index < $1.index }
    }

    public mutating func sample(_ logits: inout [Float], history: ArraySlice<TokenID>) -> TokenID {
        guard !logits.isEmpty else { return 0 }
        return logits.withUnsafeMutableBufferPointer { l in
            prepare(l, history: history)
            if parameters.temperature == 0 { return TokenID(Self.argmax(UnsafeBufferPointer(l))) }
            return draw(l)
        }
    }

    /// NaN to -inf (so comparisons are a total order), then bias and penalties in place.
    private mutating func prepare(_ l: UnsafeMutableBufferPointer<Float>, history: ArraySlice<TokenID>) {
        for i in l.indices where l[i].isNaN { l[i] = -.infinity }
        for b in bias where b.index < l.count { l[b.index] += b.value }
        guard parameters.hasPenalties else { return }
        let n = parameters.repeatLastN < 0 ? history.count : min(parameters.repeatLastN, history.count)
        let window = history.suffix(n)
        let repeatPenalty = Float(parameters.repeatPenalty)
        let frequency = Float(parameters.frequencyPenalty), presence = Float(parameters.presencePenalty)
        counts.withUnsafeMutableBufferPointer { c in
            for id in window where id >= 0 && Int(id) < c.count { c[Int(id)] += 1 }
            // Second pass in window order: each distinct id is penalised once, at its first
            // occurrence, and its count reset so the array is clean for the next call.
            for id in window where id >= 0 && Int(id) < c.count && Int(id) < l.count {
                let i = Int(id)
                let count = c[i]
                guard count > 0 else { continue }
                c[i] = 0
                var v = l[i]
                if v <= 0 { v *= repeatPenalty } else { v /= repeatPenalty }
                v -= Float(count) * frequency + presence
                l[i] = v
            }
        }
    }

    /// The first index of the largest value.
    static func argmax(_ l: UnsafeBufferPointer<Float>) -> Int {
        var best = 0
        for i in 1..<l.count where l[i] > l[best] { best = i }
        return best
    }

    private mutating func draw(_ l: UnsafeMutableBufferPointer<Float>) -> TokenID {
        let n = l.count
        let top = Self.argmax(UnsafeBufferPointer(l))
        let maxLogit = l[top]
        // Everything banned: nothing to draw from; the lowest id is as good as any.
        guard maxLogit > -.infinity else { return TokenID(top) }
        let p = parameters
        let minPThreshold: Float = p.minP > 0 ? maxLogit + Float(log(p.minP)) : -.infinity
        let topK = p.topK > 0 ? min(p.topK, n) : n
        let topPActive = p.topP < 1
        let truncating = topK < n || topPActive || p.minP > 0

        // Survivors are candidates[0..<kept], best first (or in id order when nothing truncates).
        var kept: Int
        if !truncating {
            return sampleAll(l, maxLogit: maxLogit)
        } else if topK < n {
            selectTop(topK, l)
            kept = candidates.count
            if topPActive {
                // Top-p normalises over the top-k survivors.
                var z = 0.0
                for id in candidates { z += Self.weight(l[Int(id)], maxLogit) }
                kept = topPCut(l, maxLogit: maxLogit, total: z, upTo: kept)
            }
        } else if p.minP > 0 {
            // Min-p keeps a prefix of the sorted order, so top-p's cut only matters inside it;
            // collecting the threshold's survivors first avoids sorting the vocabulary.
            candidates.removeAll(keepingCapacity: true)
            for i in 0..<n where l[i] >= minPThreshold { candidates.append(Int32(i)) }
            sortCandidates(l)
            kept = candidates.count
            if topPActive {
                kept = topPCut(l, maxLogit: maxLogit, total: Self.totalWeight(l, maxLogit), upTo: kept)
            }
        } else {
            // Bare top-p: select the best m, widen until their mass reaches p.
            let z = Self.totalWeight(l, maxLogit)
            var m = min(n, 256)
            while true {
                selectTop(m, l)
                kept = topPCut(l, maxLogit: maxLogit, total: z, upTo: candidates.count)
                if kept < candidates.count || m == n { break }
                m = min(n, m * 4)
            }
        }
        // Min-p after top-p: a prefix of what is left.
        if p.minP > 0 {
            var k = 0
            while k < kept && l[Int(candidates[k])] >= minPThreshold { k += 1 }
            kept = max(k, 1)
        }
        return sampleCandidates(l, count: max(kept, 1))
    }

    @inline(__always)
    private static func weight(_ logit: Float, _ maxLogit: Float) -> Double {
        exp(Double(logit) - Double(maxLogit))
    }

    private static func totalWeight(_ l: UnsafeMutableBufferPointer<Float>, _ maxLogit: Float) -> Double {
        var z = 0.0
        for v in l { z += weight(v, maxLogit) }
        return z
    }

    /// How many of the sorted candidates top-p keeps: the shortest prefix whose probability
    /// reaches topP (llama.cpp: `cum_sum >= p`), or all `count` if none does.
    private func topPCut(_ l: UnsafeMutableBufferPointer<Float>, maxLogit: Float, total: Double, upTo count: Int) -> Int {
        var cumulative = 0.0
        for k in 0..<count {
            cumulative += Self.weight(l[Int(candidates[k])], maxLogit) / total
            if cumulative >= parameters.topP { return k + 1 }
        }
        return count
    }

    /// Temperature, softmax and one draw over candidates[0..<count], in their order.
    private mutating func sampleCandidates(_ l: UnsafeMutableBufferPointer<Float>, count: Int) -> TokenID {
        let t = parameters.temperature
        let best = Double(l[Int(candidates[0])])
        var z = 0.0
        for k in 0..<count { z += exp((Double(l[Int(candidates[k])]) - best) / t) }
        let target = rng.nextUnitDouble() * z
        var cumulative = 0.0
        for k in 0..<count {
            cumulative += exp((Double(l[Int(candidates[k])]) - best) / t)
            if target < cumulative { return candidates[k] }
        }
        return candidates[count - 1]
    }

    /// Temperature, softmax and one draw over the whole vocabulary, in id order.
    private mutating func sampleAll(_ l: UnsafeMutableBufferPointer<Float>, maxLogit: Float) -> TokenID {
        let t = parameters.temperature, best = Double(maxLogit)
        var z = 0.0
        for v in l { z += exp((Double(v) - best) / t) }
        let target = rng.nextUnitDouble() * z
        var cumulative = 0.0
        var last = 0
        for i in 0..<l.count where l[i] > -.infinity {
            cumulative += exp((Double(l[i]) - best) / t)
            last = i
            if target < cumulative { return TokenID(i) }
        }
        return TokenID(last)
    }

    // MARK: Selection

    /// a ranks before b: higher logit, then lower id.
    @inline(__always)
    private static func before(_ a: Int32, _ b: Int32, _ l: UnsafeMutableBufferPointer<Float>) -> Bool {
        let x = l[Int(a)], y = l[Int(b)]
        return x > y || (x == y && a < b)
    }

    /// candidates = the best `k` ids, sorted best first: a min-heap (worst at the root)
    /// bounded at k over one pass, then heapsort in place.
    private mutating func selectTop(_ k: Int, _ l: UnsafeMutableBufferPointer<Float>) {
        candidates.removeAll(keepingCapacity: true)
        candidates.reserveCapacity(k)
        let n = l.count
        for i in 0..<n {
            let id = Int32(i)
            if candidates.count < k {
                candidates.append(id)
                siftUp(candidates.count - 1, l)
            } else if Self.before(id, candidates[0], l) {
                candidates[0] = id
                siftDown(0, count: k, l)
            }
        }
        // Heapsort: moving the worst to the end each time leaves the array best first.
        var end = candidates.count
        while end > 1 {
            end -= 1
            candidates.swapAt(0, end)
            siftDown(0, count: end, l)
        }
    }

    private mutating func sortCandidates(_ l: UnsafeMutableBufferPointer<Float>) {
        candidates.sort { Self.before($0, $1, l) }
    }

    // Heap order: a parent ranks after (is worse than) its children.
    private mutating func siftUp(_ start: Int, _ l: UnsafeMutableBufferPointer<Float>) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.before(candidates[parent], candidates[i], l) else { break }
            candidates.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int, count: Int, _ l: UnsafeMutableBufferPointer<Float>) {
        var i = start
        while true {
            let left = 2 * i + 1
            guard left < count else { break }
            var worst = left
            let right = left + 1
            if right < count && Self.before(candidates[left], candidates[right], l) { worst = right }
            guard Self.before(candidates[i], candidates[worst], l) else { break }
            candidates.swapAt(i, worst)
            i = worst
        }
    }
}
