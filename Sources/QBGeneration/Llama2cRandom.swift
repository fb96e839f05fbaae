/// llama2.c's random numbers (`run.c`, `random_u32` and `random_f32`): a 64-bit xorshift*
/// whose state starts as the seed itself. Kept bit-for-bit so `--sampler llama2c` replays
/// llama2.c's sampled generations. A seed of 0 gives zeros forever, as it would in run.c
/// if its time-based fallback for seed 0 were not there; we keep 0 deterministic rather
/// than reading the clock.
public struct Llama2cRandom: Sendable, Equatable {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// `random_u32`: xorshift by 12, 25, 27, then the high 32 bits of the product with
    /// 0x2545F4914F6CDD1D.
    @inline(__always)
    public mutating func nextUInt32() -> UInt32 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return UInt32(truncatingIfNeeded: (state &* 0x2545_F491_4F6C_DD1D) >> 32)
    }

    /// `random_f32`: the top 24 bits over 2²⁴, a float in [0, 1).
    @inline(__always)
    public mutating func nextFloat() -> Float {
        Float(nextUInt32() >> 8) / 16_777_216.0
    }
}
