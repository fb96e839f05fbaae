#if canImport(Glibc)
import Glibc
#endif
import CQBKernels

extension Matrix {
    /// Whether `interleavedForDecode` has a layout for this matrix.
    public var canInterleave: Bool {
        layout == .rows && format.ggmlID >= 0 && qb_repack_supported(format.ggmlID, Int64(rows), Int64(cols)) != 0
    }

    /// This matrix with GGML blocks of four rows interleaved (Q4_0, Q8_0 with rows % 4 == 0),
    /// copied into memory the result owns; nil when there is no such layout. Decode then
    /// streams four rows against one read of the activations; values are unchanged, so
    /// every product equals the plain layout's up to summation order.
    public func interleavedForDecode(pool: ThreadPool) -> Matrix? {
        guard canInterleave else { return nil }
        let bytes = Int(qb_repack_bytes(format.ggmlID, Int64(rows), Int64(cols)))
        let storage = PageBuffer(bytes: bytes)
        let type = format.ggmlID, cols = Int64(self.cols), src = base, dst = storage.pointer
        pool.parallelFor(rows / 4, grain: 16) { range, _ in
            qb_repack(type, src, dst, Int64(range.lowerBound), Int64(range.upperBound), cols)
        }
        return Matrix(
            format: format, rows: rows, cols: self.cols, base: UnsafeRawPointer(dst), owner: storage, layout: .interleaved4)
    }
}

/// Page-aligned anonymous memory for repacked weights, with transparent huge pages asked
/// for (long sequential streams touch fewer TLB entries).
public final class PageBuffer: @unchecked Sendable {
    public let pointer: UnsafeMutableRawPointer
    public let count: Int

    public init(bytes: Int) {
        count = max(bytes, 1)
        pointer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 2 << 20)
        _ = madvise(pointer, count, Int32(MADV_HUGEPAGE))
    }

    deinit { pointer.deallocate() }
}
