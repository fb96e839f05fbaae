import Foundation
import QBSupport

/// The parts of a Hugging Face `tokenizer_config.json` the engine uses.
///
/// `add_bos_token` / `add_eos_token` override what tokenizer.json's post-processor adds
/// (as transformers' Llama tokenizers do when rebuilding their post-processor); absent
/// keys leave the post-processor alone.
public struct TokenizerConfig: Sendable, Equatable {
    public var addBOSToken: Bool?
    public var addEOSToken: Bool?
    /// Token text, e.g. `<|begin_of_text|>` (the AddedToken-object form is unwrapped).
    public var bosToken: String?
    public var eosToken: String?
    /// The Jinja chat template, verbatim. When the file lists several named templates this
    /// is the one named "default" (or the first).
    public var chatTemplate: String?

    public init(
        addBOSToken: Bool? = nil, addEOSToken: Bool? = nil, bosToken: String? = nil,
        eosToken: String? = nil, chatTemplate: String? = nil
    ) {
        self.addBOSToken = addBOSToken
        self.addEOSToken = addEOSToken
        self.bosToken = bosToken
        self.eosToken = eosToken
        self.chatTemplate = chatTemplate
    }

    /// Parses the JSON text of a tokenizer_config.json; `path` names it in errors.
    public init(data: Data, path: String) throws {
        let f = JSONFields(path: path)
        let root = try f.parse(data)
        addBOSToken = try f.optionalBool(root["add_bos_token"], "add_bos_token")
        addEOSToken = try f.optionalBool(root["add_eos_token"], "add_eos_token")
        bosToken = try Self.tokenText(root["bos_token"], "bos_token", f)
        eosToken = try Self.tokenText(root["eos_token"], "eos_token", f)
        chatTemplate = try Self.template(root["chat_template"], f)
    }

    /// Reads `url`; a missing or unreadable file is `TokenizerError.unreadable`.
    public init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw TokenizerError.unreadable(path: url.path, reason: FoundationErrorText.reason(error))
        }
        try self.init(data: data, path: url.path)
    }

    private static func tokenText(_ value: JSONValue?, _ field: String, _ f: JSONFields) throws -> String? {
        guard let v = f.present(value) else { return nil }
        if let s = v.stringValue { return s }
        if let o = v.objectValue { return try f.string(o["content"], field + ".content") }
        throw f.wrongType(field, "a string or an AddedToken object")
    }

    private static func template(_ value: JSONValue?, _ f: JSONFields) throws -> String? {
        guard let v = f.present(value) else { return nil }
        if let s = v.stringValue { return s }
        guard let list = v.arrayValue else { throw f.wrongType("chat_template", "a string or a list") }
        var first: String?
        for (i, entry) in list.enumerated() {
            let o = try f.object(entry, "chat_template[\(i)]")
            let name = try f.optionalString(o["name"], "chat_template[\(i)].name")
            let text = try f.string(o["template"], "chat_template[\(i)].template")
            if name == "default" { return text }
            if first == nil { first = text }
        }
        return first
    }
}
