#if canImport(Glibc)
import Glibc
#endif

/// A whole file mapped read-only into memory. Weights are used in place from the mapping:
/// opening a model copies nothing, and pages are shared with the page cache.
public final class MappedFile: @unchecked Sendable {
    public let path: String
    public let size: Int
    public let base: UnsafeRawPointer

    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { throw ModelError.notFound(path: path) }
            throw ModelError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            throw ModelError.unreadable(path: path, reason: String(cString: strerror(errno)))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw ModelError.unreadable(path: path, reason: "not a regular file")
        }
        size = Int(st.st_size)
        guard size > 0 else { throw ModelError.truncated(path: path, item: "header", needed: 1, available: 0) }
        guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else {
            throw ModelError.unreadable(path: path, reason: "mmap: " + String(cString: strerror(errno)))
        }
        base = UnsafeRawPointer(p)
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), size) }

    /// Lets the kernel drop the resident pages wholly inside the first `bytes` bytes. The
    /// mapping is private and never written, so a later read of them faults them in again
    /// from the file: a parsed header need not stay in memory while the weights are used.
    public func dropPages(before bytes: Int) {
        let page = max(Int(sysconf(Int32(_SC_PAGESIZE))), 1)
        let n = min(bytes, size) / page * page
        if n > 0 { _ = madvise(UnsafeMutableRawPointer(mutating: base), n, MADV_DONTNEED) }
    }

    /// Reads a little-endian value at `offset`, or throws naming `item` when the file ends first.
    public func load<T: FixedWidthInteger>(_: T.Type, at offset: Int, item: String) throws -> T {
        try check(offset: offset, count: MemoryLayout<T>.size, item: item)
        return T(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    public func loadFloat(at offset: Int, item: String) throws -> Float {
        Float(bitPattern: try load(UInt32.self, at: offset, item: item))
    }

    /// Throws unless `count` bytes from `offset` lie inside the file.
    public func check(offset: Int, count: Int, item: String) throws {
        let (end, overflow) = offset.addingReportingOverflow(count)
        guard offset >= 0, count >= 0, !overflow, end <= size else {
            throw ModelError.truncated(path: path, item: item, needed: overflow ? Int.max : end, available: size)
        }
    }

    public func bytes(at offset: Int, count: Int, item: String) throws -> UnsafeRawBufferPointer {
        try check(offset: offset, count: count, item: item)
        return UnsafeRawBufferPointer(start: base + offset, count: count)
    }
}
