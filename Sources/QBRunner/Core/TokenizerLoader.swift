import Foundation
import QBModel
import QBText

/// Finds the tokenizer for a model: the one named by `--tokenizer`, else the one in the
/// model's folder.
public enum TokenizerLoader {
    public static func load(for model: any LanguageModel, path explicit: String?) throws -> any Tokenizer {
        // An empty vocabulary can encode nothing: refused here rather than later as an
        // empty prompt.
        func nonEmpty(_ t: any Tokenizer, _ path: String) throws -> any Tokenizer {
            guard t.vocabularySize > 0 else { throw TokenizerError.unreadable(path: path, reason: "the vocabulary is empty") }
            return t
        }
        if let p = explicit { return try nonEmpty(TokenizerFactory.open(p, vocabularySize: model.config.vocabSize), p) }
        if model.source.format == .gguf { return try nonEmpty(GGUFTokenizer.tokenizer(path: model.source.path), model.source.path) }
        if let dir = model.source.directory, (try? TokenizerFactory.resolve(dir)) != nil {
            let path = (try? TokenizerFactory.resolve(dir)).map { "\($0)" } ?? dir
            return try nonEmpty(TokenizerFactory.open(dir, vocabularySize: model.config.vocabSize), path)
        }
        throw TokenizerError.unreadable(
            path: model.source.path,
            reason: "the model carries no tokenizer; pass --tokenizer (tokenizer.json, tokenizer.model, tokenizer.bin, a .gguf or a folder)")
    }
}
