import Foundation
import XCTest
import QBTestSupport
@testable import QBGeneration
import QBKernels
import QBModel
import QBText

/// The session's contract: streamed, collected and the greedy reference agree; seeds are
/// deterministic at any thread count; stops, context limits, prefix reuse and forks.
final class GenerationSessionTests: XCTestCase {
    func storiesSession(context: Int = 512, threads: Int = 1) throws -> (TestModels.Stories, GenerationSession) {
        let s = try TestModels.stories()
        let session = try GenerationSession(
            model: s.model, tokenizer: s.tokenizer, contextLength: context, pool: ThreadPool(threads: threads))
        return (s, session)
    }

    func tinySession(context: Int = 256, threads: Int = 1, maxBatch: Int = 256) throws -> (TestModels.Tiny, GenerationSession) {
        let t = try TestModels.tiny()
        let session = try GenerationSession(
            model: t.model, tokenizer: t.tokenizer, contextLength: context, pool: ThreadPool(threads: threads), maxBatch: maxBatch)
        return (t, session)
    }

    func testStreamedEqualsCollectedEqualsTheGreedyReference() async throws {
        let (s, session) = try storiesSession()
        let c = try XCTUnwrap(s.cases.first { $0.temperature == 0 })
        let params = GenerationParameters(maxTokens: c.steps)  // prompt is BOS alone
        let streamed = try await session.streamed(.text(c.prompt), params)
        let collected = try await session.collect(.text(c.prompt), parameters: params)
        XCTAssertEqual(streamed.text, c.expected_stdout)
        XCTAssertEqual(collected.text, c.expected_stdout)
        XCTAssertEqual(streamed.tokens, collected.tokens)
        XCTAssertEqual(streamed.summary?.generatedTokens, streamed.tokens)
        XCTAssertEqual(streamed.summary?.finishReason, .maxTokens)
        XCTAssertEqual(collected.summary.finishReason, .maxTokens)

        var greedyText = ""
        let state = s.model.makeState(contextLength: 512, pool: ThreadPool(threads: 2))
        let greedy = try Greedy.generate(
            model: s.model, tokenizer: s.tokenizer, prompt: [1], maxTokens: c.steps, state: state) { greedyText += $0 }
        XCTAssertEqual(greedy.generatedTokens, collected.tokens)
        XCTAssertEqual(greedyText, collected.text)
    }

    func testSummaryTimingsAreConsistent() async throws {
        let (_, session) = try tinySession()
        let r = try await session.collect(.text("Hello there"), parameters: GenerationParameters(maxTokens: 12))
        let s = r.summary
        XCTAssertEqual(s.tokenTimestamps.count, s.generatedTokens.count)
        XCTAssertEqual(s.timeToFirstToken, s.tokenTimestamps.first)
        XCTAssertEqual(s.tokenTimestamps, s.tokenTimestamps.sorted())
        XCTAssertGreaterThan(s.prefillSeconds, 0)
        XCTAssertLessThanOrEqual(s.prefillSeconds, s.timeToFirstToken ?? 0)
        XCTAssertLessThanOrEqual((s.timeToFirstToken ?? 0) + s.decodeSeconds, s.totalSeconds + 1e-9)
        XCTAssertEqual(s.promptTokens, t(session).encode("Hello there").count)
    }

    private func t(_ session: GenerationSession) -> any Tokenizer { session.tokenizer }

