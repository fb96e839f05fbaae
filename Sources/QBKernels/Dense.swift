import CQBKernels

/// Narrowing conversions with round-to-nearest-even, for writers and caches.
public enum Convert {
    public static func f32ToF16(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<UInt16>, count: Int) {
        qb_f32_to_f16(src, dst, Int64(count))
    }

    public static func f32ToBF16(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<UInt16>, count: Int) {
        qb_f32_to_bf16(src, dst, Int64(count))
    }
}
