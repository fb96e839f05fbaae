import Foundation
import QBModel
import QBText

/// Finds the tokenizer for a model: the one named by `--tokenizer`, else the one in the
/// model's folder.
public enum TokenizerLoader {
    public static func load(for model: LlamaModel, path explicit: String?) throws -> any Tokenizer {
        if let p = explicit { return try open(p, vocabularySize: model.config.vocabSize) }
        if let dir = model.source.directory {
            let json = URL(fileURLWithPath: dir).appendingPathComponent("tokenizer.json").path
            if FileManager.default.fileExists(atPath: json) { return try BPETokenizer(path: json) }
        }
        throw TokenizerError.unreadable(
            path: model.source.path,
            reason: "the model carries no tokenizer; pass --tokenizer (tokenizer.bin, tokenizer.json or a folder holding one)")
    }

    public static func open(_ path: String, vocabularySize: Int) throws -> any Tokenizer {
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            throw TokenizerError.unreadable(path: path, reason: "no such file or directory")
        }
        if isDir.boolValue {
            return try BPETokenizer(path: URL(fileURLWithPath: path).appendingPathComponent("tokenizer.json").path)
        }
        if path.hasSuffix(".json") { return try BPETokenizer(path: path) }
        return try Llama2cTokenizer(path: path, vocabularySize: vocabularySize)
    }
}
