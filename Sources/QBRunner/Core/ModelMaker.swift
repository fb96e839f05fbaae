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
    /// a temporary folder, then converted.
    public static func makeGGUF(preset: SyntheticModel.Preset, seed: UInt64, spec: QuantSpec, to file: URL, pool: ThreadPool) throws {
        let tmp = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).src-\(getpid())")
        defer { try? FileManager.default.removeItem(at: tmp) }
        // f16 halves the temporary folder of a 1B model; random weights lose nothing that matters.
        try make(preset: preset, seed: seed, dtype: spec.format == .f32 ? .f32 : .f16, to: tmp)
        let model = try ModelPipeline.open(path: tmp.path)
        let tokenizer = try ModelPipeline.tokenizer(for: model, path: nil)
        try ModelExporter.export(model, tokenizer: tokenizer, spec: spec, to: file, pool: pool)
    }

    public static func make(preset: SyntheticModel.Preset, seed: UInt64, dtype: DType, to directory: URL) throws {
        let config = preset.config
        try ResultsFile.createFolder(for: directory)
        // Built in a folder beside the target and moved into place when complete.
        try AtomicWriter.produceFolder(at: directory) { directory in
            let ids = try SyntheticTokenizer.write(to: directory, vocabularySize: config.vocabSize)
            try SyntheticModel.write(
                config: config, seed: seed, dtype: dtype, to: directory,
                bos: Int(ids.bos), eos: ids.eos.map { Int($0) })
        }
    }
}
