import Foundation
import QBFormats
import QBKernels
import QBModel
import QBSupport
import QBText

/// `quantize`: a model written in another format with its tokenizer: GGUF (with the
/// vocabulary as tokenizer.ggml.* metadata) for f*/q* settings, an MLX folder (with the
/// tokenizer files copied beside it) for mlx-* settings.
public enum ModelExporter {
    public static func export(_ model: any LanguageModel, tokenizer: (any Tokenizer)?, spec: QuantSpec, to url: URL, pool: ThreadPool) throws {
        try ResultsFile.createFolder(for: url)
        if spec.isMLX {
            // A new folder appears whole or not at all (FolderWriter).
            try FolderWriter.write(to: url) { dir in
                try MLXExport.write(model, spec: spec, to: dir, pool: pool)
                var copied: Set<String> = []
                if let source = model.source.directory {
                    for name in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json"] {
                        let src = URL(fileURLWithPath: source).appendingPathComponent(name)
                        let dst = dir.appendingPathComponent(name)
                        guard FileManager.default.fileExists(atPath: src.path) else { continue }
                        try? FileManager.default.removeItem(at: dst)
                        try FileManager.default.copyItem(at: src, to: dst)
                        copied.insert(name)
                    }
                }
                // A source without tokenizer files (a GGUF file) gets them written from its
                // vocabulary, so mlx-lm opens the folder as it is.
                if !copied.contains("tokenizer.json"), let bpe = tokenizer as? BPETokenizer {
                    let files = try HuggingFaceTokenizerFiles.files(
                        bpe: bpe, stopTokens: Set(model.stopTokens), modelMaxLength: model.config.contextLength)
                    for (name, data) in files where !copied.contains(name) {
                        try AtomicWriter.write(data, to: dir.appendingPathComponent(name))
                    }
                }
            }
            return
        }
        let extra: [(String, GGUFValue)]
        switch tokenizer {
        case let bpe as BPETokenizer:
            extra = try GGUFVocabulary.metadata(bpe: bpe, modelVocabularySize: model.config.vocabSize, stopTokens: Set(model.stopTokens))
        case let l2 as Llama2cTokenizer:
            extra = GGUFVocabulary.metadata(llama2c: l2)
        default: extra = []
        }
        let name = URL(fileURLWithPath: model.source.path).deletingPathExtension().lastPathComponent
        try GGUFExport.write(model, spec: spec, name: name, extra: extra, to: url, pool: pool)
    }
}
