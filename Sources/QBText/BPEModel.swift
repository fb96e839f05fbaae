import HeapModule

/// The BPE model of a Hugging Face tokenizer: turns one pre-token into ids by applying
/// merges in rank order, exactly as the `tokenizers` crate's `Word::merge_all`: a min-heap
/// of (rank, position), stale entries recognised by the merged id no longer matching,
/// leftmost position first among equal ranks. tiktoken's `byte_pair_merge` (lowest rank
/// first, leftmost on ties) is the same algorithm with the rank of a pair being the rank of
/// its joined bytes (`PairRanks.joinedBytes`).
///
/// The first symbols of a word are either its bytes (byte-level vocabularies, where the
/// GPT-2 byte alphabet is implicit) or its Unicode scalars (SentencePiece-style
/// vocabularies), with `byte_fallback` turning a scalar the vocabulary lacks into its
/// `<0xNN>` byte tokens.
struct BPEModel: Sendable {
    enum Symbols: Sendable {
        /// One symbol per byte, the id from `byteIDs`.
        case bytes
        /// One symbol per scalar, the id from `scalarIDs`; a scalar without one becomes its
        /// bytes' `byteIDs` when `byteFallback` (and every byte has a token), else unknown.
        case scalars(ScalarTable, byteFallback: Bool)
    }

    /// How the rank of an adjacent pair is found.
    enum PairRanks: Sendable {
        /// A merge list: (left id, right id) packed as `left << 32 | right` → (rank << 32 |
        /// merged id).
        case merges(PairTable)
        /// tiktoken: a pair's rank is the rank (= id) of its joined bytes in
        /// `wholeTokens`, if they are a token. Needs byte symbols with every byte a token.
        case joinedBytes
    }

    let symbols: Symbols
    /// Byte-level: the id of each byte's token. Scalar mode: the `<0xNN>` tokens. -1 where
    /// the vocabulary lacks one.
    let byteIDs: [TokenID]
    let pairRanks: PairRanks
    /// With `ignore_merges`, a pre-token that is itself a vocabulary entry is taken whole.
    let wholeTokens: ByteStringTable
    let ignoreMerges: Bool
    let unknownID: TokenID?
    let fuseUnknown: Bool
    /// Whether a word may be cut before every `▁` that follows another character (see
    /// `Metaspace.cuts`): true for SentencePiece-style vocabularies where no token holds
    /// such a `▁`, which makes the long words of pre-tokenizer-less files cheap to merge.
    let cutsBeforeMetaspace: Bool

    init(
        symbols: Symbols, byteIDs: [TokenID], merges: [UInt64: UInt64], wholeTokens: [ArraySlice<UInt8>: TokenID],
        ignoreMerges: Bool, unknownID: TokenID?, fuseUnknown: Bool
    ) {
        self.init(
            symbols: symbols, byteIDs: byteIDs, pairRanks: .merges(PairTable(merges)), wholeTokens: wholeTokens,
            ignoreMerges: ignoreMerges, unknownID: unknownID, fuseUnknown: fuseUnknown)
    }

    init(
        symbols: Symbols, byteIDs: [TokenID], pairRanks: PairRanks, wholeTokens: [ArraySlice<UInt8>: TokenID],
        ignoreMerges: Bool, unknownID: TokenID?, fuseUnknown: Bool
    ) {
        self.symbols = symbols
        self.byteIDs = byteIDs
        self.pairRanks = pairRanks
        self.wholeTokens = ByteStringTable(wholeTokens)
        self.ignoreMerges = ignoreMerges
        self.unknownID = unknownID
        self.fuseUnknown = fuseUnknown
        if case .scalars(let table, _) = symbols, table[0x2581] >= 0 {
            cutsBeforeMetaspace = Metaspace.cutsAreSafe(wholeTokens.keys)
        } else {
            cutsBeforeMetaspace = false
        }
    }

    @inline(__always) static func pairKey(_ a: TokenID, _ b: TokenID) -> UInt64 {
        UInt64(UInt32(bitPattern: a)) << 32 | UInt64(UInt32(bitPattern: b))
    }

    /// Per-encode working memory, reused across pre-tokens so the hot loop does not allocate.
    struct Scratch {
        var ids: [TokenID] = []
        var prev: [Int32] = []
        var next: [Int32] = []
        var alive: [Bool] = []
        /// Where each symbol starts in the text (for `joinedBytes` ranks).
        var start: [Int] = []
        var heap = Heap<HeapEntry>()
        /// Pre-token bytes → the ids it produced, stored as a range of `cacheStore`. Only
        /// worth its hashing on long texts, where words repeat.
        var cache = PieceCache()
        var cacheStore: [TokenID] = []
        var useCache: Bool

        init(useCache: Bool) { self.useCache = useCache }
    }

    struct HeapEntry: Comparable {
        /// rank << 32 | position: ordering by key is ordering by rank, then position.
        var key: UInt64
        var newID: TokenID

        static func < (a: HeapEntry, b: HeapEntry) -> Bool { a.key < b.key }
        static func == (a: HeapEntry, b: HeapEntry) -> Bool { a.key == b.key }
    }

