import Foundation
import QBSupport
import QBFormats
import QBJinja

/// A model's chat template and the special-token text templates print.
public struct ModelChatTemplate: Sendable {
    /// The template, or nil when the model carries none (use `ChatTemplate.chatML`).
    public var template: ChatTemplate?
    /// The special-token text templates print as `bos_token` and `eos_token` (empty when unknown).
    public var bosToken: String
    public var eosToken: String
    /// The file the template (or the tokens) came from.
    public var origin: String
}

extension ChatTemplate {
    /// Reads a template file (`.jinja` or any text file). A malformed template fails with
    /// `ChatTemplateError.syntax` naming the file and line.
    public static func load(templateFile path: String) throws -> ChatTemplate {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ChatTemplateError.unreadable(path: path, reason: "no such file")
        }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ChatTemplateError.unreadable(path: path, reason: "\(FoundationErrorText.reason(error))")
        }
        return try ChatTemplate(source: text, name: path)
    }

    /// Finds a model's chat template:
    /// - a `.gguf` file: `tokenizer.chat_template`, BOS/EOS text from its vocabulary;
    /// - a `tokenizer_config.json`: its `chat_template` (the "default" one of a list);
    /// - a folder: its tokenizer_config.json, else `chat_template.jinja` or
    ///   `chat_template.json` (newer transformers), else a single `.gguf` in it;
    /// - a `.jinja` file: that template, without special tokens.
    /// A model with no template gives `template == nil`.
    public static func load(modelPath path: String) throws -> ModelChatTemplate {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ChatTemplateError.unreadable(path: path, reason: "no such file or directory")
        }
        let url = URL(fileURLWithPath: path)
        if !isDirectory.boolValue {
            if path.hasSuffix(".gguf") { return try fromGGUF(path) }
            if path.hasSuffix(".json") { return try fromTokenizerConfig(url, directory: url.deletingLastPathComponent()) }
            return ModelChatTemplate(template: try load(templateFile: path), bosToken: "", eosToken: "", origin: path)
        }
        let config = url.appendingPathComponent("tokenizer_config.json")
        if FileManager.default.fileExists(atPath: config.path) { return try fromTokenizerConfig(config, directory: url) }
        if let t = try siblingTemplate(url) { return ModelChatTemplate(template: t, bosToken: "", eosToken: "", origin: t.name) }
        let ggufs = (try? FileManager.default.contentsOfDirectory(atPath: path))?.filter { $0.hasSuffix(".gguf") } ?? []
        if ggufs.count == 1 { return try fromGGUF(url.appendingPathComponent(ggufs[0]).path) }
        throw ChatTemplateError.unreadable(
            path: path, reason: "no tokenizer_config.json, chat_template.jinja or single .gguf file in this folder")
    }

    private static func fromTokenizerConfig(_ url: URL, directory: URL) throws -> ModelChatTemplate {
        let config: TokenizerConfig
        do {
            config = try TokenizerConfig(contentsOf: url)
        } catch {
            throw ChatTemplateError.unreadable(path: url.path, reason: "\(error)")
        }
        var template: ChatTemplate?
        if let text = config.chatTemplate {
            template = try ChatTemplate(source: text, name: url.path + " (chat_template)")
        } else {
            template = try siblingTemplate(directory)
        }
        return ModelChatTemplate(
            template: template, bosToken: config.bosToken ?? "", eosToken: config.eosToken ?? "", origin: url.path)
    }

    /// chat_template.jinja, or chat_template.json's "chat_template", next to the model.
    private static func siblingTemplate(_ directory: URL) throws -> ChatTemplate? {
        let jinja = directory.appendingPathComponent("chat_template.jinja")
        if FileManager.default.fileExists(atPath: jinja.path) { return try load(templateFile: jinja.path) }
        let json = directory.appendingPathComponent("chat_template.json")
        if FileManager.default.fileExists(atPath: json.path) {
            let data: Data
            do {
                data = try Data(contentsOf: json)
            } catch {
                throw ChatTemplateError.unreadable(path: json.path, reason: FoundationErrorText.reason(error))
            }
            guard case .object(let o) = try JinjaJSON.parse(data, source: json.path),
                case .string(let text)? = o["chat_template"]
            else {
                throw ChatTemplateError.unreadable(path: json.path, reason: "no \"chat_template\" string in it")
            }
            return try ChatTemplate(source: text, name: json.path + " (chat_template)")
        }
        return nil
    }

    private static func fromGGUF(_ path: String) throws -> ModelChatTemplate {
        let gguf: GGUFFile
        do {
            gguf = try GGUFFile(path: path)
        } catch {
            throw ChatTemplateError.unreadable(path: path, reason: "\(error)")
        }
        let tokens = gguf.metadata["tokenizer.ggml.tokens"]?.array ?? GGUFArray(.string, [])
        func token(_ key: String) -> String {
            guard let id = gguf.metadata[key]?.int, id >= 0, id < tokens.count else { return "" }
            return tokens[id].string ?? ""
        }
        var template: ChatTemplate?
        if let text = gguf.metadata["tokenizer.chat_template"]?.string {
            template = try ChatTemplate(source: text, name: path + " (tokenizer.chat_template)")
        }
        return ModelChatTemplate(
            template: template, bosToken: token("tokenizer.ggml.bos_token_id"),
            eosToken: token("tokenizer.ggml.eos_token_id"), origin: path)
    }
}
