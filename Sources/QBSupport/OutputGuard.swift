#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// The check every writer makes before any work starts: the output is not one of the
/// inputs, does not contain one and does not lie inside one (symlinks resolved, hard links
/// compared by device and inode), and it can be written (its folder exists or can be made,
/// and it is not a folder where a file is wanted or the other way round).
///
/// Inputs that do not exist are ignored: only what is on disk can be destroyed.
public enum OutputGuard {
    /// What the writer produces at the output path.
    public enum Kind: Sendable {
        /// One file, replaced atomically.
        case file
        /// A folder of files (a model).
        case folder
    }

    /// An output refused before any work, naming the flag, the path and the reason.
    public struct Refused: Error, CustomStringConvertible, Sendable {
        public let flag: String
        public let path: String
        public let reason: String
        public var description: String { "\(flag) \(OutputGuard.shown(path)): \(reason)" }
    }

    /// Throws `Refused` unless `output` can be written as `kind` without touching any of
    /// `inputs` (paths the command reads; nil entries are skipped).
    public static func check(output: String, kind: Kind, flag: String, inputs: [String?]) throws {
        let out = resolve(output)
        let outStat = fileStat(out)
        for case let input? in inputs {
            let inPath = resolve(input)
            guard let inStat = fileStat(inPath) else { continue }
            let inputIsFolder = (inStat.st_mode & S_IFMT) == S_IFDIR
            func refuse(_ why: String) -> Refused {
                Refused(flag: flag, path: output, reason: "\(why) \(shown(input)); choose another output so the input is not lost")
            }
            if out == inPath || (outStat.map { same($0, inStat) } ?? false) {
                throw refuse("is the input")
            }
            if isInside(inPath, out) {
                throw refuse("contains the input")
            }
            if inputIsFolder && isInside(out, inPath) {
                throw refuse("lies inside the input")
            }
            // A hard link of an input's file (or of a file inside an input folder).
            if let o = outStat, (o.st_mode & S_IFMT) == S_IFREG, o.st_nlink > 1 {
                if inputIsFolder, let hit = filesInside(inPath).first(where: { same(o, $0.stat) }) {
                    throw refuse("is a hard link of \(shown(hit.path)) in the input")
                }
            }
        }
        try checkWritable(out, original: output, kind: kind, flag: flag, existing: outStat)
    }

    /// The folder a file output goes into exists or can be created, and the output is of
    /// the right kind.
    private static func checkWritable(_ out: String, original: String, kind: Kind, flag: String, existing: Glibc.stat?) throws {
        func refuse(_ why: String) -> Refused { Refused(flag: flag, path: original, reason: why) }
        if let s = existing {
            let isFolder = (s.st_mode & S_IFMT) == S_IFDIR
            switch kind {
            case .file where isFolder: throw refuse("is a folder; give a file name")
            case .folder where !isFolder: throw refuse("is a file; a folder is written here")
            default: break
            }
        }
        // The nearest existing ancestor must be a folder we may write in.
        var dir = (out as NSString).deletingLastPathComponent
        if dir.isEmpty { dir = "." }
        while fileStat(dir) == nil {
            let up = (dir as NSString).deletingLastPathComponent
            if up.isEmpty || up == dir { break }
            dir = up
        }
        guard let d = fileStat(dir) else { throw refuse("no folder of its path exists") }
        guard (d.st_mode & S_IFMT) == S_IFDIR else { throw refuse("\(shown(dir)) is a file, not a folder") }
        guard access(dir, W_OK | X_OK) == 0 else { throw refuse("cannot write in \(shown(dir)) (\(String(cString: strerror(errno))))") }
    }

    /// The absolute path with symlinks resolved as far as the path exists (the rest
    /// appended as given), "." and ".." removed.
    public static func resolve(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var parts = (absolute as NSString).standardizingPath
        if parts.isEmpty { parts = "/" }
        var head = parts
        var tail: [String] = []
        while true {
            if let r = realpath(head, nil) {
                let resolved = String(cString: r)
                free(r)
                let joined = ([resolved == "/" ? "" : resolved] + tail.reversed()).joined(separator: "/")
                return joined.isEmpty ? "/" : joined
            }
            let up = (head as NSString).deletingLastPathComponent
            if up == head || up.isEmpty { return parts }
            tail.append((head as NSString).lastPathComponent)
            head = up
        }
    }

    /// `inner` is strictly inside folder `outer` (both resolved).
    static func isInside(_ inner: String, _ outer: String) -> Bool {
        outer == "/" ? inner != "/" : inner.hasPrefix(outer + "/")
    }

    static func fileStat(_ path: String) -> Glibc.stat? {
        var s = Glibc.stat()
        let rc = fstatat(AT_FDCWD, path, &s, 0)
        return rc == 0 ? s : nil
    }

    static func same(_ a: Glibc.stat, _ b: Glibc.stat) -> Bool { a.st_dev == b.st_dev && a.st_ino == b.st_ino }

    /// Regular files under `folder` (a bounded walk: model folders are small).
    static func filesInside(_ folder: String, limit: Int = 10_000) -> [(path: String, stat: Glibc.stat)] {
        var found: [(path: String, stat: Glibc.stat)] = []
        guard let e = FileManager.default.enumerator(atPath: folder) else { return [] }
        while let rel = e.nextObject() as? String, found.count < limit {
            let p = folder + "/" + rel
            if let s = fileStat(p), (s.st_mode & S_IFMT) == S_IFREG { found.append((p, s)) }
        }
        return found
    }

    /// A value as echoed in a message: at most `limit` characters, the rest counted.
    public static func shown(_ value: String, limit: Int = 200) -> String {
        guard value.count > limit else { return value }
        return "\(value.prefix(limit))... (\(value.count) characters)"
    }
}
