import Foundation
import QBGeneration
import QBModel
import QBText

/// Runs a generation or chat case through `GenerationSession`, the product's API:
/// warmups, measured repetitions (each from an empty cache, so prefill is measured), one
/// more run through `collect` for the stream-equals-collect check, then the checks.
struct GenerationCaseRunner {
    let loaded: LoadedModel
    let repetitions: Int
    let warmup: Int
    let interrupt: InterruptFlag
    let progress: @Sendable (BenchProgress) -> Void
    let index: Int

    /// One request's outcome as the client saw it.
    struct Turn: Sendable {
        var tokens: [TokenID] = []
        var text = ""
        var pieces: [String] = []
        var summary: GenerationSummary?
        var endToEnd: Double = 0
        /// The last prompt id (what the first generated id's bytes follow).
        var previous: TokenID?
    }

    var model: any LanguageModel { loaded.model }
    var tokenizer: any Tokenizer { loaded.tokenizer }

    func run(_ c: SuiteCase, into result: inout CaseResult) async throws {
        var parameters = GenerationParameters(maxTokens: c.maxTokens, stop: c.stop, sampling: c.sampling)
        if c.forceEndOfSequence {
            parameters.sampling.logitBias += loaded.stopTokenIDs.map { LogitBias(token: $0, bias: 100) }
        }
        result.maxTokens = c.maxTokens
        result.sampling = parameters.sampling

        guard let first = try PromptBuilder.promptOrSkip(c.prompt, loaded: loaded, result: &result) else { return }
        let promptIDs = first.tokens(with: tokenizer)
        result.promptTokens = promptIDs.count
        let modelContext = model.config.contextLength
        let context = c.context ?? min(modelContext, neededContext(c, promptTokens: promptIDs.count))
        result.contextLength = context
        if context > modelContext {
            result.status = .skipped
            result.notes.append("context \(context) exceeds the model's (\(modelContext))")
            return
        }
        if promptIDs.count > context {
            result.status = .skipped
            result.notes.append("the prompt (\(promptIDs.count) tokens) does not fit the context (\(context))")
            return
        }
        result.memory = loaded.memoryBreakdown(contextLength: context, batch: c.batch)
        let session = try loaded.makeSession(contextLength: context, batch: c.batch)

        // A stop string cut from the model's own output.
        if let probe = c.stopFromOutput {
            await session.reset()
            let reference = try await conversation(c, first, parameters, session: session, streamed: false)
            let text = reference.first?.text ?? ""
            guard let stop = Self.cut(text, probe) else {
                result.status = .skipped
                result.notes.append("the model produced no text to cut a stop string from")
                return
            }
            parameters.stop.append(stop)
            result.notes.append("stop string \(OutputChecks.quote(stop)) cut from the unstopped output")
        }
        result.stop = parameters.stop

        let runs = warmup + repetitions + 1
        var all: [[Turn]] = []
        for run in 0..<(warmup + repetitions) {
            try checkInterrupt()
            await session.reset()
            let peakReset = MemoryStats.resetPeak()
            let turns = try await conversation(c, first, parameters, session: session, streamed: true)
            let memory = MemorySnapshot(MemoryStats.current(), peakWasReset: peakReset)
            try checkInterrupt()
            all.append(turns)
            if run >= warmup {
                result.runs.append(RunRecord(
                    repetition: run - warmup + 1,
                    turns: turns.map { TurnRecord($0.summary ?? Self.empty, endToEndSeconds: $0.endToEnd) }, memory: memory))
            }
            progress(.runFinished(index: index, run: run + 1, runs: runs))
        }
        await session.reset()
        let collected = try await conversation(c, first, parameters, session: session, streamed: false)
        progress(.runFinished(index: index, run: runs, runs: runs))

        let measured = Array(all.dropFirst(warmup))
        guard let shown = measured.first ?? all.first else { return }
        result.output = CaseOutput(text: shown.map(\.text), tokens: shown.map(\.tokens), stopString: shown.last?.summary?.stopString)
        result.checks = checks(c, parameters: parameters, shown: shown, all: all, collected: collected)
        result.metrics = Self.metrics(result.runs)
    }

