import Foundation
import QBKernels
import QBModel
import QBText

/// Why a generation stopped.
public enum FinishReason: String, Sendable, Codable {
    case endOfSequence = "eos"
    case maxTokens = "max_tokens"
    case contextFull = "context_full"
    case cancelled
}

/// What a finished generation reports.
public struct GenerationSummary: Sendable {
    public var promptTokens: Int
    public var generatedTokens: [TokenID]
    public var finishReason: FinishReason
    public var prefillSeconds: Double
    public var decodeSeconds: Double
}

/// Greedy decoding: the argmax at every step, the lowest id on ties.
public enum Greedy {
    public static func argmax(_ logits: [Float]) -> Int {
        var best = 0
        for i in 1..<logits.count where logits[i] > logits[best] { best = i }
        return best
    }

    /// Runs `prompt` (already tokenized, BOS included when wanted), then generates up to
    /// `maxTokens` ids, calling `onText` with each whole piece of text as it becomes
    /// available. Stops on any of the model's stop ids (not emitted) or when the context is full.
    public static func generate(
        model: LlamaModel, tokenizer: any Tokenizer, prompt: [TokenID], maxTokens: Int,
        state: InferenceState, onText: (String) -> Void = { _ in }
    ) throws -> GenerationSummary {
        guard !prompt.isEmpty else {
            throw ModelError.invalidField(path: "prompt", field: "tokens", reason: "empty prompt (no BOS and no text)")
        }
        let stops = Set(model.stopTokens)
        var stream = Utf8Stream()
        let clock = ContinuousClock()
        let t0 = clock.now
        var logits = try model.forward(prompt, state: state, logits: .last)
        let t1 = clock.now
        var generated: [TokenID] = []
        var previous = prompt.last
        var reason = FinishReason.maxTokens
        while generated.count < maxTokens {
            let next = TokenID(argmax(logits))
            if stops.contains(next) { reason = .endOfSequence; break }
            generated.append(next)
            onText(stream.push(tokenizer.bytes(for: next, after: previous)))
            previous = next
            if generated.count == maxTokens { break }
            if state.cache.length >= state.cache.capacity { reason = .contextFull; break }
            logits = try model.forward([next], state: state, logits: .last)
        }
        let tail = stream.flush()
        if !tail.isEmpty { onText(tail) }
        let t2 = clock.now
        return GenerationSummary(
            promptTokens: prompt.count, generatedTokens: generated, finishReason: reason,
            prefillSeconds: (t1 - t0).seconds, decodeSeconds: (t2 - t1).seconds)
    }
}

extension Duration {
    /// The duration in seconds as a Double.
    public var seconds: Double {
        let c = components
        return Double(c.seconds) + Double(c.attoseconds) * 1e-18
    }
}
