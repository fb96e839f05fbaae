/// 64-bit FNV-1a of a string's UTF-8: a stable seed derived from a name (Swift's own
/// hashing is randomly seeded per process).
public enum FNV1a {
    public static func hash(_ s: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        return h
    }
}
