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

extension Matrix {
    /// This matrix's stored bytes copied, unchanged, into page-aligned memory with
    /// transparent huge pages (nil for the interleaved layout and below 2 MiB). Decode
    /// streams every weight once per token; file pages are 4 KiB, so the stream crosses a
    /// page (a TLB miss and the end of a hardware prefetch run) every 4 KiB, and a huge page
    /// every 2 MiB.
    public func residentCopy(pool: ThreadPool) -> Matrix? {
        // Below a huge page there is nothing to gain.
        guard layout == .rows, byteCount >= 2 << 20 else { return nil }
        let bytes = byteCount
        let storage = PageBuffer(bytes: bytes)
        let src = base, dst = storage.pointer
        let chunk = 1 << 20
        pool.parallelFor((bytes + chunk - 1) / chunk, grain: 4) { range, _ in
            for c in range {
                let n = min(chunk, bytes - c * chunk)
                (dst + c * chunk).copyMemory(from: src + c * chunk, byteCount: n)
            }
        }
        // MLX scales and biases stay where they are (small); keep their storage alive too.
        let owner: AnyObject = scales == nil ? storage : OwnerPair(storage, self.owner)
        return Matrix(
            format: format, rows: rows, cols: cols, base: UnsafeRawPointer(dst), scales: scales, biases: biases,
            owner: owner, layout: .rows)
    }
}

/// Two owners kept alive together.
final class OwnerPair: @unchecked Sendable {
    let first: AnyObject
    let second: AnyObject?
    init(_ first: AnyObject, _ second: AnyObject?) {
        self.first = first
        self.second = second
    }
}

/// Anonymous memory mapped for repacked or copied weights, aligned to 2 MiB with
/// transparent huge pages asked for (long sequential streams touch fewer TLB entries).
/// Mapped directly rather than through malloc: weights are not heap objects, and the
/// allocator's statistics should not count them.
public final class PageBuffer: @unchecked Sendable {
    public let pointer: UnsafeMutableRawPointer
    public let count: Int
    private let mapping: UnsafeMutableRawPointer?
    private let mappedBytes: Int

    public init(bytes: Int) {
        count = max(bytes, 1)
        let huge = 2 << 20
        let length = (count + huge - 1) / huge * huge + huge
        if let m = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), m != MAP_FAILED {
            let aligned = (Int(bitPattern: m) + huge - 1) / huge * huge
            mapping = m
            mappedBytes = length
            pointer = UnsafeMutableRawPointer(bitPattern: aligned)!
            _ = madvise(pointer, count, Int32(MADV_HUGEPAGE))
        } else {
            // Out of address space is out of memory either way; the allocator will say so.
            mapping = nil
            mappedBytes = 0
            pointer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 4096)
        }
    }

    deinit {
        if let mapping { munmap(mapping, mappedBytes) } else { pointer.deallocate() }
    }
}
