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
            // Built in a folder beside the target and moved into place when complete.
            try AtomicWriter.produceFolder(at: url) { url in
                try MLXExport.write(model, spec: spec, to: url, pool: pool)
                if let dir = model.source.directory {
                    for name in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json"] {
                        let src = URL(fileURLWithPath: dir).appendingPathComponent(name)
                        let dst = url.appendingPathComponent(name)
                        guard FileManager.default.fileExists(atPath: src.path) else { continue }
                        do {
                            try FileManager.default.copyItem(at: src, to: dst)
                        } catch {
                            throw LocatedError(path: src.path, "cannot copy it into the model folder (\(FoundationErrorText.reason(error)))")
                        }
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