    func checkInterrupt() throws { if interrupt.isSet { throw BenchInterrupted() } }

    /// Positions a case needs: the prompt, each turn's reply, and for chats the follow-up
    /// messages with room for the rendering's markup. A reply re-enters the conversation as
    /// text, which can take more ids than were generated (an invalid byte the model
    /// produced comes back as U+FFFD, three bytes), hence four positions per reply id.
    func neededContext(_ c: SuiteCase, promptTokens: Int) -> Int {
        let replies = c.turns.isEmpty ? c.maxTokens : (c.turns.count + 1) * c.maxTokens * 4
        let followUps = c.turns.reduce(0) { $0 + tokenizer.encode($1, addSpecialTokens: false, parseSpecialTokens: false).count + 16 }
        return promptTokens + replies + followUps + (c.turns.isEmpty ? 0 : 64)
    }

    static let empty = GenerationSummary(finishReason: .cancelled, promptTokens: 0, generatedTokens: [], prefillSeconds: 0, decodeSeconds: 0)

    /// Runs the case's requests in order on `session` (one, or one per chat turn, the
    /// model's reply appended before each follow-up).
    func conversation(
        _ c: SuiteCase, _ first: Prompt, _ parameters: GenerationParameters, session: GenerationSession, streamed: Bool
    ) async throws -> [Turn] {
        var messages: [SuiteMessage] = []
        if case .messages(let system, let m) = c.prompt { messages = ChatPromptRenderer.conversation(system: system, m) }
        var turns: [Turn] = []
        for t in 0...c.turns.count {
            var prompt = first
            if t > 0 {
                messages.append(SuiteMessage(role: .assistant, content: turns[t - 1].text))
                messages.append(SuiteMessage(role: .user, content: c.turns[t - 1]))
                prompt = try ChatPromptRenderer.prompt(for: messages, format: loaded.chatFormat.get(), tokenizer: tokenizer)
            }
            var turn = try await request(prompt, parameters, session: session, streamed: streamed)
            turn.previous = prompt.tokens(with: tokenizer).last
            turns.append(turn)
        }
        return turns
    }

    func request(_ prompt: Prompt, _ parameters: GenerationParameters, session: GenerationSession, streamed: Bool) async throws -> Turn {
        let clock = ContinuousClock()
        let start = clock.now
        var turn = Turn()
        if streamed {
            let stream = await session.generate(prompt, parameters: parameters)
            for try await event in stream {
                if interrupt.isSet { session.cancel() }
                switch event {
                case .token(let id): turn.tokens.append(id)
                case .text(let piece):
                    turn.pieces.append(piece)
                    turn.text += piece
                case .finished(let s): turn.summary = s
                }
            }
            if turn.summary == nil { turn.summary = await session.lastSummary }
        } else {
            let r = try await session.collect(prompt, parameters: parameters)
            turn.tokens = r.tokens
            turn.text = r.text
            turn.summary = r.summary
        }
        turn.endToEnd = (clock.now - start).seconds
        return turn
    }

    /// `length` characters from character `start` (moved earlier to fit), avoiding U+FFFD
    /// and leading or trailing whitespace-only cuts; nil for empty text.
    static func cut(_ text: String, _ probe: StopProbe) -> String? {
        let chars = Array(text)
        guard !chars.isEmpty else { return nil }
        let length = min(probe.length, chars.count)
        var start = min(probe.start, chars.count - length)
        // Prefer a cut without replacement characters, searching forward then back.
        let clean = { (s: Int) in !chars[s..<(s + length)].contains("\u{FFFD}") }
        if !clean(start) {
            if let s = (start...(chars.count - length)).first(where: clean) ?? (0..<start).reversed().first(where: clean) { start = s }
        }
        return String(chars[start..<(start + length)])
    }

