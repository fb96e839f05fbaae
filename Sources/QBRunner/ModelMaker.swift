import Foundation
import QBFormats
import QBKernels
import QBModel
import QBText

/// `make-model`: a synthetic Llama model with its own tokenizer, as a Hugging Face folder
/// that works with nothing from outside.
public enum ModelMaker {
    /// Writes the model as a GGUF file in `spec`'s format (e.g. f16, q8_0, q4_0), with its
    /// tokenizer as a gpt2-style BPE vocabulary: the synthetic weights are drawn in f32 into
    /// a temporary folder, then converted.
    public static func makeGGUF(preset: SyntheticModel.Preset, seed: UInt64, spec: QuantSpec, to file: URL, pool: ThreadPool) throws {
        let tmp = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).src-\(getpid())")
        defer { try? FileManager.default.removeItem(at: tmp) }
        // f16 halves the temporary folder of a 1B model; random weights lose nothing that matters.
        try make(preset: preset, seed: seed, dtype: spec.format == .f32 ? .f32 : .f16, to: tmp)
        let model = try ModelLoader.load(path: tmp.path)
        let tokenizer = try TokenizerLoader.load(for: model, path: nil)
        try ModelExporter.export(model, tokenizer: tokenizer, spec: spec, to: file, pool: pool)
    }

    public static func make(preset: SyntheticModel.Preset, seed: UInt64, dtype: DType, to directory: URL) throws {
        let config = preset.config
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ids = try SyntheticTokenizer.write(to: directory, vocabularySize: config.vocabSize)
        try SyntheticModel.write(
            config: config, seed: seed, dtype: dtype, to: directory,
            bos: Int(ids.bos), eos: ids.eos.map { Int($0) })
    }
}

/// The built-in default model: the tiny synthetic preset, generated deterministically on
/// first use into the user's cache, so the README's first command needs nothing downloaded.
public enum DefaultModel {
    public static let preset = SyntheticModel.Preset.tiny
    public static let seed: UInt64 = 0

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
        try? fm.removeItem(at: tmp)
        try ModelMaker.make(preset: preset, seed: seed, dtype: .f32, to: tmp)
        if rename(tmp.path, dir.path) != 0 {
            try? fm.removeItem(at: tmp)  // another process won the race; use its copy
            guard fm.fileExists(atPath: dir.appendingPathComponent("model.safetensors").path) else {
                throw ModelError.unreadable(path: dir.path, reason: "could not place the default model")
            }
        }
        return dir.path
    }
}
