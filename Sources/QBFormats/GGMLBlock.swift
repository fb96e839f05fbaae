/// The block layouts of the GGML tensor types this project reads (GGUF type ids), so GGUF
/// files can be checked and written without the kernels. The kernels keep their own table
/// (`qb_block_size`/`qb_block_bytes`); QBModelTests checks that the two agree.
public enum GGMLBlock {
    /// Values per block and bytes per block of GGML type `type`, or nil for a type this
    /// project does not read.
    public static func layout(ofType type: UInt32) -> (values: Int, bytes: Int)? {
        switch type {
        case 0: return (1, 4)  // F32
        case 1: return (1, 2)  // F16
        case 30: return (1, 2)  // BF16
        case 2: return (32, 18)  // Q4_0: f16 scale, 16 bytes of nibbles
        case 3: return (32, 20)  // Q4_1: f16 scale and min, 16 bytes of nibbles
        case 6: return (32, 22)  // Q5_0: f16 scale, 4 bytes of high bits, 16 of nibbles
        case 7: return (32, 24)  // Q5_1: f16 scale and min, high bits, nibbles
        case 8: return (32, 34)  // Q8_0: f16 scale, 32 int8
        case 10: return (256, 84)  // Q2_K: 16 scale-and-min bytes, 64 of 2-bit quants, f16 d and dmin
        case 11: return (256, 110)  // Q3_K: 32 bytes of high bits, 64 of 2-bit quants, 12 of scales, f16 d
        case 12: return (256, 144)  // Q4_K: f16 d and dmin, 12 bytes of scales, 128 of nibbles
        case 13: return (256, 176)  // Q5_K: as Q4_K plus 32 bytes of high bits
        case 14: return (256, 210)  // Q6_K: 128 low nibbles, 64 high bits, 16 scales, f16 d
        case 20: return (32, 18)  // IQ4_NL: f16 scale, 16 bytes of nibbles indexing a fixed table
        case 23: return (256, 136)  // IQ4_XS: f16 d, u16 high scales, 4 bytes low scales, 128 nibbles
        default: return nil
        }
    }
}
