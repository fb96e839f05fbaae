/// Open-addressing hash tables for the encoder's hot loop.
///
/// Swift's Dictionary hashes an `ArraySlice<UInt8>` one byte at a time through SipHash and
/// a `UInt64` key through a full SipHash round; a lookup per pre-token (and per merge
/// candidate) made those most of the encoding time. These tables hash eight bytes at a
/// time with a multiply-xorshift mix, keep a 32-bit tag of the hash beside each entry so
/// most mismatches cost one comparison, and never allocate on lookup. Hash flooding is not
/// a concern: keys are fixed at load (vocabularies) or bounded by one encode's text.
enum ByteHash {
    @inline(__always) static func mix(_ h: UInt64) -> UInt64 {
        var x = h
        x ^= x >> 32
        x &*= 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        x &*= 0xD6E8_FEB8_6659_FD93
        x ^= x >> 32
        return x
    }

    /// The hash of `p[range]`.
    @inline(__always) static func hash(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> UInt64 {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(range.count &+ 1)
        var i = range.lowerBound
        let end = range.upperBound
        guard let base = p.baseAddress else { return mix(h) }
        while i + 8 <= end {
            let w = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
            h = (h ^ w) &* 0x9FB2_1C65_1E98_DF25
            h ^= h >> 29
            i += 8
        }
        if i < end {
            var w: UInt64 = 0
            var shift: UInt64 = 0
            while i < end {
                w |= UInt64(base[i]) << shift
                shift += 8
                i += 1
            }
            h = (h ^ w) &* 0x9FB2_1C65_1E98_DF25
        }
        return mix(h)
    }

    @inline(__always) static func equal(_ a: UnsafeBufferPointer<UInt8>, _ ar: Range<Int>, _ b: UnsafeBufferPointer<UInt8>, _ bStart: Int) -> Bool {
        guard let pa = a.baseAddress, let pb = b.baseAddress else { return ar.isEmpty }
        var i = 0
        let n = ar.count
        let x = pa + ar.lowerBound
        let y = pb + bStart
        while i + 8 <= n {
            if UnsafeRawPointer(x + i).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(y + i).loadUnaligned(as: UInt64.self) { return false }
            i += 8
        }
        while i < n {
            if x[i] != y[i] { return false }
            i += 1
        }
        return true
    }

    static func capacity(for count: Int) -> Int {
        var c = 16
        while c < count * 2 { c <<= 1 }
        return c
    }
}

/// An immutable map from byte strings to token ids.
///
/// Each slot is 16 bytes: a key of up to eight bytes is stored in the slot itself (most
/// pre-tokens are that short), so a lookup usually touches one cache line; longer keys
/// keep their hash there and their bytes in a side array.
struct ByteStringTable: Sendable {
    private struct Slot {
        /// The key's bytes (little-endian, zero-padded) when it is at most 8 bytes long,
        /// else its hash.
        var word: UInt64
        /// length << 56 | offset into `long` << 32 | id; length 0 marks an empty slot.
        var meta: UInt64
    }

    private let slots: [Slot]
    private let long: [UInt8]
    /// Keys of 256 bytes or more (no real vocabulary has one), or past 16 MB of long keys.
    private let huge: [[UInt8]: TokenID]
    private let mask: Int
    let count: Int

    /// The table of `entries` (the first id wins for a repeated byte string).
    init<S: Sequence>(_ entries: S) where S.Element == (ArraySlice<UInt8>, TokenID) {
        let list = Array(entries)
        let capacity = ByteHash.capacity(for: list.count)
        var slots = [Slot](repeating: Slot(word: 0, meta: 0), count: capacity)
        var long: [UInt8] = []
        let mask = capacity - 1
        var count = 0
        var huge: [[UInt8]: TokenID] = [:]
        for (key, id) in list where !key.isEmpty {
            guard key.count <= 255 else {
                if huge[Array(key)] == nil { huge[Array(key)] = id }
                continue
            }
            let (word, h) = Array(key).withUnsafeBufferPointer { Self.key($0, 0..<$0.count) }
            var s = Int(truncatingIfNeeded: h) & mask
            var duplicate = false
            while slots[s].meta >> 56 != 0 {
                if Self.matches(slots[s], word, key.count, long, key) {
                    duplicate = true
                    break
                }
                s = (s + 1) & mask
            }
            guard !duplicate else { continue }
            var offset = 0
            if key.count > 8 {
                offset = long.count
                guard offset + key.count < 1 << 24 else {
                    huge[Array(key)] = id
                    continue
                }
                long.append(contentsOf: key)
            }
            slots[s] = Slot(word: word, meta: UInt64(key.count) << 56 | UInt64(offset) << 32 | UInt64(UInt32(bitPattern: id)))
            count += 1
        }
        self.slots = slots
        self.long = long
        self.huge = huge
        self.mask = mask
        self.count = count + huge.count
    }

    init(_ dictionary: [ArraySlice<UInt8>: TokenID]) {
        // Sorted by id so that which of two equal keys wins does not depend on hashing.
        self.init(dictionary.sorted { $0.value < $1.value }.map { ($0.key, $0.value) })
    }

