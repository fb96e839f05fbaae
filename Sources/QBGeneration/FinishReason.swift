/// Why a generation stopped.
public enum FinishReason: String, Sendable, Codable {
    /// The model produced one of its end-of-sequence ids (not emitted).
    case endOfSequence = "eos"
    /// A stop string appeared in the text (it and what follows are not emitted).
    case stopString = "stop"
    case maxTokens = "max_tokens"
    /// The KV cache has no room for another position.
    case contextFull = "context_full"
    /// The consumer went away, its task was cancelled, or the session was told to cancel.
    case cancelled
}
