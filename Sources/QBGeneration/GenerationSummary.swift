import QBText

/// What a finished generation reports: why it stopped, how many ids went where, and when.
/// Times are seconds on a monotonic clock, measured from the moment the request started
/// running (after any wait for an earlier request on the same session).
public struct GenerationSummary: Sendable, Codable, Equatable {
    public var finishReason: FinishReason
    /// The stop string that ended generation, when one did.
    public var stopString: String?
    /// Ids in the prompt.
    public var promptTokens: Int
    /// Prompt ids whose keys and values were already in the session's cache (a shared
    /// prefix with an earlier turn or a fork's parent): prefill saved.
    public var reusedPromptTokens: Int
    /// The ids generated, in order, end-of-sequence ids excluded. Ids that spelled a stop
    /// string are included: they were generated, even though their text is not shown.
    public var generatedTokens: [TokenID]
    /// Running the prompt through the model (the ids not reused).
    public var prefillSeconds: Double
    /// From the start to the first generated id (nil when none was).
    public var timeToFirstToken: Double?
    /// From the first generated id to the end: the remaining decode steps.
    public var decodeSeconds: Double
    /// From the start to the end.
    public var totalSeconds: Double
    /// When each generated id was chosen, from the start.
    public var tokenTimestamps: [Double]

    public init(
        finishReason: FinishReason, stopString: String? = nil, promptTokens: Int, reusedPromptTokens: Int = 0,
        generatedTokens: [TokenID], prefillSeconds: Double, timeToFirstToken: Double? = nil,
        decodeSeconds: Double, totalSeconds: Double = 0, tokenTimestamps: [Double] = []
    ) {
        self.finishReason = finishReason
        self.stopString = stopString
        self.promptTokens = promptTokens
        self.reusedPromptTokens = reusedPromptTokens
        self.generatedTokens = generatedTokens
        self.prefillSeconds = prefillSeconds
        self.timeToFirstToken = timeToFirstToken
        self.decodeSeconds = decodeSeconds
        self.totalSeconds = totalSeconds
        self.tokenTimestamps = tokenTimestamps
    }

    /// Ids actually run through the model for the prompt.
    public var prefilledTokens: Int { promptTokens - reusedPromptTokens }

    /// Decode steps per second after the first id (0 with fewer than two ids).
    public var decodeTokensPerSecond: Double {
        generatedTokens.count > 1 && decodeSeconds > 0 ? Double(generatedTokens.count - 1) / decodeSeconds : 0
    }
}

extension Duration {
    /// The duration in seconds as a Double.
    public var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}
