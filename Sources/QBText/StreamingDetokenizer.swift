/// Turns ids into text one token at a time, emitting text only when it is whole.
///
/// What it emits, concatenated (`push` for every id, then `finish`), is exactly what the
/// tokenizer's `decode(_:skipSpecialTokens:)` gives for the same ids: both run the same
/// per-token steps (see `PieceDecoding`). So it never emits part of a UTF-8 sequence, nor a
/// U+FFFD the full decode lacks: bytes of an unfinished character (a byte-level piece, a
/// `<0xNN>` byte token) wait for the rest, and a SentencePiece run of byte tokens is judged
/// when it ends, as Hugging Face's ByteFallback decoder judges it. SentencePiece's leading
/// space is dropped at the start of the text, as the decoders' `Strip` does, and kept
/// when the stream continues a prompt.
///
/// For tokenizers from outside this module it falls back to their `bytes(for:after:)`
/// with UTF-8 completion.
public struct StreamingDetokenizer: Sendable {
    private let decoder: any PieceDecoding
    private var state: DecodeState
    private var output: [UInt8] = []
    /// Whether special tokens (BOS, EOS, chat markers) are left out of the text.
    public let skipSpecialTokens: Bool

    /// A stream from the start of a sequence.
    public init(tokenizer: any Tokenizer, skipSpecialTokens: Bool = true) {
        decoder = Self.pieceDecoder(tokenizer)
        state = DecodeState(rules: decoder.decodingRules)
        self.skipSpecialTokens = skipSpecialTokens
    }

    /// A stream continuing a sequence whose first ids (`context`, typically the prompt)
    /// were shown already: their text is not emitted, but everything that depends on it
    /// (the leading-space rule, a character split across the boundary) is decoded exactly
    /// as if the whole sequence were.
    public init(tokenizer: any Tokenizer, context: some Sequence<TokenID>, skipSpecialTokens: Bool = true) {
        self.init(tokenizer: tokenizer, skipSpecialTokens: skipSpecialTokens)
        for id in context { state.push(id, decoder, skipSpecialTokens: skipSpecialTokens, into: &output) }
        output.removeAll(keepingCapacity: true)
    }

    /// A stream continuing after `previous` (the prompt's last id) when the rest of the
    /// context is not at hand. The text is taken to have started unless `previous` is nil
    /// or a special token that shows nothing (a bare BOS), so a SentencePiece space after a
    /// prompt is kept and the first piece after BOS loses it. `init(tokenizer:context:)` is
    /// exact where this is a good guess.
    public init(tokenizer: any Tokenizer, previous: TokenID?, skipSpecialTokens: Bool = true) {
        decoder = Self.pieceDecoder(tokenizer)
        state = DecodeState(rules: decoder.decodingRules, previous: previous)
        self.skipSpecialTokens = skipSpecialTokens
        if let previous, !(skipSpecialTokens && tokenizer.isSpecial(previous)) { state.markStarted() }
    }

    /// The last id pushed (or the context's last).
    public var previous: TokenID? { state.previous }

    /// Feeds one id; returns the text it completes (often empty, sometimes several
    /// characters that earlier ids began).
    public mutating func push(_ id: TokenID) -> String {
        state.push(id, decoder, skipSpecialTokens: skipSpecialTokens, into: &output)
        return take()
    }

    /// Ends the stream: whatever was held back (an unfinished character, which becomes
    /// U+FFFD as in the full decode). The stream can then start over.
    public mutating func finish() -> String {
        state.finish(into: &output)
        return take()
    }

    private mutating func take() -> String {
        guard !output.isEmpty else { return "" }
        defer { output.removeAll(keepingCapacity: true) }
        return String(decoding: output, as: UTF8.self)
    }

    private static func pieceDecoder(_ tokenizer: any Tokenizer) -> any PieceDecoding {
        (tokenizer as? any PieceDecoding) ?? BytesAdapter(tokenizer: tokenizer)
    }

    /// Any tokenizer, through the protocol's per-token bytes.
    private struct BytesAdapter: PieceDecoding {
        let tokenizer: any Tokenizer
        var decodingRules: DecodingRules { .plain }

        func appendPiece(_ id: TokenID, after previous: TokenID?, skipSpecialTokens: Bool, to bytes: inout [UInt8]) -> PieceKind {
            if skipSpecialTokens && tokenizer.isSpecial(id) { return .none }
            bytes.append(contentsOf: tokenizer.bytes(for: id, after: previous))
            return .text
        }
    }
}
