import QBText

/// Generated ids to text as they arrive, never splitting a character: the one place the
/// generation loop turns tokens into text. It uses the tokenizer's per-token bytes and
/// `Utf8Stream`; a streaming detokenizer from QBText (handling, for example, pieces whose
/// text depends on more than the previous id) can replace its body without touching the
/// loop.
public struct TokenTextStream: Sendable {
    private let tokenizer: any Tokenizer
    private var previous: TokenID?
    private var utf8 = Utf8Stream()

    /// `previous` is the id before the first one pushed (the prompt's last), since some
    /// tokenizers render a piece differently after BOS.
    public init(tokenizer: any Tokenizer, previous: TokenID?) {
        self.tokenizer = tokenizer
        self.previous = previous
    }

    /// The whole characters that `id` completes.
    public mutating func push(_ id: TokenID) -> String {
        defer { previous = id }
        return utf8.push(tokenizer.bytes(for: id, after: previous))
    }

    /// Bytes still pending at the end (an incomplete character becomes U+FFFD).
    public mutating func flush() -> String { utf8.flush() }
}
