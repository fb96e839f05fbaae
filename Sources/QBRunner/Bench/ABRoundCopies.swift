#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// Fresh copies of `ab`'s two binaries for each round (see `ABRunner`): an ELF executable is
/// copied to `WORK/copy-a/quantbench` (the baseline) or `WORK/copy-b/quantbench` (the
/// candidate), replacing the last round's copy; any other file (a wrapper script, which may
/// find its engine beside itself) runs where it is.
struct ABRoundCopies {
    struct CopyError: Error, CustomStringConvertible {
        let description: String
    }

    let workDirectory: URL
    let baseline: String
    let candidate: String

    func folder(_ side: ABRunner.Side) -> URL {
        workDirectory.appendingPathComponent(side == .baseline ? "copy-a" : "copy-b")
    }

    /// The binary this side names (what `fresh()` copies, or runs in place).
    func source(_ side: ABRunner.Side) -> String { side == .baseline ? baseline : candidate }

    /// Whether every round runs a copy of this side's binary.
    func copies(_ side: ABRunner.Side) -> Bool { Self.isELF(source(side)) }

    static func isELF(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: 4)) == Data([0x7F, 0x45, 0x4C, 0x46])
    }

    /// Copies both sides' ELF binaries afresh, one after the other before either runs; the
    /// path each side runs this round.
    func fresh() throws -> [ABRunner.Side: String] {
        let fm = FileManager.default
        var paths: [ABRunner.Side: String] = [:]
        for side in [ABRunner.Side.baseline, .candidate] {
            let source = source(side)
            guard Self.isELF(source) else {
                paths[side] = source
                continue
            }
            let copy = folder(side).appendingPathComponent("quantbench")
            do {
                try? fm.removeItem(at: copy)
                try fm.createDirectory(at: folder(side), withIntermediateDirectories: true)
                try fm.copyItem(atPath: source, toPath: copy.path)
                guard chmod(copy.path, 0o755) == 0 else { throw CopyError(description: String(cString: strerror(errno))) }
            } catch {
                throw CopyError(description: "\(side.rawValue) binary \(source): cannot copy it to \(copy.path) for the round: \(error)")
            }
            paths[side] = copy.path
        }
        return paths
    }

    /// Removes the copies (about the binaries' size each).
    func remove() {
        for side in [ABRunner.Side.baseline, .candidate] { try? FileManager.default.removeItem(at: folder(side)) }
    }
}
