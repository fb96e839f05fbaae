import Foundation
import QBGeneration
import QBModel
import QBText

/// Runs a cancel case: cancellation at an exact step, counted in steps, never in time.
///
/// **What "within one step" means.** The generation loop checks for cancellation before
/// sampling each id, before each decode step's forward pass, and (inside the forward pass)
/// before every layer of every prefill chunk. A cancellation requested while id N is
/// being emitted must therefore end the request with exactly N ids and no further forward
/// pass: the cache holds the prompt and ids 1…N−1 (id N was sampled but never run through
/// the model), and the loop polls exactly once more. One requested during prefill, before
/// layer k of chunk c, must end with no id generated, exactly the c whole chunks in the
/// cache, and no layer run after the poll that saw it. A request arriving from another
/// thread can land mid-layer; it is then seen at the next poll, so the bound is one layer
/// of compute during prefill and one step (at most one further id) during decode.
///
/// Exact steps need a trigger that fires synchronously inside the loop, which
/// `GenerationSession`'s public API does not offer (its stream is asynchronous), so the
/// step checks drive `GenerationLoop.run`, the very loop the session runs inside its
/// actor, on a state of their own. The session's own `cancel()` is then checked through
/// its public API: cancelled right after submission, the request must end cancelled with
/// its prefill incomplete, and the next request on the same session must give what a
/// fresh session gives.
struct CancellationCaseRunner {
    let loaded: LoadedModel
    let repetitions: Int
    let warmup: Int
    let interrupt: InterruptFlag
    let progress: @Sendable (BenchProgress) -> Void
    let index: Int

    var model: any LanguageModel { loaded.model }
    var tokenizer: any Tokenizer { loaded.tokenizer }

    /// Requests made after a cancellation to show the engine is usable.
    static let followUpTokens = 8

    struct Outcome {
        var summary: GenerationSummary
        var polls = 0
        var pollsAfterRequest = 0
        var cacheLength = 0
        var cachedCount = 0
        var latency: Double?
        var requested = false
    }

    func run(_ c: SuiteCase, into result: inout CaseResult) async throws {
        guard let point = c.cancel else { return }
        let parameters = GenerationParameters(maxTokens: c.maxTokens, stop: c.stop, sampling: c.sampling)
        result.maxTokens = c.maxTokens
        result.sampling = c.sampling
        result.stop = c.stop
        guard let prompt = try PromptBuilder.promptOrSkip(c.prompt, loaded: loaded, result: &result) else { return }
        let ids = prompt.tokens(with: tokenizer)
        result.promptTokens = ids.count
        let modelContext = model.config.contextLength
        let context = c.context ?? min(modelContext, ids.count + max(c.maxTokens, Self.followUpTokens))
        result.contextLength = context
        guard context <= modelContext, ids.count + Self.followUpTokens <= context else {
            result.status = .skipped
            result.notes.append("the prompt (\(ids.count) tokens) and a follow-up do not fit the context (\(context); the model's is \(modelContext))")
            return
        }
        let state = loaded.makeState(contextLength: context, batch: c.batch)
        let batch = state.maxBatch
        let layers = model.config.numHiddenLayers
        let chunks = (ids.count + batch - 1) / batch
        if case .prefill(let k) = point, k >= layers * chunks {
            result.status = .skipped
            result.notes.append("cancel after \(k) layers lies beyond this model's prefill (\(chunks) chunks of \(layers) layers)")
            return
        }
        result.memory = loaded.memoryBreakdown(contextLength: context, batch: c.batch)

        var cached: [TokenID] = []
        var stepChecks: [CheckResult] = []
        let runs = warmup + repetitions + 1
        for run in 0..<(warmup + repetitions) {
            if interrupt.isSet { throw BenchInterrupted() }
            state.cache.truncate(to: 0)
            cached = []
            let peakReset = MemoryStats.resetPeak()
            let outcome = try probe(point, prompt: prompt, parameters: parameters, state: state, cached: &cached)
            let memory = MemorySnapshot(MemoryStats.current(), peakWasReset: peakReset)
            let checks = stepCheck(point, outcome, promptTokens: ids.count, batch: batch, layers: layers)
            if stepChecks.isEmpty || checks.contains(where: { !$0.passed }) && stepChecks.allSatisfy(\.passed) {
                stepChecks = checks.map { c in
                    CheckResult(c.name, c.passed, c.passed ? c.detail : "run \(run + 1): \(c.detail)")
                }
            }
            if run >= warmup {
                result.runs.append(RunRecord(
                    repetition: run - warmup + 1, turns: [TurnRecord(outcome.summary, endToEndSeconds: outcome.summary.totalSeconds)],
                    cancelLatencySeconds: outcome.latency, memory: memory))
            }
            if run == warmup || warmup + repetitions == 1 {
                result.output = CaseOutput(
                    text: [OutputChecks.spelledText(outcome.summary.generatedTokens, after: ids.last, tokenizer: tokenizer)],
                    tokens: [outcome.summary.generatedTokens], stopString: nil)
            }
            progress(.runFinished(index: index, run: run + 1, runs: runs))
        }
        result.checks = stepChecks

        // Usable afterwards: the next request on the state the cancellation left.
        let follow = GenerationParameters(maxTokens: Self.followUpTokens, sampling: c.sampling)
        var afterCancel = try GenerationLoop.run(
            model: model, tokenizer: tokenizer, state: state, cachedTokens: &cached, prompt: prompt, parameters: follow)
        let freshState = loaded.makeState(contextLength: context, batch: c.batch)
        var freshCached: [TokenID] = []
        let fresh = try GenerationLoop.run(
            model: model, tokenizer: tokenizer, state: freshState, cachedTokens: &freshCached, prompt: prompt, parameters: follow)
        let usable = afterCancel.generatedTokens == fresh.generatedTokens && afterCancel.finishReason == fresh.finishReason
            && afterCancel.finishReason != .cancelled
        afterCancel.tokenTimestamps = []
        result.checks.append(CheckResult(
            "usable_after_cancel", usable,
            usable ? "the next request (reusing \(afterCancel.reusedPromptTokens) cached ids) matches a fresh state's \(fresh.generatedTokens.count) ids"
                : "the next request gave \(afterCancel.generatedTokens) (\(afterCancel.finishReason.rawValue)), a fresh state \(fresh.generatedTokens) (\(fresh.finishReason.rawValue))"))

        // The session's own cancel(), through its public API.
        result.checks += try await sessionChecks(prompt, ids: ids, sampling: c.sampling, follow: follow, batch: c.batch)
        progress(.runFinished(index: index, run: runs, runs: runs))

        var samples: [Metric: [Double]] = [:]
        for r in result.runs {
            if let l = r.cancelLatencySeconds { samples[.cancelLatency, default: []].append(l) }
            GenerationCaseRunner.appendMemory(r.memory, to: &samples)
        }
        result.metrics = GenerationCaseRunner.estimates(samples)
    }

