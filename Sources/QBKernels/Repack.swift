#if canImport(Glibc)
import Glibc
#endif
import CQBKernels

extension Matrix {
    /// Whether `interleavedForDecode` has a layout for this matrix.
    public var canInterleave: Bool {
        guard layout == .rows else { return false }
        if case .mlx(let q) = format {
            return scales != nil && biases != nil
                && qb_mlx_x16_supported(Int32(q.bits), Int64(q.groupSize), Int64(rows), Int64(cols)) != 0
        }
        return format.ggmlID >= 0 && qb_repack_supported(format.ggmlID, Int64(rows), Int64(cols)) != 0
    }

    /// Bytes of the interleaved layout (nil when there is none).
    public var interleavedBytes: Int? {
        guard canInterleave else { return nil }
        if case .mlx(let q) = format {
            return Int(qb_mlx_x16_bytes(Int32(q.bits), Int64(q.groupSize), q.scaleType.ggmlID, Int64(rows), Int64(cols)))
        }
        return Int(qb_repack_bytes(format.ggmlID, Int64(rows), Int64(cols)))
    }

    /// Whether `residentCopy` copies this matrix.
    public var wantsResidentCopy: Bool { layout == .rows && valueBytes >= 2 << 20 }

    /// This matrix with GGML blocks of four rows interleaved (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 with
    /// rows % 4 == 0), or Q4_K's, MLX's or (on the AVX-512 and AVX2 kernel sets) Q4_0's and
    /// Q6_K's sixteen-row groups (rows % 16 == 0; MLX's scales and biases move into the
    /// groups), copied into memory the result owns; nil when there is no such layout. Decode then streams a group of rows against one read of
    /// the activations; values are unchanged, so every product equals the plain layout's up
    /// to summation order.
    /// Taken from `arena` when one is given and has room.
    public func interleavedForDecode(pool: ThreadPool, arena: WeightArena? = nil) -> Matrix? {
        interleavedForDecode(pool: pool, arena: arena, groupRows: nil)
    }

    /// `interleavedForDecode`, with Q4_0 in groups of `groupRows` rows (4 or 16, the row
    /// count a multiple of it), and Q6_K in sixteen-row groups when it is 16, whichever the
    /// active kernel set would choose: tests hold each layout to the other on every set
    /// (each set reads every layout).
    func interleavedForDecode(pool: ThreadPool, arena: WeightArena? = nil, groupRows: Int32?) -> Matrix? {
        let q6k16 = groupRows == 16 && format == .ggml(.q6_K) && layout == .rows && rows % 16 == 0 && cols % 256 == 0
        guard canInterleave || q6k16 else { return nil }
        let bytes = interleavedBytes ?? Int(qb_repack_bytes(format.ggmlID, Int64(rows), Int64(cols)))
        let (dst, storage) = WeightArena.storage(bytes: bytes, arena: arena)
        if case .mlx(let q) = format, let scales, let biases {
            let bits = Int32(q.bits), group = Int64(q.groupSize), dtype = q.scaleType.ggmlID, cols = Int64(self.cols)
            let words = base.assumingMemoryBound(to: UInt32.self)
            pool.parallelFor(rows / Int(QB_MLX_X16_ROWS), grain: 4) { range, _ in
                qb_repack_mlx_x16(bits, group, dtype, words, scales, biases, dst, Int64(range.lowerBound), Int64(range.upperBound), cols)
            }
            return Matrix(format: format, rows: rows, cols: self.cols, base: UnsafeRawPointer(dst), owner: storage, layout: .interleaved16)
        }
        let type = format.ggmlID, cols = Int64(self.cols), src = base
        var group = q6k16 ? 16 : qb_repack_group_rows(type, Int64(rows))
        if let g = groupRows, format == .ggml(.q4_0), g == 4 || g == 16, rows % Int(g) == 0 { group = g }
        pool.parallelFor(rows / Int(group), grain: 64 / Int(group)) { range, _ in
            qb_repack(type, group, src, dst, Int64(range.lowerBound), Int64(range.upperBound), cols)
        }
        return Matrix(
            format: format, rows: rows, cols: self.cols, base: UnsafeRawPointer(dst), owner: storage,
            layout: group == 16 ? .interleaved16 : .interleaved4)
    }
}

extension Matrix {
    /// This matrix's stored bytes copied, unchanged, into page-aligned memory with
    /// transparent huge pages (nil for the interleaved layout and below 2 MiB). Decode
    /// streams every weight once per token; file pages are 4 KiB, so the stream crosses a
    /// page (a TLB miss and the end of a hardware prefetch run) every 4 KiB, and a huge page
    /// every 2 MiB.
    /// Taken from `arena` when one is given and has room.
    public func residentCopy(pool: ThreadPool, arena: WeightArena? = nil) -> Matrix? {
        // Below a huge page there is nothing to gain.
        guard wantsResidentCopy else { return nil }
        let bytes = valueBytes
        let (dst, storage) = WeightArena.storage(bytes: bytes, arena: arena)
        let src = base
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

/// One mapping for every matrix a model copies or repacks at load, handed out in 4 KiB
/// aligned slices: separate mappings would each end in a partly used 2 MiB huge page (up to
/// 2 MiB of resident waste per matrix, over a hundred matrices in a 1B model). Filled from
/// one thread while the model is prepared, read-only after.
public final class WeightArena: @unchecked Sendable {
    let buffer: PageBuffer
    private var used = 0

    public init(bytes: Int) { buffer = PageBuffer(bytes: bytes) }

    /// Bytes an arena needs to hold slices of these sizes.
    public static func bytes(for sizes: [Int]) -> Int { sizes.reduce(0) { $0 + ($1 + 4095) / 4096 * 4096 } }

    /// `bytes` from `arena` when it has room, else a mapping of their own; with the object
    /// that keeps them alive.
    static func storage(bytes: Int, arena: WeightArena?) -> (UnsafeMutableRawPointer, AnyObject) {
        if let arena {
            let start = (arena.used + 4095) / 4096 * 4096
            if start + bytes <= arena.buffer.count {
                arena.used = start + bytes
                return (arena.buffer.pointer + start, arena)
            }
        }
        let own = PageBuffer(bytes: bytes)
        return (own.pointer, own)
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

    public init(bytes: Int, for what: @autoclosure () -> String = "model weights") {
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
            // Out of address space is out of memory either way: one line naming it.
            mapping = nil
            mappedBytes = 0
            pointer = OutOfMemory.allocate(bytes: count, alignment: 4096, for: what())
        }
    }

    deinit {
        if let mapping { munmap(mapping, mappedBytes) } else { free(pointer) }
    }
}