    func checks(
        _ c: SuiteCase, parameters: GenerationParameters, shown: [Turn], all: [[Turn]], collected: [Turn]
    ) -> [CheckResult] {
        var checks: [CheckResult] = []

        // Streamed text equals collected text (and the ids too).
        let streamedTexts = shown.map(\.text), collectedTexts = collected.map(\.text)
        let sameText = streamedTexts == collectedTexts && shown.map(\.tokens) == collected.map(\.tokens)
        checks.append(CheckResult(
            "stream_equals_collect", sameText,
            sameText ? "streamed and collected output agree" :
                "streamed \(OutputChecks.quote(streamedTexts.joined(separator: " | "))), collected \(OutputChecks.quote(collectedTexts.joined(separator: " | ")))"))

        // Same seed, same tokens: every run, warmups and the collect run included.
        checks.append(OutputChecks.sameTokens((all + [collected]).map { $0.map(\.tokens) }))

        // Valid UTF-8 and stop strings, turn by turn.
        var utf8 = CheckResult("valid_utf8", true), stops = CheckResult("no_stop_leak", true)
        for (i, t) in shown.enumerated() {
            let finish = t.summary?.finishReason ?? .cancelled
            let spelled = OutputChecks.spelledText(t.tokens, after: t.previous, tokenizer: tokenizer)
            let u = OutputChecks.textMatchesTokens(text: t.text, spelled: spelled, finish: finish, stopString: t.summary?.stopString)
            let s = OutputChecks.stopStrings(
                text: t.text, spelled: spelled, stops: parameters.stop, finish: finish, stopString: t.summary?.stopString)
            let prefix = shown.count > 1 ? "turn \(i + 1): " : ""
            if i == 0 || !u.passed && utf8.passed { utf8 = CheckResult(u.name, u.passed, prefix + u.detail) }
            if i == 0 || !s.passed && stops.passed { stops = CheckResult(s.name, s.passed, prefix + s.detail) }
        }
        checks.append(utf8)
        checks.append(stops)

        // The finish reason.
        let expected = c.expect.finishReasons ?? [.endOfSequence, .stopString, .maxTokens, .contextFull]
        checks.append(OutputChecks.finishReason(shown.map { $0.summary?.finishReason ?? .cancelled }, expected: expected))

        // The case's own expectations.
        let e = c.expect
        let counts = shown.map(\.tokens.count)
        if let lo = e.minTokens {
            let ok = counts.allSatisfy { $0 >= lo }
            checks.append(CheckResult("min_tokens", ok, "generated \(counts.map(String.init).joined(separator: ", ")), at least \(lo) expected"))
        }
        if let hi = e.maxTokens {
            let ok = counts.allSatisfy { $0 <= hi }
            checks.append(CheckResult("max_tokens", ok, "generated \(counts.map(String.init).joined(separator: ", ")), at most \(hi) expected"))
        }
        let allText = streamedTexts.joined()
        for s in e.contains {
            checks.append(CheckResult("contains", allText.contains(s), "output \(allText.contains(s) ? "contains" : "lacks") \(OutputChecks.quote(s))"))
        }
        for s in e.notContains {
            checks.append(CheckResult("not_contains", !allText.contains(s), "output \(allText.contains(s) ? "contains" : "lacks") \(OutputChecks.quote(s))"))
        }
        if e.reusesPrompt {
            let reused = shown.dropFirst().map { $0.summary?.reusedPromptTokens ?? 0 }
            let ok = !reused.isEmpty && reused.allSatisfy { $0 > 0 }
            checks.append(CheckResult(
                "reuses_prompt", ok,
                reused.isEmpty ? "no follow-up turn" : "follow-up turns reused \(reused.map(String.init).joined(separator: ", ")) cached prompt tokens"))
        }
        if e.promptRoundTrip {
            let texts = PromptBuilder.texts(c.prompt, turns: c.turns)
            // Encoded as a prompt is (BOS and, for SentencePiece-style tokenizers, a dummy
            // prefix space), then spelled as the stream spells ids after BOS (which drops that
            // space again).
            let bad = texts.first { text in
                let ids = tokenizer.encode(text, addSpecialTokens: true, parseSpecialTokens: false)
                let afterBOS = ids.first != nil && ids.first == tokenizer.bosTokenID
                let back = OutputChecks.spelledText(
                    Array(ids.dropFirst(afterBOS ? 1 : 0)), after: afterBOS ? ids.first : nil, tokenizer: tokenizer)
                return back != text
            }
            checks.append(CheckResult(
                "prompt_round_trip", bad == nil,
                bad.map { "decode(encode(\(OutputChecks.quote($0)))) differs" } ?? "\(texts.count) prompt texts survive encode and decode"))
        }
        if e.noReplacementCharacters {
            let n = allText.unicodeScalars.filter { $0 == "\u{FFFD}" }.count
            checks.append(CheckResult("no_replacement_characters", n == 0, "\(n) U+FFFD in the output"))
        }
        return checks
    }

