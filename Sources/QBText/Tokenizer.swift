/// A token id. Int32 matches the on-disk formats (llama2.c, GGUF) and halves the size of
/// token buffers compared to Int.
public typealias TokenID = Int32

/// Anything that turns text into the ids a model was trained with and back.
///
/// Every tokenizer the engine reads (llama2.c's tokenizer.bin, Hugging Face tokenizer.json
/// of the byte-level and SentencePiece kinds, tiktoken ranks, SentencePiece models and GGUF
/// vocabularies; `TokenizerFactory` opens any of them) conforms to this one protocol, so the
/// layers above never know which file a model came with. Conformers are immutable and
/// `Sendable`: one instance serves any number of threads.
public protocol Tokenizer: Sendable {
    /// Number of ids the tokenizer can produce (may be less than the model's embedding rows).
    var vocabularySize: Int { get }
    /// The beginning-of-sequence id, if the vocabulary has one.
    var bosTokenID: TokenID? { get }
    /// Every id that ends a generation (a model may declare several).
    var eosTokenIDs: Set<TokenID> { get }
    /// Whether `encode(_:addSpecialTokens:)` prepends BOS when asked to add special tokens,
    /// as the model declares it (`add_bos_token`).
    var addsBOS: Bool { get }

    /// Encodes text. With `addSpecialTokens` the model's declared prefix (BOS) is added.
    /// Special-token text inside `text` is parsed as special tokens only when
    /// `parseSpecialTokens` is true.
    func encode(_ text: String, addSpecialTokens: Bool, parseSpecialTokens: Bool) -> [TokenID]

    /// The raw bytes token `id` stands for when it follows token `previous` in a stream
    /// (SentencePiece-style tokenizers drop a leading space after BOS). Special tokens give
    /// their text; unknown ids give no bytes. Never traps.
    func bytes(for id: TokenID, after previous: TokenID?) -> [UInt8]

    /// Decodes a whole sequence to text (invalid UTF-8 is replaced by U+FFFD).
    func decode(_ ids: [TokenID]) -> String

    /// Whether `id` is a special/control token (BOS, EOS, chat markers).
    func isSpecial(_ id: TokenID) -> Bool

    /// Decodes a whole sequence as the tokenizer's reference implementation does, special
    /// tokens left out when `skipSpecialTokens` (by id, as transformers does). A
    /// `StreamingDetokenizer` fed the same ids emits exactly this text.
    func decode(_ ids: [TokenID], skipSpecialTokens: Bool) -> String

    /// The token as the vocabulary writes it: SentencePiece pieces with `▁`, byte-level
    /// pieces in GPT-2's alphabet (`Ġhello`), special tokens as their text. Nil for ids
    /// outside the vocabulary.
    func tokenText(for id: TokenID) -> String?

    /// The model's Jinja chat template, when the tokenizer's files carry one.
    var chatTemplate: String? { get }
}

extension Tokenizer {
    public func encode(_ text: String) -> [TokenID] {
        encode(text, addSpecialTokens: true, parseSpecialTokens: false)
    }

    /// Encodes text a chat template rendered: special-token text is parsed, and BOS is added
    /// only when the model asks for it (`addsBOS`) and the text does not already start with
    /// the BOS token's text, so a template that writes `{{ bos_token }}` gets exactly one.
    /// When the text starts with BOS nothing else is added either (like transformers'
    /// `apply_chat_template`, which encodes without special tokens).
    public func encode(rendered text: String, addSpecialTokens: Bool = true) -> [TokenID] {
        var add = addSpecialTokens
        if add, let bos = bosTokenID, let bosText = tokenText(for: bos), !bosText.isEmpty,
            text.utf8.starts(with: bosText.utf8)
        {
            add = false
        }
        return encode(text, addSpecialTokens: add, parseSpecialTokens: true)
    }

    // Defaults for conformers outside this module, written against the older protocol.
    public func decode(_ ids: [TokenID], skipSpecialTokens: Bool) -> String {
        skipSpecialTokens ? decode(ids.filter { !isSpecial($0) }) : decode(ids)
    }

    public func tokenText(for id: TokenID) -> String? { nil }

    public var chatTemplate: String? { nil }
}

/// Errors from reading a tokenizer file. Each names the file and what is wrong with it.
public enum TokenizerError: Error, CustomStringConvertible, Equatable {
    case unreadable(path: String, reason: String)
    case malformed(path: String, field: String, reason: String)
    case unsupported(path: String, feature: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): return "\(path): cannot read tokenizer: \(reason)"
        case .malformed(let path, let field, let reason): return "\(path): malformed tokenizer field '\(field)': \(reason)"
        case .unsupported(let path, let feature): return "\(path): unsupported tokenizer feature: \(feature)"
        }
    }
}
