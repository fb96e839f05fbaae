import QBText

/// What a request starts from. An enum so chat messages (rendered by a chat template) can
/// join as another case without changing the session's API.
public enum Prompt: Sendable, Equatable {
    /// Text, tokenized with the session's tokenizer, BOS added as the tokenizer declares.
    case text(String)
    /// Ids used as they are (BOS included when wanted).
    case tokens([TokenID])

    /// The ids the model sees.
    public func tokens(with tokenizer: any Tokenizer) -> [TokenID] {
        switch self {
        case .text(let text): return tokenizer.encode(text, addSpecialTokens: true, parseSpecialTokens: false)
        case .tokens(let ids): return ids
        }
    }
}
