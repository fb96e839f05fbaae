import QBText

/// One item of a streamed generation, in the order things happen.
public enum GenerationEvent: Sendable, Equatable {
    /// A generated id (end-of-sequence ids are not reported), as soon as it is chosen.
    case token(TokenID)
    /// Text that is final: whole characters, stop strings held back until they can no
    /// longer match and never emitted.
    case text(String)
    /// The last event of a request that did not fail.
    case finished(GenerationSummary)
}

/// A generation gathered whole: the same ids and text a stream delivers.
public struct GenerationResult: Sendable, Equatable {
    public var text: String
    public var summary: GenerationSummary
    public var tokens: [TokenID] { summary.generatedTokens }

    public init(text: String, summary: GenerationSummary) {
        self.text = text
        self.summary = summary
    }
}