    func testSameSeedSameTokensAtOneAndTwoThreadsStreamedOrCollected() async throws {
        let t = try TestModels.tiny()
        func run(seed: UInt64, threads: Int, streamed: Bool) async throws -> [TokenID] {
            let session = try GenerationSession(
                model: t.model, tokenizer: t.tokenizer, contextLength: 128, pool: ThreadPool(threads: threads))
            var p = GenerationParameters(maxTokens: 40)
            p.sampling = SamplingParameters(temperature: 1, topK: 0, topP: 0.98, minP: 0, repeatPenalty: 1.1, seed: seed)
            if streamed { return try await session.streamed(.text("Once upon"), p).tokens }
            return try await session.collect(.text("Once upon"), parameters: p).tokens
        }
        let reference = try await run(seed: 7, threads: 1, streamed: false)
        XCTAssertEqual(reference.count, 40)
        let twoThreads = try await run(seed: 7, threads: 2, streamed: false)
        let twoThreadsStreamed = try await run(seed: 7, threads: 2, streamed: true)
        XCTAssertEqual(twoThreads, reference)
        XCTAssertEqual(twoThreadsStreamed, reference)
        let otherSeed = try await run(seed: 8, threads: 2, streamed: true)
        XCTAssertNotEqual(otherSeed, reference)
    }

    // MARK: Stops

    func testEndOfSequenceEndsGenerationAndIsNotEmitted() async throws {
        let (s, session) = try storiesSession()
        // The greedy story ends with the model's stop id (1, which run.c also stops on).
        let r = try await session.collect(.tokens([1]), parameters: GenerationParameters(maxTokens: 511))
        XCTAssertEqual(r.summary.finishReason, .endOfSequence)
        XCTAssertLessThan(r.tokens.count, 511)
        XCTAssertFalse(r.tokens.contains { s.model.stopTokens.contains($0) || s.tokenizer.eosTokenIDs.contains($0) })
        // Replaying that prefix, the very next choice is the stop id: zero tokens, same reason.
        let again = try await session.collect(.tokens([1] + r.tokens), parameters: GenerationParameters(maxTokens: 5))
        XCTAssertEqual(again.summary.finishReason, .endOfSequence)
        XCTAssertEqual(again.tokens, [])
        XCTAssertEqual(again.text, "")

        // The tokenizer's EOS (2) stops too, though the model only declares 1.
        XCTAssertFalse(s.model.stopTokens.contains(2))
        var forced = GenerationParameters(maxTokens: 5)
        forced.sampling.logitBias = [LogitBias(token: 2, bias: 1000)]
        let eos = try await session.collect(.tokens([1]), parameters: forced)
        XCTAssertEqual(eos.summary.finishReason, .endOfSequence)
        XCTAssertEqual(eos.tokens, [])
    }

    func testStopStringSplitAcrossTokensIsNeverEmitted() async throws {
        let (s, session) = try storiesSession()
        let reference = try await session.collect(.tokens([1]), parameters: GenerationParameters(maxTokens: 120))
        let ids = reference.tokens
        // Each token's text, as the stream renders it.
        var pieces: [String] = []
        var previous: TokenID = 1
        for id in ids {
            pieces.append(String(decoding: s.tokenizer.bytes(for: id, after: previous), as: UTF8.self))
            previous = id
        }
        XCTAssertEqual(pieces.joined(), reference.text)
        // A stop string made of the end of one piece and the start of the next, at its
        // first occurrence in the text.
        var chosen: (index: Int, stop: String, offset: Int)?
        var offset = 0
        for i in 0..<(ids.count - 1) {
            offset += pieces[i].count
            let a = pieces[i], b = pieces[i + 1]
            guard a.count >= 3, b.count >= 3 else { continue }
            let stop = String(a.suffix(2)) + String(b.prefix(2))
            if let r = reference.text.range(of: stop), reference.text.distance(from: reference.text.startIndex, to: r.lowerBound) == offset - 2 {
                chosen = (i, stop, offset - 2)
                break
            }
        }
        let c = try XCTUnwrap(chosen, "the greedy story has two adjacent pieces of 3+ characters")
        var events: [GenerationEvent] = []
        for try await e in await session.generate(.tokens([1]), parameters: GenerationParameters(maxTokens: 120, stop: [c.stop])) {
            events.append(e)
        }
        let text = events.compactMap { if case .text(let t) = $0 { t } else { nil } }.joined()
        XCTAssertEqual(text, String(reference.text.prefix(c.offset)))
        XCTAssertFalse(text.contains(c.stop))
        guard case .finished(let summary) = events.last else { return XCTFail("no summary") }
        XCTAssertEqual(summary.finishReason, .stopString)
        XCTAssertEqual(summary.stopString, c.stop)
        XCTAssertEqual(summary.generatedTokens, Array(ids.prefix(c.index + 2)), "generation stops at the token completing the stop string")
        // Text up to the first token of the split was shown before the second arrived.
        let secondTokenEvent = try XCTUnwrap(events.firstIndex(of: .token(ids[c.index + 1])))
        let before = events[..<secondTokenEvent].compactMap { if case .text(let t) = $0 { t } else { nil } }.joined()
        XCTAssertEqual(before, String(reference.text.prefix(c.offset)), "the stop string's first half was held back, nothing else")
    }