    /// Per-run figures → estimates. A chat run's requests count together: TTFT is their
    /// mean, prefill and decode speeds are total tokens over total time, inter-token
    /// latencies are pooled, end-to-end is the sum.
    static func metrics(_ runs: [RunRecord]) -> [String: Estimate] {
        var samples: [Metric: [Double]] = [:]
        for run in runs {
            guard let turns = run.turns, !turns.isEmpty else { continue }
            let ttfts = turns.compactMap(\.timeToFirstTokenSeconds)
            if !ttfts.isEmpty { samples[.timeToFirstToken, default: []].append(ttfts.reduce(0, +) / Double(ttfts.count)) }
            let prefilled = turns.reduce(0) { $0 + $1.promptTokens - $1.reusedPromptTokens }
            let prefillTime = turns.reduce(0) { $0 + $1.prefillSeconds }
            if prefillTime > 0 && prefilled > 0 { samples[.prefillTokensPerSecond, default: []].append(Double(prefilled) / prefillTime) }
            let steps = turns.reduce(0) { $0 + max($1.generatedTokens - 1, 0) }
            let decodeTime = turns.reduce(0) { $0 + ($1.generatedTokens > 1 ? $1.decodeSeconds : 0) }
            if steps > 0 && decodeTime > 0 { samples[.decodeTokensPerSecond, default: []].append(Double(steps) / decodeTime) }
            var gaps: [Double] = []
            for t in turns where t.tokenTimestamps.count > 1 {
                gaps += zip(t.tokenTimestamps.dropFirst(), t.tokenTimestamps).map { $0 - $1 }
            }
            for (metric, p) in [(Metric.interTokenP50, 50.0), (.interTokenP90, 90), (.interTokenP99, 99)] {
                if let v = Statistics.percentile(gaps, p) { samples[metric, default: []].append(v) }
            }
            samples[.endToEnd, default: []].append(turns.reduce(0) { $0 + $1.endToEndSeconds })
            appendMemory(run.memory, to: &samples)
        }
        return estimates(samples)
    }

    static func appendMemory(_ m: MemorySnapshot, to samples: inout [Metric: [Double]]) {
        if let v = m.peakResidentBytes { samples[.peakResident, default: []].append(Double(v)) }
        if let v = m.allocatedBytes { samples[.allocated, default: []].append(Double(v)) }
        if let v = m.heapBytes { samples[.heap, default: []].append(Double(v)) }
    }

    static func estimates(_ samples: [Metric: [Double]]) -> [String: Estimate] {
        var out: [String: Estimate] = [:]
        for (metric, values) in samples { out[metric.rawValue] = Estimate(values) }
        return out
    }
}
