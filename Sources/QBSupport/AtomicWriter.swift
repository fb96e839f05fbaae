#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Writes files (results, models, caches) so that no reader (and no later `compare`) ever
/// sees a half-written one, and a failed or interrupted write leaves nothing behind.
///
/// The bytes go into an unnamed file in the target's folder (Linux `O_TMPFILE`), which is
/// flushed to disk, given a temporary name and renamed over the target in one step. An
/// unnamed file vanishes with the process, so even `kill -9` mid-write leaves no debris.
/// Where the file system has no `O_TMPFILE` it falls back to a hidden temporary file
/// (`.NAME.tmp-PID-RANDOM`) that is removed on any error; only a hard kill during that
/// window can leave one behind.
public enum AtomicWriter {
    /// A file that could not be written, and why.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public let path: String
        public let reason: String
        public var description: String { "\(path): cannot write the file: \(reason)" }
    }

    public static func write(_ data: Data, to url: URL) throws {
        try write(to: url) { append in try append(data) }
    }

    /// Calls `produce` with a function that appends bytes to the new file, then puts the
    /// file in place. If `produce` throws, the target is left as it was (absent or the
    /// previous version) and no temporary file remains.
    public static func write(to url: URL, _ produce: (_ append: (Data) throws -> Void) throws -> Void) throws {
        let dir = url.deletingLastPathComponent().path
        let target = url.path
        let tmpName = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path

        // __O_TMPFILE is 020000000 on x86-64 and arm64; Glibc's O_TMPFILE macro is not
        // importable into Swift.
        var fd = open(dir, 0o20000000 | O_DIRECTORY | O_WRONLY | O_CLOEXEC, 0o644)
        var named = false
        // The hidden name exists from here (fallback) or from the link below until the
        // rename: registered, so an interrupted command removes it.
        let token = LongWork.registerTemporary(tmpName)
        defer { LongWork.unregisterTemporary(token) }
        if fd < 0 {
            fd = open(tmpName, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o644)
            named = true
        }
        guard fd >= 0 else { throw error(target, "cannot create a file in \(dir)") }
        var linked = named
        do {
            defer { close(fd) }
            try produce { data in
                try data.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                        if n < 0 {
                            if errno == EINTR { continue }
                            throw error(target, "write")
                        }
                        offset += n
                    }
                }
            }
            guard fsync(fd) == 0 else { throw error(target, "fsync") }
            if !named {
                // Give the unnamed file its temporary name (the /proc link is how open(2)
                // documents linking an O_TMPFILE file without CAP_DAC_READ_SEARCH).
                guard linkat(AT_FDCWD, "/proc/self/fd/\(fd)", AT_FDCWD, tmpName, AT_SYMLINK_FOLLOW) == 0 else {
                    throw error(target, "linkat")
                }
                linked = true
            }
        } catch {
            if linked { unlink(tmpName) }
            throw error
        }
        guard rename(tmpName, target) == 0 else {
            let e = error(target, "rename")
            unlink(tmpName)
            throw e
        }
        syncFolder(of: url)
    }

    /// For writers that need a path of their own (they open, seek or map the file): `body`
    /// writes a temporary file beside the target, which is then flushed to disk and
    /// renamed over the target. If anything throws, the temporary file is removed and the
    /// target is left as it was; only a hard kill while `body` runs can leave the
    /// temporary file (`.NAME.tmp-PID-RANDOM`) behind.
    public static func produce(at url: URL, _ body: (URL) throws -> Void) throws {
        let target = url.path
        let tmp = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let token = LongWork.registerTemporary(tmp.path)
        defer { LongWork.unregisterTemporary(token) }
        do {
            try body(tmp)
            let fd = open(tmp.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw error(target, "open") }
            defer { close(fd) }
            guard fsync(fd) == 0 else { throw error(target, "fsync") }
            guard rename(tmp.path, target) == 0 else { throw error(target, "rename") }
        } catch {
            unlink(tmp.path)
            throw error
        }
        syncFolder(of: url)
    }

    /// Writes several files as one change (a results JSON and its summary): each is written
    /// in full under a temporary name in its folder and flushed first; only when every one
    /// is complete are they renamed into place, in the order given. A failure while writing
    /// (a full disk) removes the temporary files and leaves every target as it was, so a
    /// pair is never left mismatched. `commitIf` is asked once every file is staged, just
    /// before the first rename: false (the run was interrupted meanwhile) removes the
    /// staged files and throws `WriteCancelled`, so a late Ctrl-C still leaves nothing.
    public static func writeAll(_ files: [(data: Data, url: URL)], commitIf: () -> Bool = { true }) throws {
        var staged: [(tmp: String, url: URL)] = []
        do {
            for f in files {
                let tmp = temporaryName(for: f.url)
                staged.append((tmp, f.url))
                let fd = open(tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o644)
                guard fd >= 0 else { throw error(f.url.path, "cannot create a file in \(f.url.deletingLastPathComponent().path)") }
                defer { close(fd) }
                try f.data.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                        if n < 0 {
                            if errno == EINTR { continue }
                            throw error(f.url.path, "write")
                        }
                        offset += n
                    }
                }
                guard fsync(fd) == 0 else { throw error(f.url.path, "fsync") }
            }
        } catch {
            for s in staged { unlink(s.tmp) }
            throw error
        }
        guard commitIf() else {
            for s in staged { unlink(s.tmp) }
            throw WriteCancelled()
        }
        for (i, s) in staged.enumerated() where rename(s.tmp, s.url.path) != 0 {
            let e = error(s.url.path, "rename")
            for rest in staged[i...] { unlink(rest.tmp) }
            throw e
        }
        for s in staged { syncFolder(of: s.url) }
    }

    /// `.NAME.tmp-PID-RANDOM` beside `url`.
    static func temporaryName(for url: URL) -> String {
        url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
    }

    /// Makes a rename in `url`'s folder durable.
    private static func syncFolder(of url: URL) {
        let d = open(url.deletingLastPathComponent().path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if d >= 0 {
            fsync(d)
            close(d)
        }
    }

    static func error(_ path: String, _ what: String) -> Failure {
        Failure(path: path, reason: "\(what): \(String(cString: strerror(errno)))")
    }
}


/// A write that `AtomicWriter.writeAll`'s `commitIf` called off before any target changed.
public struct WriteCancelled: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "the write was called off; nothing was written" }
}
