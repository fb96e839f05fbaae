/// Classic byte-level BPE training.
///
/// The text is cut into pre-tokens with the Llama 3 split pattern; every pre-token starts as
/// its bytes (ids 0…255 are the bytes themselves); then, repeatedly, the most frequent
/// adjacent pair over all pre-tokens (weighted by how often each pre-token occurs) becomes a
/// new token, ties going to the pair with the lexicographically smallest (left, right) ids.
/// Training stops at `maxMerges` or when no pair occurs at least `minimumFrequency` times.
/// Nothing depends on hash or dictionary order, so the result is the same on every run.
public enum BPETrainer {
    /// One learned merge: `left` followed by `right` becomes `result`.
    public struct Merge: Sendable, Equatable {
        public let left: Int
        public let right: Int
        public let result: Int
    }

    public struct Result: Sendable, Equatable {
        /// The bytes of every token: index = id. Ids 0…255 are the single bytes.
        public let tokens: [[UInt8]]
        /// Merges in the order learned (rank order).
        public let merges: [Merge]

        /// The tokens the first `count` merges create (a merge whose bytes equal an existing
        /// token reuses it, so this can be fewer than `count`).
        public func tokenCount(afterMerges count: Int) -> Int {
            var maxID = 255
            for merge in merges.prefix(count) { maxID = max(maxID, merge.result) }
            return maxID + 1
        }
    }

    /// Trains on `text`.
    public static func train(text: String, maxMerges: Int, minimumFrequency: Int = 2) -> Result {
        // Count pre-tokens, then order them by bytes so that nothing below depends on
        // dictionary iteration order.
        let bytes = Array(text.utf8)
        var pieces: [Range<Int>] = []
        bytes.withUnsafeBufferPointer { Scanner.split(.llama3, $0, 0..<bytes.count, into: &pieces) }
        var counts: [ArraySlice<UInt8>: Int] = [:]
        for piece in pieces { counts[bytes[piece], default: 0] += 1 }
        let ordered = counts.sorted { $0.key.lexicographicallyPrecedes($1.key) }
        var words: [[Int32]] = ordered.map { $0.key.map { Int32($0) } }
        let frequency: [Int] = ordered.map(\.value)

        var tokens: [[UInt8]] = (0..<256).map { [UInt8($0)] }
        var tokenIndex: [[UInt8]: Int] = [:]
        for (id, t) in tokens.enumerated() { tokenIndex[t] = id }

        @inline(__always) func key(_ a: Int32, _ b: Int32) -> UInt64 { UInt64(UInt32(a)) << 32 | UInt64(UInt32(b)) }
        var pairCounts: [UInt64: Int] = [:]
        // Words that contained a pair at some point (may be stale; re-checked on use).
        var pairWords: [UInt64: [Int32]] = [:]
        for (w, word) in words.enumerated() where word.count > 1 {
            for i in 0..<(word.count - 1) {
                let k = key(word[i], word[i + 1])
                pairCounts[k, default: 0] += frequency[w]
                pairWords[k, default: []].append(Int32(w))
            }
        }

        var merges: [Merge] = []
        var seen = [Int](repeating: -1, count: words.count)
        while merges.count < maxMerges {
            // Most frequent pair; smallest (left, right) on ties. Keys order as (left, right).
            var best: UInt64 = 0
            var bestCount = 0
            for (k, c) in pairCounts where c > bestCount || (c == bestCount && k < best) {
                best = k
                bestCount = c
            }
            guard bestCount >= max(1, minimumFrequency) else { break }
            let a = Int32(truncatingIfNeeded: best >> 32)
            let b = Int32(truncatingIfNeeded: best & 0xFFFF_FFFF)
            let joined = tokens[Int(a)] + tokens[Int(b)]
            let result: Int
            if let existing = tokenIndex[joined] {
                result = existing
            } else {
                result = tokens.count
                tokens.append(joined)
                tokenIndex[joined] = result
            }
            merges.append(Merge(left: Int(a), right: Int(b), result: result))
            let r = Int32(result)

            for w32 in pairWords[best] ?? [] {
                let w = Int(w32)
                guard seen[w] != merges.count else { continue }
                seen[w] = merges.count
                let old = words[w]
                let f = frequency[w]
                var merged: [Int32] = []
                merged.reserveCapacity(old.count)
                var i = 0
                var changed = false
                while i < old.count {
                    if i + 1 < old.count && old[i] == a && old[i + 1] == b {
                        merged.append(r)
                        i += 2
                        changed = true
                    } else {
                        merged.append(old[i])
                        i += 1
                    }
                }
                guard changed else { continue }
                for j in 0..<(old.count - 1) {
                    let k = key(old[j], old[j + 1])
                    let c = (pairCounts[k] ?? 0) - f
                    pairCounts[k] = c > 0 ? c : nil
                }
                if merged.count > 1 {
                    for j in 0..<(merged.count - 1) {
                        let k = key(merged[j], merged[j + 1])
                        pairCounts[k, default: 0] += f
                        pairWords[k, default: []].append(w32)
                    }
                }
                words[w] = merged
            }
            pairWords[best] = nil
        }
        return Result(tokens: tokens, merges: merges)
    }
}