    /// One cancelled request, the trigger firing synchronously inside the loop.
    func probe(
        _ point: CancelPoint, prompt: Prompt, parameters: GenerationParameters, state: InferenceState, cached: inout [TokenID]
    ) throws -> Outcome {
        let clock = ContinuousClock()
        var requestedAt: ContinuousClock.Instant?
        var polls = 0, pollsAfter = 0, emitted = 0
        var flag = false
        let summary = try GenerationLoop.run(
            model: model, tokenizer: tokenizer, state: state, cachedTokens: &cached, prompt: prompt, parameters: parameters,
            isCancelled: {
                polls += 1
                if case .prefill(let k) = point, polls == k + 1, !flag {
                    flag = true
                    requestedAt = clock.now
                }
                if flag { pollsAfter += 1 }
                return flag || interrupt.isSet
            },
            onEvent: { event in
                guard case .token = event else { return }
                emitted += 1
                if case .decode(let n) = point, emitted == n, !flag {
                    flag = true
                    requestedAt = clock.now
                }
            })
        let end = clock.now
        if interrupt.isSet { throw BenchInterrupted() }
        return Outcome(
            summary: summary, polls: polls, pollsAfterRequest: pollsAfter, cacheLength: state.cache.length,
            cachedCount: cached.count, latency: requestedAt.map { (end - $0).seconds }, requested: flag)
    }

    func stepCheck(_ point: CancelPoint, _ o: Outcome, promptTokens: Int, batch: Int, layers: Int) -> [CheckResult] {
        let s = o.summary
        let finished = CheckResult(
            "finish_reason", s.finishReason == .cancelled,
            s.finishReason == .cancelled ? "cancelled" : "finished \(s.finishReason.rawValue) before the cancel point")
        let consistent = o.cachedCount == o.cacheLength
        switch point {
        case .decode(let n):
            let want = promptTokens + n - 1
            let ok = o.requested && s.generatedTokens.count == n && o.cacheLength == want && o.pollsAfterRequest == 1 && consistent
            return [finished, CheckResult(
                "stops_within_one_step", ok,
                "cancelled at id \(n): \(s.generatedTokens.count) ids generated, cache \(o.cacheLength) positions (expected \(want)), "
                    + "\(o.pollsAfterRequest) poll(s) after the request")]
        case .prefill(let k):
            let chunksDone = k / layers
            let want = min(chunksDone * batch, promptTokens)
            let ok = o.requested && s.generatedTokens.isEmpty && o.cacheLength == want && o.polls == k + 1 && consistent
                && o.cacheLength < promptTokens
            return [finished, CheckResult(
                "stops_within_one_layer", ok,
                "cancelled before layer \(k % layers + 1) of chunk \(chunksDone + 1): \(s.generatedTokens.count) ids generated, "
                    + "cache \(o.cacheLength) of \(promptTokens) prompt positions (expected \(want)), \(o.polls) polls (expected \(k + 1))")]
        }
    }

