import QBModel
import QBText

/// Greedy decoding: the argmax at every step, the lowest id on ties.
public enum Greedy {
    /// Runs `prompt` (already tokenized, BOS included when wanted) from an empty cache, then
    /// generates up to `maxTokens` ids greedily, calling `onText` with each whole piece of
    /// text as it becomes available. Stops on any end-of-sequence id of the model or the
    /// tokenizer (not emitted) or when the context is full.
    public static func generate(
        model: any LanguageModel, tokenizer: any Tokenizer, prompt: [TokenID], maxTokens: Int,
        state: InferenceState, onText: (String) -> Void = { _ in }
    ) throws -> GenerationSummary {
        var cached: [TokenID] = []
        return try GenerationLoop.run(
            model: model, tokenizer: tokenizer, state: state, cachedTokens: &cached, prompt: .tokens(prompt),
            parameters: GenerationParameters(maxTokens: maxTokens),
            onEvent: { event in
                if case .text(let piece) = event { onText(piece) }
            })
    }
}
