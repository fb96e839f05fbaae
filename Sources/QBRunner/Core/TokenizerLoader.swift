import Foundation
import QBModel
import QBText

/// Finds the tokenizer for a model: the one named by `--tokenizer`, else the one in the
/// model's folder.
public enum TokenizerLoader {
    public static func load(for model: any LanguageModel, path explicit: String?) throws -> any Tokenizer {
        if let p = explicit { return try TokenizerFactory.open(p, vocabularySize: model.config.vocabSize) }
        if model.source.format == .gguf { return try GGUFTokenizer.tokenizer(path: model.source.path) }
        if let dir = model.source.directory, (try? TokenizerFactory.resolve(dir)) != nil {
            return try TokenizerFactory.open(dir, vocabularySize: model.config.vocabSize)
        }
        throw TokenizerError.unreadable(
            path: model.source.path,
            reason: "the model carries no tokenizer; pass --tokenizer (tokenizer.json, tokenizer.model, tokenizer.bin, a .gguf or a folder)")
    }
}
