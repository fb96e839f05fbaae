import QBFormats
import Foundation
import QBKernels
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
        modelsDirectory.appendingPathComponent("\(preset.rawValue)-seed\(seed)")
    }

    /// `$XDG_CACHE_HOME/quantbench/models`, else `~/.cache/quantbench/models`.
    public static var modelsDirectory: URL {
        let env = ProcessInfo.processInfo.environment
        let base: URL
        if let xdg = env["XDG_CACHE_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg)
        } else {
            base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        }
        return base.appendingPathComponent("quantbench/models")
    }

    /// `--model builtin:tiny` or `builtin:ci-125m` names a built-in model (made on first use);
    /// anything else is a path, returned as is.
    public static func resolve(_ model: String) throws -> String {
        switch model {
        case "builtin:\(preset.rawValue)": return try path()
        case "builtin:\(CIModel.preset.rawValue)", "builtin:ci": return try CIModel.path()
        default:
            if model.hasPrefix("builtin:") {
                throw ModelError.unreadable(
                    path: model, reason: "no such built-in model (builtin:\(preset.rawValue), builtin:\(CIModel.preset.rawValue))")
            }
            return model
        }
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

/// The default model of `ab` and CI performance runs: the `ci-125m` synthetic preset
/// quantized to q4_0 in a GGUF file (about 70 MB), generated deterministically on first use
/// into the same cache as the default model. A GGUF file loads by mapping, so each of
/// `ab`'s many processes starts in a fraction of a second, and any `quantbench` binary that
/// reads GGUF, older ones included, runs the very same bytes.
public enum CIModel {
    public static let preset = SyntheticModel.Preset.ci
    public static let seed: UInt64 = 0
    public static let quant = "q4_0"

    public static var file: URL {
        DefaultModel.modelsDirectory.appendingPathComponent("\(preset.rawValue)-seed\(seed)-\(quant).gguf")
    }

    /// The file's path, generating it first if needed (into a temporary name renamed into
    /// place, so an interrupted generation leaves nothing half-made).
    public static func path() throws -> String {
        let target = file
        let fm = FileManager.default
        if fm.fileExists(atPath: target.path) { return target.path }
        try fm.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        let tmp = target.deletingLastPathComponent().appendingPathComponent(".\(target.lastPathComponent).tmp-\(getpid())")
        try? fm.removeItem(at: tmp)
        do {
            try ModelMaker.makeGGUF(
                preset: preset, seed: seed, spec: try QuantSpec(quant), to: tmp, pool: ThreadPool(threads: ThreadPool.defaultThreadCount))
        } catch {
            try? fm.removeItem(at: tmp)
            throw error
        }
        if rename(tmp.path, target.path) != 0 {
            try? fm.removeItem(at: tmp)
            guard fm.fileExists(atPath: target.path) else {
                throw ModelError.unreadable(path: target.path, reason: "could not place the CI model")
            }
        }
        return target.path
    }
}
