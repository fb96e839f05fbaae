import Foundation
import QBKernels
import QBModel
import QBSupport
import QBText

/// `make-model`: a synthetic model of any preset's architecture with its own tokenizer, as a Hugging Face folder
/// that works with nothing from outside.
public enum ModelMaker {
    /// Writes the model as a GGUF file in `spec`'s format (e.g. f16, q8_0, q4_0), with its
    /// tokenizer as a gpt2-style BPE vocabulary: the synthetic weights are drawn in f32 into
    /// a temporary folder, then converted. The temporary folder is registered with
    /// `LongWork`, so an interrupted run removes it.
    public static func makeGGUF(preset: SyntheticModel.Preset, seed: UInt64, spec: QuantSpec, to file: URL, pool: ThreadPool) throws {
        let tmp = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).src-\(getpid())")
        let token = LongWork.registerTemporary(tmp.path)
        defer {
            try? FileManager.default.removeItem(at: tmp)
            LongWork.unregisterTemporary(token)
        }
        // f16 halves the temporary folder of a 1B model; random weights lose nothing that matters.
        try makeInPlace(preset: preset, seed: seed, dtype: spec.format == .f32 ? .f32 : .f16, to: tmp)
        try LongWork.checkpoint()
        let model = try ModelPipeline.open(path: tmp.path)
        let tokenizer = try ModelPipeline.tokenizer(for: model, path: nil)
        try ModelExporter.export(model, tokenizer: tokenizer, spec: spec, to: file, pool: pool)
    }

    /// Writes the model as a Hugging Face folder. A folder that does not exist yet is built
    /// under a hidden temporary name beside it and renamed into place when complete, so an
    /// interrupted run leaves nothing; an existing folder gets each file replaced atomically.
    public static func make(preset: SyntheticModel.Preset, seed: UInt64, dtype: DType, to directory: URL) throws {
        try FolderWriter.write(to: directory) { dir in try makeInPlace(preset: preset, seed: seed, dtype: dtype, to: dir) }
    }

    static func makeInPlace(preset: SyntheticModel.Preset, seed: UInt64, dtype: DType, to directory: URL) throws {
        let config = preset.config
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ids = try SyntheticTokenizer.write(to: directory, vocabularySize: config.vocabSize)
        try LongWork.checkpoint()
        try SyntheticModel.write(
            config: config, seed: seed, dtype: dtype, to: directory,
            bos: Int(ids.bos), eos: ids.eos.map { Int($0) })
    }
}

/// Output folders written whole or not at all.
public enum FolderWriter {
    /// Calls `body` with the folder to fill: `directory` itself when it exists (its files
    /// are each replaced atomically by the writers), else a hidden temporary folder beside
    /// it (`.NAME.tmp-PID`, registered with `LongWork`) renamed to `directory` once `body`
    /// returns. If `body` throws, the temporary folder is removed.
    public static func write(to directory: URL, _ body: (URL) throws -> Void) throws {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: directory.path, isDirectory: &isDir), isDir.boolValue {
            try body(directory)
            return
        }
        let parent = directory.deletingLastPathComponent()
        try fm.createDirectory(at: parent, withIntermediateDirectories: true)
        let tmp = parent.appendingPathComponent(".\(directory.lastPathComponent).tmp-\(getpid())")
        let token = LongWork.registerTemporary(tmp.path)
        defer {
            try? fm.removeItem(at: tmp)
            LongWork.unregisterTemporary(token)
        }
        try? fm.removeItem(at: tmp)
        try fm.createDirectory(at: tmp, withIntermediateDirectories: true)
        try body(tmp)
        try LongWork.checkpoint()
        guard rename(tmp.path, directory.path) == 0 else {
            throw LocatedError(path: directory.path, "cannot move the finished folder into place: \(String(cString: strerror(errno)))")
        }
    }
}