    /// Appends the ids for `p[range]` to `out`.
    func tokenize(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ s: inout Scratch, into out: inout [TokenID]) {
        guard cutsBeforeMetaspace, range.count > 3 else { return tokenizeWord(p, range, &s, into: &out) }
        // No merge can cross a cut, so each part merges alone with the same result (and
        // repeated parts come from the cache).
        var start = range.lowerBound
        Metaspace.forEachCut(p, range) { cut in
            tokenizeWord(p, start..<cut, &s, into: &out)
            start = cut
        }
        tokenizeWord(p, start..<range.upperBound, &s, into: &out)
    }

    private func tokenizeWord(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ s: inout Scratch, into out: inout [TokenID]) {
        guard !range.isEmpty else { return }
        if ignoreMerges {
            let id = wholeTokens.lookup(p, range)
            if id >= 0 {
                out.append(id)
                return
            }
        }
        // Single bytes need no merging.
        if range.count == 1 {
            let b = p[range.lowerBound]
            let id: TokenID
            switch symbols {
            case .bytes: id = byteIDs[Int(b)]
            case .scalars(let table, _): id = b < 0x80 ? table[UInt32(b)] : -1
            }
            if id >= 0 {
                out.append(id)
                return
            }
        }
        guard s.useCache else {
            merge(p, range, &s)
            for i in s.ids.indices where s.alive[i] { out.append(s.ids[i]) }
            return
        }
        let h = ByteHash.hash(p, range)
        if let cached = s.cache.lookup(p, range, hash: h) {
            out.append(contentsOf: s.cacheStore[cached])
            return
        }
        let start = s.cacheStore.count
        merge(p, range, &s)
        for i in s.ids.indices where s.alive[i] { s.cacheStore.append(s.ids[i]) }
        let produced = start..<s.cacheStore.count
        out.append(contentsOf: s.cacheStore[produced])
        s.cache.insert(p, range, hash: h, result: produced)
    }

    /// The rank and merged id of the adjacent symbols `i` and `j`, if they merge.
    @inline(__always) private func rank(_ i: Int, _ j: Int, _ p: UnsafeBufferPointer<UInt8>, _ end: Int, _ s: inout Scratch) -> (UInt64, TokenID)? {
        switch pairRanks {
        case .merges(let table):
            guard let m = table[Self.pairKey(s.ids[i], s.ids[j])] else { return nil }
            return (m >> 32, TokenID(truncatingIfNeeded: m))
        case .joinedBytes:
            let after = Int(s.next[j])
            let id = wholeTokens.lookup(p, s.start[i]..<(after >= 0 ? s.start[after] : end))
            return id >= 0 ? (UInt64(UInt32(bitPattern: id)), id) : nil
        }
    }

    private func merge(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ s: inout Scratch) {
        s.ids.removeAll(keepingCapacity: true)
        switch symbols {
        case .bytes: byteSymbols(p, range, &s.ids)
        case .scalars(let table, let fallback): scalarSymbols(p, range, table, fallback, &s.ids)
        }
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
        if case .joinedBytes = pairRanks {
            // One symbol per byte (every byte is a token in a tiktoken vocabulary).
            s.start.removeAll(keepingCapacity: true)
            s.start.append(contentsOf: range)
        }
        let end = range.upperBound
        for i in 0..<(n - 1) {
            if let (r, id) = rank(i, i + 1, p, end, &s) {
                s.heap.insert(HeapEntry(key: r << 32 | UInt64(i), newID: id))
            }
        }
        // Runs until the heap is empty, so the next word starts with an empty heap (and
        // its storage's capacity).
        while let top = s.heap.popMin() {
            let pos = Int(top.key & 0xFFFF_FFFF)
            guard s.alive[pos] else { continue }
            let right = Int(s.next[pos])
            guard right >= 0 else { continue }
            // Stale entries: the pair at `pos` changed since it was queued.
            guard let (_, id) = rank(pos, right, p, end, &s), id == top.newID else { continue }
            s.ids[pos] = id
            s.alive[right] = false
            let after = s.next[right]
            s.next[pos] = after
            if after >= 0 { s.prev[Int(after)] = Int32(pos) }
            let before = Int(s.prev[pos])
            if before >= 0, let (r, id) = rank(before, pos, p, end, &s) {
                s.heap.insert(HeapEntry(key: r << 32 | UInt64(before), newID: id))
            }
            if after >= 0, let (r, id) = rank(pos, Int(after), p, end, &s) {
                s.heap.insert(HeapEntry(key: r << 32 | UInt64(pos), newID: id))
            }
        }
    }

    /// Initial symbols, one per byte; bytes without a token become the unknown token
    /// (consecutive ones fused when `fuse_unk`) or are dropped, as the crate does.
    private func byteSymbols(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ ids: inout [TokenID]) {
        var pendingUnknown = false
        for b in p[range] {
            let id = byteIDs[Int(b)]
            if id >= 0 {
                if pendingUnknown, let unk = unknownID { ids.append(unk) }
                pendingUnknown = false
                ids.append(id)
            } else if let unk = unknownID {
                if pendingUnknown && !fuseUnknown { ids.append(unk) }
                pendingUnknown = true
            }
        }
        if pendingUnknown, let unk = unknownID { ids.append(unk) }
    }

