import CQBKernels

/// Micro-kernels that measure this machine's ceilings (`qb_roofline.c`): each keeps many
/// independent chains in flight, so it is bound by memory or the execution units, not by
/// instruction latency. Callers time them and spread them over threads.
public enum RooflineProbes {
    /// Reads `bytes` (a multiple of 256) from `p` with wide loads; returns a checksum to
    /// store somewhere, so the reads cannot be optimised away.
    public static func read(_ p: UnsafeRawPointer, bytes: Int) -> UInt64 {
        qb_read_bandwidth_kernel(p, Int64(bytes))
    }

    /// Runs `iterations` rounds of independent fp32 fused multiply-adds; returns the number
    /// of floating-point operations done (two per lane per FMA). `sink` takes 8 floats.
    public static func fma(iterations: Int64, sink: UnsafeMutablePointer<Float>) -> Double {
        qb_fma_peak_kernel(iterations, sink)
    }

    /// Runs `iterations` rounds of int8 dot products (u8 x s8 pairs summed, the instructions
    /// the 4-bit prefill kernels use: vpdpbusd into int32 on AVX-512 VNNI, vpmaddubsw with a
    /// 16-bit add on AVX2); returns the number of int8 operations (two per
    /// multiply-accumulate). `sink` takes 8 int32.
    public static func int8(iterations: Int64, sink: UnsafeMutablePointer<Int32>) -> Double {
        qb_int8_peak_kernel(iterations, sink)
    }
}
