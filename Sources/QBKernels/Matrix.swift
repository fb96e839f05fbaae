#if canImport(Glibc)
import Glibc
#endif
import CQBKernels

/// A read-only view of a row-major weight matrix `[rows][cols]` (PyTorch's Linear layout,
/// out x in) in its stored format: dense, GGML blocks along each row, or MLX groups.
///
/// Views point into memory-mapped files or into buffers owned by `owner`; holding the view
/// keeps that storage alive. Nothing is copied when a model is opened.
public struct Matrix: @unchecked Sendable {
    public let format: WeightFormat
    /// How rows are laid out in memory (plain rows, or GGML blocks of four or sixteen rows
    /// interleaved for decode; see `interleavedForDecode`).
    public let layout: MatrixLayout
    public let rows: Int
    public let cols: Int
    public let base: UnsafeRawPointer
    /// MLX scales and biases, `[rows][cols / groupSize]` each (nil in the sixteen-row
    /// layout, which holds them beside the values).
    public let scales: UnsafeRawPointer?
    public let biases: UnsafeRawPointer?
    /// Keeps the memory behind the pointers alive (mapped files or owned buffers).
    public let owner: AnyObject?

    public init(
        format: WeightFormat, rows: Int, cols: Int, base: UnsafeRawPointer,
        scales: UnsafeRawPointer? = nil, biases: UnsafeRawPointer? = nil, owner: AnyObject?,
        layout: MatrixLayout = .rows
    ) {
        self.format = format
        self.layout = layout
        self.rows = rows
        self.cols = cols
        self.base = base
        self.scales = scales
        self.biases = biases
        self.owner = owner
    }

    /// This view without its owner, for work that ends while the caller holds this one: a
    /// copy of the owner is an atomic on its reference count, on every thread that makes it.
    var unretained: Matrix {
        Matrix(format: format, rows: rows, cols: cols, base: base, scales: scales, biases: biases, owner: nil, layout: layout)
    }

    public init(dtype: DType, rows: Int, cols: Int, base: UnsafeRawPointer, owner: AnyObject?) {
        self.init(format: .dense(dtype), rows: rows, cols: cols, base: base, owner: owner)
    }

    /// The element type, for dense matrices.
    public var dtype: DType? { if case .dense(let d) = format { return d } else { return nil } }

    public var elementCount: Int { rows * cols }
    /// Rows per unit of decode work: a group of an interleaved layout, else one row.
    public var unitRows: Int {
        switch layout {
        case .rows: 1
        case .interleaved4: 4
        case .interleaved16: 16
        }
    }
    /// Every byte the format stores: the values and, for MLX, the scales and biases.
    public var byteCount: Int { format.byteCount(rows: rows, cols: cols) }
    /// The bytes of the values from `base` on: `byteCount` less MLX's scales and biases, which
    /// are separate arrays (`scales`, `biases`), not after the values.
    public var valueBytes: Int { rows * rowBytes }
    public var bitsPerWeight: Double { elementCount > 0 ? Double(byteCount * 8) / Double(elementCount) : 0 }
    public var rowBytes: Int { format.rowBytes(cols: cols) }

    /// Widens row `r` to f32.
    public func row(_ r: Int, into out: UnsafeMutablePointer<Float>) {
        rows(r..<(r + 1), into: out)
    }

