/// The sampler's random numbers: xoshiro256** 1.0 (Blackman and Vigna,
/// https://prng.di.unimi.it/xoshiro256starstar.c) with its 256-bit state filled by four
/// consecutive outputs of SplitMix64 (https://prng.di.unimi.it/splitmix64.c) started at the
/// seed, as the authors recommend. Both are fixed integer recipes, so a seed gives the same
/// stream on every run, build and machine; Swift's `SystemRandomNumberGenerator` and the
/// standard library's unspecified generators are never used for sampling.
public struct Xoshiro256StarStar: RandomNumberGenerator, Sendable, Equatable {
    /// The four state words, in the reference implementation's order `s[0]...s[3]`.
    public private(set) var state: (UInt64, UInt64, UInt64, UInt64)

    /// Seeds the state from SplitMix64 started at `seed` (never all zero: SplitMix64's
    /// outputs are a bijection of distinct inputs, so four of them cannot all be zero).
    public init(seed: UInt64) {
        state = Self.seeded(seed)
    }

    private static func seeded(_ seed: UInt64) -> (UInt64, UInt64, UInt64, UInt64) {
        var mix = SplitMix64(state: seed)
        return (mix.next(), mix.next(), mix.next(), mix.next())
    }

    /// Starts from an explicit state (for reference vectors). An all-zero state would give
    /// zeros forever, so it is replaced by the seeded state of seed 0.
    public init(state: (UInt64, UInt64, UInt64, UInt64)) {
        self.state = state == (0, 0, 0, 0) ? Self.seeded(0) : state
    }

    public static func == (a: Self, b: Self) -> Bool { a.state == b.state }

    @inline(__always)
    public mutating func next() -> UInt64 {
        let result = (state.1 &* 5).rotatedLeft(7) &* 9
        let t = state.1 << 17
        state.2 ^= state.0
        state.3 ^= state.1
        state.1 ^= state.2
        state.0 ^= state.3
        state.2 ^= t
        state.3 = state.3.rotatedLeft(45)
        return result
    }

    /// A uniform double in [0, 1): the top 53 bits of one output times 2⁻⁵³ (the authors'
    /// recommended conversion), so every value is exact and 1 is never returned.
    @inline(__always)
    public mutating func nextUnitDouble() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}

extension UInt64 {
    @inline(__always)
    fileprivate func rotatedLeft(_ k: UInt64) -> UInt64 { (self << k) | (self >> (64 - k)) }
}
