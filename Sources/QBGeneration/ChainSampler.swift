import Foundation
import QBKernels
import QBSupport
import QBText

/// The default sampler: logit bias, penalties, top-k, top-p, min-p, temperature, one draw
/// (see `SamplingParameters` for the order and each stage's definition).
///
/// Every ordering it makes is by (logit descending, id ascending), a total order, so the
/// result never depends on sort stability or hash order. It sorts only what the truncation
/// stages can keep: top-k selects its k with a bounded heap (O(V log k)); a top-p over the
/// whole vocabulary first finds, with a histogram of probability mass by logit, a logit
/// above which its prefix must lie and sorts only the ids above it (and above min-p's
/// threshold); min-p alone needs no sort. Scratch buffers are allocated once per request.
public struct ChainSampler: TokenSampler {
    public let parameters: SamplingParameters
    private var rng: Xoshiro256StarStar
    /// Occurrence counts for the penalty window; all zero between calls.
    private var counts: [Int32]
    /// Candidate ids; a heap while selecting, then sorted best first.
    private var candidates: [Int32]
    /// Per-id weights exp(logit - max) (at temperature 1 for top-p, at the draw's
    /// temperature when nothing truncates), allocated on first use.
    private var weights: [Double] = []
    /// Probability mass per logit bucket, for top-p's threshold.
    private var bucketMass: [Double] = []
    private let bias: [(index: Int, value: Float)]
    private static let buckets = 4096

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
            if parameters.temperature == 0 { return TokenID(Ops.argmax(UnsafeBufferPointer(l))) }
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

    private mutating func draw(_ l: UnsafeMutableBufferPointer<Float>) -> TokenID {
        let n = l.count
        let top = Ops.argmax(UnsafeBufferPointer(l))
        let maxLogit = l[top]
        // Everything banned (or an infinite logit, which would make every weight NaN):
        // there is no distribution to draw from, and the first maximum is as good as any.
        guard maxLogit.isFinite else { return TokenID(top) }
        let p = parameters
        let topK = p.topK > 0 ? min(p.topK, n) : n
        let minPThreshold: Float = p.minP > 0 ? maxLogit + Float(log(p.minP)) : -.infinity

        if topK < n {
            selectTop(topK, l)
            var kept = candidates.count
            if p.topP < 1 {
                // Top-p normalises over the top-k survivors.
                var z = 0.0
                for id in candidates { z += Self.weight(l[Int(id)], maxLogit) }
                kept = topPCut(l, maxLogit: maxLogit, total: z, upTo: kept)
            }
            return drawCandidates(l, count: minPCut(l, threshold: minPThreshold, upTo: kept), maxLogit: maxLogit)
        }
        if p.topP < 1 {
            let kept = selectTopP(l, maxLogit: maxLogit, minPThreshold: minPThreshold)
            return drawCandidates(l, count: kept, maxLogit: maxLogit)
        }
        if p.minP > 0 {
            // Min-p alone: the survivors in id order, no sort.
            candidates.removeAll(keepingCapacity: true)
            for i in 0..<n where l[i] >= minPThreshold { candidates.append(Int32(i)) }
            return drawCandidates(l, count: candidates.count, maxLogit: maxLogit)
        }
        return drawAll(l, maxLogit: maxLogit)
    }

    @inline(__always)
    private static func weight(_ logit: Float, _ maxLogit: Float) -> Double {
        exp(Double(logit) - Double(maxLogit))
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

    /// Min-p after top-p: the prefix of the sorted candidates at or above the threshold
    /// (never empty: the maximum always qualifies).
    private func minPCut(_ l: UnsafeMutableBufferPointer<Float>, threshold: Float, upTo count: Int) -> Int {
        var k = 0
        while k < count && l[Int(candidates[k])] >= threshold { k += 1 }
        return max(k, 1)
    }

    /// Top-p over the whole vocabulary, then min-p, leaving the kept prefix sorted in
    /// `candidates` and returning its length. Equal, draw for draw, to sorting every id:
    /// ids are bucketed by logit (monotonically, so each bucket range is a stretch of the
    /// sorted order), the first bucket where the cumulative mass reaches p bounds the
    /// prefix, and only ids up to one bucket past it are sorted and cut exactly. If
    /// rounding leaves that exact sum short of p, everything is sorted instead.
    private mutating func selectTopP(_ l: UnsafeMutableBufferPointer<Float>, maxLogit: Float, minPThreshold: Float) -> Int {
        let n = l.count
        if weights.count != n { weights = [Double](repeating: 0, count: n) }
        let b = Self.buckets
        if bucketMass.count != b { bucketMass = [Double](repeating: 0, count: b) }
        var z = 0.0
        var lowest = maxLogit
        for i in 0..<n {
            let w = Self.weight(l[i], maxLogit)
            weights[i] = w
            z += w
            if l[i] < lowest && l[i] > -.infinity { lowest = l[i] }
        }
        // Logits more than 64 below the maximum share the last bucket: their weights are
        // below 2^-92 of the maximum's.
        let span = min(Double(maxLogit) - Double(lowest), 64)
        let scale = span > 0 ? Double(b) / span : 0
        let top = Double(maxLogit)
        func bucket(_ v: Float) -> Int { min(b - 1, Int((top - Double(v)) * scale)) }

        for k in 0..<b { bucketMass[k] = 0 }
        for i in 0..<n where l[i] > -.infinity { bucketMass[bucket(l[i])] += weights[i] }
        var cumulative = 0.0
        var crossing = b - 1
        for k in 0..<b {
            cumulative += bucketMass[k] / z
            if cumulative >= parameters.topP { crossing = k; break }
        }
        let limit = min(crossing + 1, b - 1)

        candidates.removeAll(keepingCapacity: true)
        var leftOut = false
        for i in 0..<n where l[i] >= minPThreshold && l[i] > -.infinity {
            if bucket(l[i]) <= limit { candidates.append(Int32(i)) } else { leftOut = true }
        }
        sortCandidates(l)
        var kept = topPCut(l, maxLogit: maxLogit, total: z, upTo: candidates.count)
        if kept == candidates.count && leftOut {
            candidates.removeAll(keepingCapacity: true)
            for i in 0..<n where l[i] >= minPThreshold && l[i] > -.infinity { candidates.append(Int32(i)) }
            sortCandidates(l)
            kept = topPCut(l, maxLogit: maxLogit, total: z, upTo: candidates.count)
        }
        return minPCut(l, threshold: minPThreshold, upTo: kept)
    }

    /// Temperature, softmax and one draw over candidates[0..<count], in their order.
    private mutating func drawCandidates(_ l: UnsafeMutableBufferPointer<Float>, count: Int, maxLogit: Float) -> TokenID {
        let t = parameters.temperature, best = Double(maxLogit)
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
    private mutating func drawAll(_ l: UnsafeMutableBufferPointer<Float>, maxLogit: Float) -> TokenID {
        let n = l.count
        if weights.count != n { weights = [Double](repeating: 0, count: n) }
        let t = parameters.temperature, best = Double(maxLogit)
        var z = 0.0
        for i in 0..<n {
            let w = exp((Double(l[i]) - best) / t)
            weights[i] = w
            z += w
        }
        let target = rng.nextUnitDouble() * z
        var cumulative = 0.0
        var last = 0
        for i in 0..<n where weights[i] > 0 {
            cumulative += weights[i]
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
