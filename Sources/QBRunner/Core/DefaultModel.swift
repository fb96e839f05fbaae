import QBFormats
import Foundation
import QBModel
import QBSupport

/// The built-in default model: the tiny synthetic preset, generated deterministically on
/// first use into the user's cache, so the README's first command needs nothing downloaded.
public enum DefaultModel {
    /// The synthetic shape it is made in.
    public static let preset = SyntheticModel.Preset.tiny
    /// The seed its weights are drawn from; fixed, so every machine gets the same model.
    public static let seed: UInt64 = 0

    /// Where it is kept: `$XDG_CACHE_HOME/quantbench/models/…`, else under `~/.cache`.
    public static var directory: URL {
        let env = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = env["XDG_CACHE_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg)
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        }
        return base.appendingPathComponent("quantbench/models/\(preset.rawValue)-seed\(seed)")
    }

    /// The default model's path, generating it first if it is not there yet. Generation
    /// goes to a temporary folder renamed into place, so an interrupted run leaves nothing
    /// half-made.
    public static func path() throws -> String {
        let dir = directory
        let fm = FileManager.default
        if fm.fileExists(atPath: dir.appendingPathComponent("model.safetensors").path) { return dir.path }
        try fm.createDirectory(at: dir.deletingLastPathComponent(), withIntermediateDirectories: true)
        let tmp = dir.deletingLastPathComponent().appendingPathComponent(".\(dir.lastPathComponent).tmp-\(getpid())")
        let token = LongWork.registerTemporary(tmp.path)
        defer { LongWork.unregisterTemporary(token) }
        try? fm.removeItem(at: tmp)
        do {
            try ModelMaker.makeInPlace(preset: preset, seed: seed, dtype: .f32, to: tmp)
        } catch {
            try? fm.removeItem(at: tmp)
            throw error
        }
        if rename(tmp.path, dir.path) != 0 {
            try? fm.removeItem(at: tmp)  // another process won the race; use its copy
            guard fm.fileExists(atPath: dir.appendingPathComponent("model.safetensors").path) else {
                throw ModelError.unreadable(path: dir.path, reason: "could not place the default model")
            }
        }
        return dir.path
    }
}
