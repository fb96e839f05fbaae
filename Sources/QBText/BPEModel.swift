/// The BPE model of a byte-level tokenizer: turns one pre-token (raw bytes) into ids by
/// applying merges in rank order, exactly as the `tokenizers` crate's `Word::merge_all`:
/// a min-heap of (rank, position), stale entries recognised by the merged id no longer
/// matching, leftmost position first among equal ranks.
struct BPEModel: Sendable {
    /// The id of each single byte's token (-1 when the vocabulary lacks it).
    let byteIDs: [TokenID]
    /// (left id, right id) packed as `left << 32 | right` → (rank << 32 | merged id).
    let merges: [UInt64: UInt64]
    /// With `ignore_merges`, a pre-token that is itself a vocabulary entry is taken whole.
    let wholeTokens: [ArraySlice<UInt8>: TokenID]
    let ignoreMerges: Bool
    let unknownID: TokenID?
    let fuseUnknown: Bool

    @inline(__always) static func pairKey(_ a: TokenID, _ b: TokenID) -> UInt64 {
        UInt64(UInt32(bitPattern: a)) << 32 | UInt64(UInt32(bitPattern: b))
    }

    /// Per-encode working memory, reused across pre-tokens so the hot loop does not allocate.
    struct Scratch {
        var ids: [TokenID] = []
        var prev: [Int32] = []
        var next: [Int32] = []
        var alive: [Bool] = []
        var heap: [HeapEntry] = []
        /// Pre-token bytes → the ids it produced, stored as a range of `cacheStore`. Only
        /// worth its hashing on long texts, where words repeat.
        var cache: [ArraySlice<UInt8>: Range<Int>] = [:]
        var cacheStore: [TokenID] = []
        var useCache: Bool

        init(useCache: Bool) { self.useCache = useCache }
    }

    struct HeapEntry {
        /// rank << 32 | position: ordering by key is ordering by rank, then position.
        var key: UInt64
        var newID: TokenID
    }

    /// Appends the ids for `buffer[range]` to `out`.
    func tokenize(_ buffer: [UInt8], _ range: Range<Int>, _ s: inout Scratch, into out: inout [TokenID]) {
        guard !range.isEmpty else { return }
        let slice = buffer[range]
        if ignoreMerges, let id = wholeTokens[slice] {
            out.append(id)
            return
        }
        // Single bytes need no merging.
        if range.count == 1 {
            let id = byteIDs[Int(buffer[range.lowerBound])]
            if id >= 0 {
                out.append(id)
                return
            }
        }
        guard s.useCache else {
            merge(slice, &s)
            for i in s.ids.indices where s.alive[i] { out.append(s.ids[i]) }
            return
        }
        if let cached = s.cache[slice] {
            out.append(contentsOf: s.cacheStore[cached])
            return
        }
        let start = s.cacheStore.count
        merge(slice, &s)
        for i in s.ids.indices where s.alive[i] { s.cacheStore.append(s.ids[i]) }
        let produced = start..<s.cacheStore.count
        out.append(contentsOf: s.cacheStore[produced])
        // Keys are copied out of the buffer so the cache never pins (or forces copies of) it.
        s.cache[ArraySlice(Array(slice))] = produced
    }

    private func merge(_ bytes: ArraySlice<UInt8>, _ s: inout Scratch) {
        s.ids.removeAll(keepingCapacity: true)
        // Initial symbols: one per byte; bytes without a token become the unknown token
        // (consecutive ones fused when `fuse_unk`) or are dropped, as the crate does.
        var pendingUnknown = false
        for b in bytes {
            let id = byteIDs[Int(b)]
            if id >= 0 {
                if pendingUnknown, let unk = unknownID { s.ids.append(unk) }
                pendingUnknown = false
                s.ids.append(id)
            } else if let unk = unknownID {
                if pendingUnknown && !fuseUnknown { s.ids.append(unk) }
                pendingUnknown = true
            }
        }
        if pendingUnknown, let unk = unknownID { s.ids.append(unk) }

        let n = s.ids.count
        s.alive.removeAll(keepingCapacity: true)
        s.alive.append(contentsOf: repeatElement(true, count: n))
        guard n > 1 else { return }
        s.prev.removeAll(keepingCapacity: true)
        s.next.removeAll(keepingCapacity: true)
        for i in 0..<n {
            s.prev.append(Int32(i - 1))
            s.next.append(i + 1 < n ? Int32(i + 1) : -1)
        }
        s.heap.removeAll(keepingCapacity: true)
        for i in 0..<(n - 1) {
            if let m = merges[Self.pairKey(s.ids[i], s.ids[i + 1])] {
                push(&s.heap, HeapEntry(key: (m >> 32) << 32 | UInt64(i), newID: TokenID(truncatingIfNeeded: m)))
            }
        }
        while let top = pop(&s.heap) {
            let pos = Int(top.key & 0xFFFF_FFFF)
            guard s.alive[pos] else { continue }
            let right = Int(s.next[pos])
            guard right >= 0 else { continue }
            guard let m = merges[Self.pairKey(s.ids[pos], s.ids[right])],
                TokenID(truncatingIfNeeded: m) == top.newID
            else { continue }
            s.ids[pos] = top.newID
            s.alive[right] = false
            let after = s.next[right]
            s.next[pos] = after
            if after >= 0 { s.prev[Int(after)] = Int32(pos) }
            let before = s.prev[pos]
            if before >= 0, let m = merges[Self.pairKey(s.ids[Int(before)], s.ids[pos])] {
                push(&s.heap, HeapEntry(key: (m >> 32) << 32 | UInt64(before), newID: TokenID(truncatingIfNeeded: m)))
            }
            if after >= 0, let m = merges[Self.pairKey(s.ids[pos], s.ids[Int(after)])] {
                push(&s.heap, HeapEntry(key: (m >> 32) << 32 | UInt64(pos), newID: TokenID(truncatingIfNeeded: m)))
            }
        }
    }

    @inline(__always) private func push(_ heap: inout [HeapEntry], _ e: HeapEntry) {
        heap.append(e)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[i].key < heap[parent].key else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    @inline(__always) private func pop(_ heap: inout [HeapEntry]) -> HeapEntry? {
        guard let last = heap.popLast() else { return nil }
        guard !heap.isEmpty else { return last }
        let top = heap[0]
        heap[0] = last
        var i = 0
        let n = heap.count
        while true {
            let l = 2 * i + 1
            guard l < n else { break }
            var child = l
            if l + 1 < n && heap[l + 1].key < heap[l].key { child = l + 1 }
            guard heap[child].key < heap[i].key else { break }
            heap.swapAt(i, child)
            i = child
        }
        return top
    }
}