    /// The slot word and the probe hash of `p[range]`.
    @inline(__always) private static func key(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> (UInt64, UInt64) {
        let n = range.count
        guard n <= 8 else {
            let h = ByteHash.hash(p, range)
            return (h, h)
        }
        var w: UInt64 = 0
        if n == 8, let base = p.baseAddress {
            w = UnsafeRawPointer(base + range.lowerBound).loadUnaligned(as: UInt64.self)
        } else {
            var shift: UInt64 = 0
            for i in range {
                w |= UInt64(p[i]) << shift
                shift += 8
            }
        }
        return (w, ByteHash.mix(w ^ (UInt64(n) &* 0x9E37_79B9_7F4A_7C15)))
    }

    private static func matches(_ slot: Slot, _ word: UInt64, _ n: Int, _ long: [UInt8], _ key: ArraySlice<UInt8>) -> Bool {
        guard slot.meta >> 56 == UInt64(n), slot.word == word else { return false }
        guard n > 8 else { return true }
        let offset = Int((slot.meta >> 32) & 0xFF_FFFF)
        return long[offset..<(offset + n)].elementsEqual(key)
    }

    /// The id of `p[range]`, or -1.
    @inline(__always) func lookup(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> TokenID {
        let n = range.count
        guard n > 0 else { return -1 }
        guard n <= 255 else { return huge.isEmpty ? -1 : huge[Array(p[range])] ?? -1 }
        let (word, h) = Self.key(p, range)
        var s = Int(truncatingIfNeeded: h) & mask
        let found: TokenID = slots.withUnsafeBufferPointer { slots in
            while true {
                let slot = slots[s]
                let length = slot.meta >> 56
                if length == 0 { return -1 }
                if length == UInt64(n) && slot.word == word {
                    if n <= 8 { return TokenID(truncatingIfNeeded: slot.meta) }
                    let offset = Int((slot.meta >> 32) & 0xFF_FFFF)
                    let same = long.withUnsafeBufferPointer { ByteHash.equal(p, range, $0, offset) }
                    if same { return TokenID(truncatingIfNeeded: slot.meta) }
                }
                s = (s + 1) & mask
            }
        }
        return found >= 0 || huge.isEmpty ? found : huge[Array(p[range])] ?? -1
    }

    /// The id of `key`, or -1.
    func lookup(_ key: [UInt8]) -> TokenID {
        key.withUnsafeBufferPointer { lookup($0, 0..<$0.count) }
    }
}

/// An immutable map from 64-bit keys (packed id pairs) to 64-bit values (rank and id),
/// key and value side by side so a probe touches one cache line.
struct PairTable: Sendable {
    private struct Slot {
        var key: UInt64
        var value: UInt64
    }

    /// No pair of valid ids packs to this (both halves would be -1).
    private static let empty = UInt64.max
    private let slots: [Slot]
    private let mask: Int
    let count: Int

    init(_ dictionary: [UInt64: UInt64]) {
        var capacity = 16
        while capacity * 2 < dictionary.count * 3 { capacity <<= 1 }  // load at most 2/3
        var slots = [Slot](repeating: Slot(key: Self.empty, value: 0), count: capacity)
        let mask = capacity - 1
        for (k, v) in dictionary where k != Self.empty {
            var s = Int(truncatingIfNeeded: ByteHash.mix(k)) & mask
            while slots[s].key != Self.empty { s = (s + 1) & mask }
            slots[s] = Slot(key: k, value: v)
        }
        self.slots = slots
        self.mask = mask
        count = dictionary.count
    }

    @inline(__always) subscript(_ key: UInt64) -> UInt64? {
        var s = Int(truncatingIfNeeded: ByteHash.mix(key)) & mask
        return slots.withUnsafeBufferPointer { slots in
            while true {
                let slot = slots[s]
                if slot.key == key { return slot.value }
                if slot.key == Self.empty { return nil }
                s = (s + 1) & mask
            }
        }
    }

    /// Every (key, value), in no particular order.
    var entries: [(UInt64, UInt64)] {
        slots.filter { $0.key != Self.empty }.map { ($0.key, $0.value) }
    }
}

/// A growable map from byte strings to ranges of a result store: the per-encode cache of
/// pre-tokens already merged.
struct PieceCache {
    private var bytes: [UInt8] = []
    private var starts: [Int] = [0]
    private var results: [Range<Int>] = []
    private var slots = [UInt64](repeating: 0, count: 1024)
    private var mask = 1023

    /// The cached result range for `p[range]`, if any.
    @inline(__always) func lookup(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, hash h: UInt64) -> Range<Int>? {
        var s = Int(truncatingIfNeeded: h) & mask
        let tag = h >> 32
        return bytes.withUnsafeBufferPointer { stored in
            while true {
                let v = slots[s]
                if v == 0 { return nil }
                if v >> 32 == tag {
                    let e = Int(v & 0xFFFF_FFFF) - 1
                    if starts[e + 1] - starts[e] == range.count && ByteHash.equal(p, range, stored, starts[e]) { return results[e] }
                }
                s = (s + 1) & mask
            }
        }
    }

    mutating func insert(_ p: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, hash h: UInt64, result: Range<Int>) {
        if (results.count + 1) * 2 > slots.count { grow() }
        bytes.append(contentsOf: p[range])
        starts.append(bytes.count)
        results.append(result)
        place(h, entry: results.count - 1)
    }

    private mutating func place(_ h: UInt64, entry: Int) {
        var s = Int(truncatingIfNeeded: h) & mask
        while slots[s] != 0 { s = (s + 1) & mask }
        slots[s] = (h >> 32) << 32 | UInt64(entry + 1)
    }

    private mutating func grow() {
        slots = [UInt64](repeating: 0, count: slots.count * 2)
        mask = slots.count - 1
        let stored = bytes
        stored.withUnsafeBufferPointer { p in
            for e in 0..<results.count { place(ByteHash.hash(p, starts[e]..<starts[e + 1]), entry: e) }
        }
    }
}