    /// Widens (dequantizes) rows `range` to f32, contiguously into `out`.
    public func rows(_ range: Range<Int>, into out: UnsafeMutablePointer<Float>) {
        let n = range.count * cols
        let offset = range.lowerBound * cols
        if layout != .rows, case .mlx(let q) = format {
            qb_dequantize_mlx_x16(
                Int32(q.bits), Int64(q.groupSize), q.scaleType.ggmlID, base, out, Int64(range.lowerBound), Int64(range.upperBound), Int64(cols))
            return
        }
        if layout != .rows {
            qb_dequantize_repacked(
                format.ggmlID, Int32(unitRows), base, out, Int64(range.lowerBound), Int64(range.upperBound), Int64(cols))
            return
        }
        switch format {
        case .dense(.f32):
            out.update(from: base.assumingMemoryBound(to: Float.self) + offset, count: n)
        case .dense(.f16):
            qb_f16_to_f32(base.assumingMemoryBound(to: UInt16.self) + offset, out, Int64(n))
        case .dense(.bf16):
            qb_bf16_to_f32(base.assumingMemoryBound(to: UInt16.self) + offset, out, Int64(n))
        case .ggml:
            qb_dequantize_row(format.ggmlID, base + range.lowerBound * rowBytes, out, Int64(n))
        case .mlx(let q):
            let groups = cols / q.groupSize
            for (i, r) in range.enumerated() {
                qb_dequantize_row_mlx(
                    Int32(q.bits), Int64(q.groupSize),
                    (base + r * rowBytes).assumingMemoryBound(to: UInt32.self),
                    scales! + r * groups * q.scaleType.size, biases! + r * groups * q.scaleType.size,
                    q.scaleType.ggmlID, out + i * cols, Int64(cols))
            }
        }
    }

    /// Copies the stored bytes of rows `range` in the file format's plain row layout
    /// (GGML blocks or dense values; not MLX), contiguously into `out`: what writers store.
    public func storedRows(_ range: Range<Int>, into out: UnsafeMutableRawPointer) {
        if layout != .rows {
            qb_unpack_repacked(format.ggmlID, Int32(unitRows), base, out, Int64(range.lowerBound), Int64(range.upperBound), Int64(cols))
        } else {
            out.copyMemory(from: base + range.lowerBound * rowBytes, byteCount: range.count * rowBytes)
        }
    }

    /// The whole matrix widened to f32 (tests and small tensors such as norms).
    public func toFloats() -> [Float] {
        [Float](unsafeUninitializedCapacity: elementCount) { buf, count in
            if elementCount > 0 { rows(0..<rows, into: buf.baseAddress!) }
            count = elementCount
        }
    }
}

/// The memory layout of a matrix's rows.
public enum MatrixLayout: Sendable, Hashable {
    /// Row after row, as stored in model files.
    case rows
    /// GGML blocks of four consecutive rows interleaved block by block, with each block's
    /// four scales together (Q4_0, Q5_0 and Q8_0; see qb_repack.h). Same bytes, moved.
    case interleaved4
    /// Q4_K super-blocks (or MLX groups, or Q4_0 blocks and Q6_K super-blocks on the AVX-512
    /// and AVX2 kernel sets) of sixteen consecutive rows together, their scales
    /// split into low and high bits (MLX: the sixteen scales, then the biases; Q4_0: the
    /// sixteen scales; Q6_K: the sixteen d, then each sub-block's sixteen scales) and their
    /// quants ordered for four values of all sixteen rows per load (qb_repack.h). Same values,
    /// as many bytes.
    case interleaved16
}

/// An owned, aligned f32 buffer used for activations and caches. A class so that views
/// (`Matrix`) can keep it alive.
public final class FloatBuffer: @unchecked Sendable {
    public let pointer: UnsafeMutablePointer<Float>
    public let count: Int

    public init(count: Int, zeroed: Bool = true) {
        self.count = count
        let (bytes, overflow) = max(count, 1).multipliedReportingOverflow(by: 4)
        let raw = OutOfMemory.allocate(bytes: overflow ? Int.max : bytes, alignment: 64, for: "a buffer of \(count) floats")
        pointer = raw.bindMemory(to: Float.self, capacity: max(count, 1))
        if zeroed { pointer.initialize(repeating: 0, count: max(count, 1)) }
    }

    public convenience init(_ values: [Float]) {
        self.init(count: values.count, zeroed: false)
        values.withUnsafeBufferPointer { pointer.update(from: $0.baseAddress!, count: values.count) }
    }

    deinit { free(pointer) }

    public var array: [Float] { Array(UnsafeBufferPointer(start: pointer, count: count)) }

    /// A matrix view of this buffer.
    public func matrix(rows: Int, cols: Int) -> Matrix {
        Matrix(dtype: .f32, rows: rows, cols: cols, base: UnsafeRawPointer(pointer), owner: self)
    }
}
