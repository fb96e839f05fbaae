/// Element types of stored tensors.
public enum DType: String, Sendable, CaseIterable, Codable {
    case f32 = "F32"
    case f16 = "F16"
    case bf16 = "BF16"

    /// Bytes per element.
    public var size: Int {
        switch self {
        case .f32: return 4
        case .f16, .bf16: return 2
        }
    }

    /// Bits per weight as `inspect` reports it.
    public var bitsPerWeight: Double { Double(size * 8) }
}

extension DType {
    /// GGML's type id (GGUF files, the C kernels).
    public var ggmlID: Int32 {
        switch self {
        case .f32: return 0
        case .f16: return 1
        case .bf16: return 30
        }
    }
}