    func testAHeldBackPrefixIsReleasedWhenTheStopStringDoesNotComplete() async throws {
        let (_, session) = try storiesSession()
        let reference = try await session.collect(.tokens([1]), parameters: GenerationParameters(maxTokens: 60))
        XCTAssertTrue(reference.text.contains("little girl named Lily"), reference.text)
        let r = try await session.streamed(.tokens([1]), GenerationParameters(maxTokens: 60, stop: ["little girl named Bob"]))
        XCTAssertEqual(r.text, reference.text)
        XCTAssertEqual(r.summary?.finishReason, .maxTokens)
    }

    // MARK: Context

    func testContextLimitsEndCleanlyOrFailTyped() async throws {
        let (t, session) = try tinySession(context: 10)
        let prompt: [TokenID] = [5, 6, 7, 8]
        let full = try await session.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 100))
        XCTAssertEqual(full.summary.finishReason, .contextFull)
        // Four prompt positions, then one id per free position plus the last one sampled.
        XCTAssertEqual(full.tokens.count, 10 - 4 + 1)

        let capped = try await session.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 3))
        XCTAssertEqual(capped.summary.finishReason, .maxTokens)
        XCTAssertEqual(capped.tokens, Array(full.tokens.prefix(3)))

        let none = try await session.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 0))
        XCTAssertEqual(none.summary.finishReason, .maxTokens)
        XCTAssertEqual(none.tokens, [])

        let long = [TokenID](repeating: 9, count: 11)
        do {
            _ = try await session.streamed(.tokens(long), GenerationParameters(maxTokens: 1))
            XCTFail("a prompt longer than the context must fail")
        } catch {
            XCTAssertEqual(error as? GenerationError, .promptTooLong(tokens: 11, contextLength: 10))
        }
        do {
            _ = try await session.collect(.tokens([]), parameters: GenerationParameters())
            XCTFail("empty")
        } catch {
            XCTAssertEqual(error as? GenerationError, .emptyPrompt)
        }
        do {
            _ = try await session.collect(.tokens([1, 5000]), parameters: GenerationParameters())
            XCTFail("out of vocabulary")
        } catch {
            XCTAssertEqual(error as? GenerationError, .invalidToken(id: 5000, vocabularySize: 1024))
        }
        do {
            var bad = GenerationParameters()
            bad.sampling.topP = 0
            _ = try await session.collect(.tokens(prompt), parameters: bad)
            XCTFail("bad parameters")
        } catch {
            XCTAssertNotNil(error as? SamplingParameterError)
        }
        // None of that disturbed the session.
        let after = try await session.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 100))
        XCTAssertEqual(after.tokens, full.tokens)

        XCTAssertThrowsError(try GenerationSession(
            model: t.model, tokenizer: t.tokenizer, contextLength: 0, pool: ThreadPool(threads: 1)))
        XCTAssertThrowsError(try GenerationSession(
            model: t.model, tokenizer: t.tokenizer, contextLength: t.model.config.contextLength + 1, pool: ThreadPool(threads: 1)))
    }

    // MARK: Reuse and forks

    func testFollowUpTurnsPrefillOnlyWhatIsNew() async throws {
        let (s, session) = try storiesSession()
        let first = s.tokenizer.encode("Once upon a time")
        let turn1 = try await session.collect(.tokens(first), parameters: GenerationParameters(maxTokens: 20))
        XCTAssertEqual(turn1.summary.reusedPromptTokens, 0)
        XCTAssertEqual(turn1.tokens.count, 20)
        // The cache holds the prompt and every generated id but the last (never run).
        let cached = await session.cachedTokens
        XCTAssertEqual(cached, first + turn1.tokens.dropLast())

        let followUp = first + turn1.tokens + s.tokenizer.encode(" Then", addSpecialTokens: false, parseSpecialTokens: false)
        let turn2 = try await session.collect(.tokens(followUp), parameters: GenerationParameters(maxTokens: 20))
        XCTAssertEqual(turn2.summary.reusedPromptTokens, first.count + 19)
        XCTAssertEqual(turn2.summary.prefilledTokens, followUp.count - first.count - 19)

        // Same as a fresh session that prefills everything.
        let (_, fresh) = try storiesSession()
        let direct = try await fresh.collect(.tokens(followUp), parameters: GenerationParameters(maxTokens: 20))
        XCTAssertEqual(direct.summary.reusedPromptTokens, 0)
        XCTAssertEqual(turn2.tokens, direct.tokens)

        // An identical prompt reuses all but its last id; a different one only the shared prefix.
        let same = try await session.collect(.tokens(followUp), parameters: GenerationParameters(maxTokens: 1))
        XCTAssertEqual(same.summary.reusedPromptTokens, followUp.count - 1)
        let other = try await session.collect(.text("Tom had a dog"), parameters: GenerationParameters(maxTokens: 1))
        XCTAssertEqual(other.summary.reusedPromptTokens, 1, "only BOS is shared")
        await session.reset()
        let afterReset = try await session.collect(.tokens(followUp), parameters: GenerationParameters(maxTokens: 20))
        XCTAssertEqual(afterReset.summary.reusedPromptTokens, 0)
        XCTAssertEqual(afterReset.tokens, direct.tokens)
    }

    func testAForkContinuesExactlyLikeItsParentAndIndependently() async throws {
        let (s, parent) = try storiesSession(threads: 1)
        let prompt = s.tokenizer.encode("The cat")
        let turn1 = try await parent.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 30))
        let fork = try await parent.fork()
        let parentCache = await parent.cachedTokens
        let forkCache = await fork.cachedTokens
        XCTAssertEqual(forkCache, parentCache)
        let parentKV = await parent.cacheContents(), forkKV = await fork.cacheContents()
        // Bytes: layers x (K and V) x kv dim x positions x 2 (the f16 default cache).
        XCTAssertEqual(parentKV.count, 2 * s.model.config.numHiddenLayers * s.model.config.kvDim * parentCache.count * 2)
        XCTAssertEqual(parentKV, forkKV, "the fork's cache is bitwise the parent's")

        // Sampled continuations are sensitive to the last bit of the cache: identical
        // results mean the fork's keys and values are the parent's.
        let followUp = prompt + turn1.tokens + s.tokenizer.encode(" and", addSpecialTokens: false, parseSpecialTokens: false)
        var p = GenerationParameters(maxTokens: 40)
        p.sampling = SamplingParameters(temperature: 1.2, topK: 0, topP: 1, minP: 0, seed: 3)
        let onFork = try await fork.collect(.tokens(followUp), parameters: p)
        XCTAssertEqual(onFork.summary.reusedPromptTokens, parentCache.count)

        // The parent moves on elsewhere; the fork's cache is its own.
        _ = try await parent.collect(.text("A big dog"), parameters: GenerationParameters(maxTokens: 10))
        let onForkAgain = try await fork.collect(.tokens(followUp), parameters: p)
        XCTAssertEqual(onForkAgain.tokens, onFork.tokens)

        // And the parent, back on the forked history, agrees with the fork.
        let (_, replay) = try storiesSession(threads: 1)
        _ = try await replay.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 30))
        let onReplay = try await replay.collect(.tokens(followUp), parameters: p)
        XCTAssertEqual(onReplay.tokens, onFork.tokens)
        XCTAssertEqual(onReplay.text, onFork.text)
    }
}
