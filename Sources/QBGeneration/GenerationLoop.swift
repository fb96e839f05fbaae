import QBKernels
import QBModel
import QBText

/// One request, start to finish, on the caller's thread: prompt-prefix reuse, prefill,
/// then sample, emit, decode until a finish reason. `GenerationSession` runs it inside its
/// actor; the command line and the greedy reference call it directly. It never suspends,
/// so whoever calls it owns `state` for the duration.
public enum GenerationLoop {
    /// Runs `prompt` and generates.
    ///
    /// - Parameters:
    ///   - cachedTokens: the ids whose keys and values fill `state.cache` (its first
    ///     `state.cache.length` positions). The longest common prefix with the prompt is
    ///     reused (all but the prompt's last id, whose logits are needed); the rest of the
    ///     cache is dropped. On return, cancelled or not, it again describes the cache.
    ///   - isCancelled: polled before sampling each id, before each decode step and (by
    ///     the forward pass) before every layer; once it returns true the request ends with
    ///     `.cancelled` within one layer or one step.
    ///   - onEvent: `.token` and `.text` events, synchronously, in order; `.finished` is
    ///     left to the caller, which gets the summary as the return value.
    /// - Throws: `GenerationError` or `SamplingParameterError` before anything runs (the
    ///   cache is untouched); model errors from the forward pass (the cache is cut back to
    ///   the last consistent length).
    public static func run(
        model: any LanguageModel, tokenizer: any Tokenizer, state: InferenceState, cachedTokens: inout [TokenID],
        prompt: Prompt, parameters: GenerationParameters,
        isCancelled: () -> Bool = { false }, onEvent: (GenerationEvent) -> Void = { _ in }
    ) throws -> GenerationSummary {
        let clock = ContinuousClock()
        let start = clock.now
        func since(_ t: ContinuousClock.Instant = clock.now) -> Double { (t - start).seconds }

        let vocab = model.config.vocabSize
        try parameters.validate(vocabularySize: vocab)
        let promptIDs = prompt.tokens(with: tokenizer)
        guard !promptIDs.isEmpty else { throw GenerationError.emptyPrompt }
        let rows = model.weights.embedding.rows
        if let bad = promptIDs.first(where: { $0 < 0 || Int($0) >= rows }) {
            throw GenerationError.invalidToken(id: bad, vocabularySize: rows)
        }
        let cache = state.cache
        guard promptIDs.count <= cache.capacity else {
            throw GenerationError.promptTooLong(tokens: promptIDs.count, contextLength: cache.capacity)
        }

        // Reuse: keep the shared prefix, but always recompute the prompt's last id.
        if cachedTokens.count != cache.length {
            let consistent = min(cachedTokens.count, cache.length)
            cachedTokens.removeLast(cachedTokens.count - consistent)
            cache.truncate(to: consistent)
        }
        var reused = 0
        let limit = min(cachedTokens.count, promptIDs.count - 1)
        while reused < limit && cachedTokens[reused] == promptIDs[reused] { reused += 1 }
        cache.truncate(to: reused)
        cachedTokens.removeLast(cachedTokens.count - reused)

        var summary = GenerationSummary(
            finishReason: .maxTokens, promptTokens: promptIDs.count, reusedPromptTokens: reused,
            generatedTokens: [], prefillSeconds: 0, decodeSeconds: 0)
        summary.generatedTokens.reserveCapacity(min(parameters.maxTokens, cache.capacity))
        summary.tokenTimestamps.reserveCapacity(min(parameters.maxTokens, cache.capacity))
        func finish(_ reason: FinishReason) -> GenerationSummary {
            let end = clock.now
            summary.finishReason = reason
            summary.totalSeconds = since(end)
            if let first = summary.timeToFirstToken { summary.decodeSeconds = since(end) - first }
            return summary
        }

        // Prefill.
        let fresh = Array(promptIDs[reused...])
        let prefillStart = clock.now
        var logits: [Float]
        do {
            logits = try model.forward(fresh, state: state, logits: .last, isCancelled: isCancelled)
        } catch is ForwardCancelled {
            // The chunks that completed are valid; keep them for the next request.
            cachedTokens.append(contentsOf: promptIDs[reused..<cache.length])
            summary.prefillSeconds = (clock.now - prefillStart).seconds
            return finish(.cancelled)
        } catch {
            cache.truncate(to: reused)
            throw error
        }
        cachedTokens.append(contentsOf: fresh)
        summary.prefillSeconds = (clock.now - prefillStart).seconds

        // Decode.
        let stopIDs = Set(model.stopTokens).union(tokenizer.eosTokenIDs)
        var sampler = parameters.sampling.makeSampler(vocabularySize: vocab)
        var text = StreamingDetokenizer(tokenizer: tokenizer, context: promptIDs)
        var stops = StopStringFilter(parameters.stop)
        var sequence = promptIDs
        sequence.reserveCapacity(promptIDs.count + min(parameters.maxTokens, cache.capacity))
        func emit(_ piece: String) {
            let shown = stops.push(piece)
            if !shown.isEmpty { onEvent(.text(shown)) }
        }
        func flushText() {
            emit(text.finish())
            let rest = stops.flush()
            if !rest.isEmpty { onEvent(.text(rest)) }
        }

        if parameters.maxTokens == 0 { return finish(.maxTokens) }
        while true {
            if isCancelled() { flushText(); return finish(.cancelled) }
            let next = sampler.sample(&logits, history: sequence[...])
            // The default sampler leaves the biased, penalised logits in place: a pick at
            // -inf means nothing was left to pick (it would otherwise be id 0).
            if parameters.sampling.sampler == .default, Int(next) < logits.count, logits[Int(next)] == -.infinity {
                flushText()
                throw GenerationError.noCandidate(step: summary.generatedTokens.count)
            }
            if stopIDs.contains(next) { flushText(); return finish(.endOfSequence) }
            let now = since()
            if summary.timeToFirstToken == nil { summary.timeToFirstToken = now }
            summary.tokenTimestamps.append(now)
            summary.generatedTokens.append(next)
            sequence.append(next)
            onEvent(.token(next))
            emit(text.push(next))
            if let stop = stops.matched {
                summary.stopString = stop
                return finish(.stopString)
            }
            if summary.generatedTokens.count >= parameters.maxTokens { flushText(); return finish(.maxTokens) }
            if cache.length >= cache.capacity { flushText(); return finish(.contextFull) }
            if isCancelled() { flushText(); return finish(.cancelled) }
            do {
                logits = try model.forward([next], state: state, logits: .last, isCancelled: isCancelled)
            } catch is ForwardCancelled {
                flushText()
                return finish(.cancelled)
            } catch {
                cache.truncate(to: cachedTokens.count)
                throw error
            }
            cachedTokens.append(next)
        }
    }
}