    /// The session's own cancellation, through its public API.
    ///
    /// `session_cancel`: `cancel()` issued right after a request is submitted ends it
    /// `cancelled`, with the cache holding exactly what was run (the prompt positions
    /// computed, plus every generated id but the last). The request is as long as the
    /// context allows (up to 512 generated ids) so that the cancellation, which travels
    /// from this task while the request computes on the session's actor, lands before
    /// the end; if the request still wins the race it is retried, up to three times.
    /// `task_cancel`: `collect` called from an already-cancelled task returns at the first
    /// poll, before any layer ran. `session_usable_after_cancel`: the session's next
    /// request gives exactly what a fresh session gives.
    func sessionChecks(
        _ prompt: Prompt, ids: [TokenID], sampling: SamplingParameters, follow: GenerationParameters, batch: Int?
    ) async throws -> [CheckResult] {
        let context = min(model.config.contextLength, ids.count + 512)
        let long = GenerationParameters(maxTokens: context - ids.count, sampling: sampling)
        let session = try loaded.makeSession(contextLength: context, batch: batch)
        var checks: [CheckResult] = []

        var detail = "the request finished before cancel() arrived, three times"
        var cancelled = false
        for attempt in 1...3 {
            await session.reset()
            let stream = await session.generate(prompt, parameters: long)
            session.cancel()
            var summary: GenerationSummary?
            for try await event in stream {
                if case .finished(let s) = event { summary = s }
            }
            if summary == nil { summary = await session.lastSummary }
            guard let s = summary, s.finishReason == .cancelled else { continue }
            let cached = await session.cachedTokens
            let generated = s.generatedTokens.count
            // Cancelled during prefill (or at the poll right after it): at most the prompt.
            // During decode: the prompt and every generated id but the last when it landed
            // between emitting an id and finishing that id's forward pass, or every id when
            // it landed at the poll before sampling the next one.
            let consistent = generated == 0
                ? cached.count <= ids.count
                : cached.count == ids.count + generated - 1 || cached.count == ids.count + generated
            let n = min(cached.count, ids.count)
            cancelled = consistent && Array(cached.prefix(n)) == Array(ids.prefix(n))
            detail = "cancel() after submitting (attempt \(attempt)): cancelled "
                + (generated == 0 ? "during prefill, \(cached.count) of \(ids.count) prompt positions cached"
                    : "after \(generated) of \(long.maxTokens) ids, \(cached.count) positions cached (\(ids.count) prompt + \(generated) generated, less one if the last was not yet run)")
            break
        }
        checks.append(CheckResult("session_cancel", cancelled, detail))

        await session.reset()
        let viaTask = Task { () -> (GenerationResult, Int) in
            withUnsafeCurrentTask { $0?.cancel() }
            let r = try await session.collect(prompt, parameters: long)
            return (r, await session.cachedTokens.count)
        }
        let (taskResult, cachedAfterTask) = try await viaTask.value
        let taskOK = taskResult.summary.finishReason == .cancelled && taskResult.tokens.isEmpty && cachedAfterTask == 0
        checks.append(CheckResult(
            "task_cancel", taskOK,
            "collect() from a cancelled task: \(taskResult.summary.finishReason.rawValue), \(taskResult.tokens.count) ids, "
                + "\(cachedAfterTask) positions cached"))

        let next = try await session.collect(prompt, parameters: follow)
        let fresh = try await loaded.makeSession(contextLength: context, batch: batch).collect(prompt, parameters: follow)
        let same = next.tokens == fresh.tokens && next.text == fresh.text && next.summary.finishReason != .cancelled
        checks.append(CheckResult(
            "session_usable_after_cancel", same,
            same ? "the next request matches a fresh session (\(next.tokens.count) ids)"
                : "the next request gave \(next.tokens), a fresh session \(fresh.tokens)"))
        return checks
    }
}
