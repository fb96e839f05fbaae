import QBText

/// A request the session cannot run. Nothing has been changed when one of these is thrown.
public enum GenerationError: Error, Equatable, CustomStringConvertible {
    /// No ids: the text was empty and the tokenizer adds no BOS.
    case emptyPrompt
    /// The prompt alone does not fit in the session's context.
    case promptTooLong(tokens: Int, contextLength: Int)
    /// A prompt id outside the model's vocabulary.
    case invalidToken(id: TokenID, vocabularySize: Int)
    /// A session's context must be at least one position and at most the model's.
    case invalidContextLength(requested: Int, modelMaximum: Int)
    /// The sampler had no candidate left (every id banned by the logit bias or the
    /// penalties), at the given generated-token index.
    case noCandidate(step: Int)

    public var description: String {
        switch self {
        case .emptyPrompt:
            return "the prompt is empty (no text and the tokenizer adds no BOS)"
        case .promptTooLong(let tokens, let context):
            return "the prompt is \(tokens) tokens, longer than the context (\(context))"
        case .invalidToken(let id, let vocab):
            return "prompt token \(id) is outside the model's vocabulary (0..<\(vocab))"
        case .invalidContextLength(let requested, let maximum):
            return "the context length must be between 1 and the model's context (\(maximum)), got \(requested)"
        case .noCandidate(let step):
            return "no token can be sampled at step \(step): the logit bias and penalties leave every token at -inf"
        }
    }
}
