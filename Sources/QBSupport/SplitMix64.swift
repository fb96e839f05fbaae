/// SplitMix64 (Steele, Lea and Flood 2014; Vigna's reference `splitmix64.c`): tiny, fast
/// and fully specified, so synthetic weights, seeded inputs and xoshiro's seeding are
/// identical on every machine and build.
public struct SplitMix64: RandomNumberGenerator, Sendable, Equatable {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    /// The same as `init(state:)`: the seed is the initial state.
    public init(seed: UInt64) { state = seed }

    @inline(__always)
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1) with 53 bits.
    @inline(__always)
    public mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }
}
