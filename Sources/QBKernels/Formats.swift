import CQBKernels

/// GGML's block-quantized types (the ids are GGML's, as stored in GGUF files).
public enum GGMLType: Int32, Sendable, CaseIterable, Codable {
    case q4_0 = 2, q4_1 = 3, q5_0 = 6, q5_1 = 7, q8_0 = 8
    case q2_K = 10, q3_K = 11, q4_K = 12, q5_K = 13, q6_K = 14, iq4_nl = 20, iq4_xs = 23

    /// Values per block.
    public var blockSize: Int { Int(qb_block_size(rawValue)) }
    /// Bytes per block.
    public var blockBytes: Int { Int(qb_block_bytes(rawValue)) }
    /// Values per int8 activation block this type is dotted with in decode: 256 (one scale
    /// per super-block, GGML's Q8_K) for the super-block formats (Q2_K to Q6_K, IQ4_XS), 32
    /// for the others.
    public var activationBlock: Int { Int(qb_activation_block(rawValue)) }
    public var name: String {
        switch self {
        case .q4_0: return "Q4_0"
        case .q4_1: return "Q4_1"
        case .q5_0: return "Q5_0"
        case .q5_1: return "Q5_1"
        case .q8_0: return "Q8_0"
        case .q2_K: return "Q2_K"
        case .q3_K: return "Q3_K"
        case .q4_K: return "Q4_K"
        case .q5_K: return "Q5_K"
        case .q6_K: return "Q6_K"
        case .iq4_nl: return "IQ4_NL"
        case .iq4_xs: return "IQ4_XS"
        }
    }
}

/// MLX's affine quantization: `w = scale * q + bias` per group of values along a row,
/// `q` packed little-endian into 32-bit words, low bits first.
public struct MLXQuantization: Sendable, Hashable, Codable {
    public var bits: Int
    public var groupSize: Int
    /// Element type of the scales and biases arrays.
    public var scaleType: DType

    public init(bits: Int, groupSize: Int, scaleType: DType) {
        self.bits = bits
        self.groupSize = groupSize
        self.scaleType = scaleType
    }

    public static let supportedBits = [4, 8]
    public static let supportedGroups = [32, 64, 128]
}

/// How a weight matrix is stored.
public enum WeightFormat: Sendable, Hashable {
    case dense(DType)
    case ggml(GGMLType)
    case mlx(MLXQuantization)

    public static let f32 = WeightFormat.dense(.f32)

    /// Bytes of the packed data of one row of `cols` values (excluding MLX scales/biases).
    public func rowBytes(cols: Int) -> Int {
        switch self {
        case .dense(let d): return cols * d.size
        case .ggml(let t): return cols / t.blockSize * t.blockBytes
        case .mlx(let q): return cols * q.bits / 8
        }
    }

    /// Whether rows of `cols` values can be stored in this format.
    public func fits(cols: Int) -> Bool {
        switch self {
        case .dense: return true
        case .ggml(let t): return cols % t.blockSize == 0
        case .mlx(let q): return cols % q.groupSize == 0 && cols % 32 == 0
        }
    }

    /// Total bytes of a `rows` x `cols` matrix, scales and biases included.
    public func byteCount(rows: Int, cols: Int) -> Int {
        var n = rows * rowBytes(cols: cols)
        if case .mlx(let q) = self { n += 2 * rows * (cols / q.groupSize) * q.scaleType.size }
        return n
    }

    public var name: String {
        switch self {
        case .dense(let d): return d.rawValue
        case .ggml(let t): return t.name
        case .mlx(let q): return "MLX-Q\(q.bits)-G\(q.groupSize)"
        }
    }

    /// Values per int8 activation block in decode (nil for dense formats, which take f32).
    public var activationBlock: Int? {
        switch self {
        case .dense: return nil
        case .ggml(let t): return t.activationBlock
        case .mlx: return 32
        }
    }

    /// GGML's type id for dense and GGML formats (-1 for MLX formats, which GGUF cannot hold).
    public var ggmlID: Int32 {
        switch self {
        case .dense(let d): return d.ggmlID
        case .ggml(let t): return t.rawValue
        case .mlx: return -1
        }
    }
}

extension WeightFormat {
    /// Values per block of a GGML type id (0 when the kernels do not read that type).
    public static func blockSize(ggmlID: Int32) -> Int64 { qb_block_size(ggmlID) }
    /// Bytes per block of a GGML type id (0 when the kernels do not read that type).
    public static func blockBytes(ggmlID: Int32) -> Int64 { qb_block_bytes(ggmlID) }
}