    /// Initial symbols, one per scalar, as the crate's `BPE::merge_word`. Its quirk is kept:
    /// byte-fallback tokens do not flush a pending unknown token, which is added when the
    /// next known scalar (or the end) comes.
    private func scalarSymbols(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ table: ScalarTable, _ fallback: Bool, _ ids: inout [TokenID]) {
        var pendingUnknown = false
        do {
            var i = range.lowerBound
            let end = range.upperBound
            while i < end {
                let (v, l) = Scanner.scalar(p, i, end)
                defer { i += l }
                let id = table[v]
                if id >= 0 {
                    if pendingUnknown, let unk = unknownID { ids.append(unk) }
                    pendingUnknown = false
                    ids.append(id)
                    continue
                }
                if fallback {
                    var all = true
                    for k in i..<(i + l) where byteIDs[Int(p[k])] < 0 { all = false }
                    if all {
                        for k in i..<(i + l) { ids.append(byteIDs[Int(p[k])]) }
                        continue
                    }
                }
                if let unk = unknownID {
                    if pendingUnknown && !fuseUnknown { ids.append(unk) }
                    pendingUnknown = true
                }
            }
        }
        if pendingUnknown, let unk = unknownID { ids.append(unk) }
    }
}

/// Unicode scalar → the id of the vocabulary entry that is exactly that scalar: a flat
/// table for the Basic Multilingual Plane (one load per character in the hot loop), a
/// dictionary above it.
struct ScalarTable: Sendable {
    private var bmp: [TokenID]
    private var astral: [UInt32: TokenID] = [:]

    init() { bmp = [TokenID](repeating: -1, count: 0x10000) }

    /// The id, or -1.
    @inline(__always) subscript(_ v: UInt32) -> TokenID {
        if v < 0x10000 { return bmp[Int(v)] }
        return astral[v] ?? -1
    }

    mutating func set(_ v: UInt32, _ id: TokenID) {
        if v < 0x10000 { bmp[Int(v)] = id } else { astral[v] = id }
    }

    /// Records `text` when it is exactly one scalar.
    mutating func setIfSingleScalar(_ text: String, _ id: TokenID) {
        var it = text.unicodeScalars.makeIterator()
        if let first = it.next(), it.next() == nil { set(first.value, id) }
    }
}

/// Token text → id, compared byte for byte. Swift's String equality is canonical
/// equivalence, under which distinct vocabulary entries ("ά" precomposed and decomposed)
/// would be one key.
struct ByteStringMap: Sendable {
    private var storage: [[UInt8]: TokenID] = [:]

    var count: Int { storage.count }

    mutating func reserveCapacity(_ n: Int) { storage.reserveCapacity(n) }

    subscript(_ text: String) -> TokenID? {
        get { storage[Array(text.utf8)] }
        set { storage[Array(text.utf8)] = newValue }
    }

    subscript(bytes bytes: [UInt8]) -> TokenID? { storage[bytes] }
}

/// Where SentencePiece-style text may be cut without changing how it merges.
///
/// A merge only ever produces a vocabulary token, so if no token holds a `▁` right after
/// another character, no symbol can ever span a point between a character and a `▁`
/// that follows it (SentencePiece vocabularies trained on whitespace-split words, as
/// Llama 2's, have `▁` only at the start of a piece or in runs of `▁`). Merge order is by
/// (rank or score, position), so merging the parts apart gives the same symbols.
enum Metaspace {
    /// Whether no key holds a `▁` after another character.
    static func cutsAreSafe<S: Sequence>(_ keys: S) -> Bool where S.Element == ArraySlice<UInt8> {
        for key in keys {
            var i = key.startIndex + 1
            while i + 2 < key.endIndex {
                if key[i] == 0xE2 && key[i + 1] == 0x96 && key[i + 2] == 0x81 {
                    // The character before: a `▁` ends at i - 1 with 0x81 after 0xE2 0x96.
                    let previousIsMeta = i >= key.startIndex + 3 && key[i - 3] == 0xE2 && key[i - 2] == 0x96 && key[i - 1] == 0x81
                    if !previousIsMeta { return false }
                    i += 3
                } else {
                    i += 1
                }
            }
        }
        return true
    }

    /// Calls `body` with every offset in `range` where a `▁` follows a character that is
    /// not `▁`.
    @inline(__always) static func forEachCut(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ body: (Int) -> Void) {
        var i = range.lowerBound
        let end = range.upperBound
        var previousIsMeta = true  // no cut at the start
        while i < end {
            if p[i] == 0xE2 && i + 2 < end && p[i + 1] == 0x96 && p[i + 2] == 0x81 {
                if !previousIsMeta { body(i) }
                previousIsMeta = true
                i += 3
            } else {
                // Only the first byte of a character decides; continuation bytes never start ▁.
                if p[i] & 0xC0 != 0x80 { previousIsMeta = false }
                i += 1
            }
        }
    }
}
