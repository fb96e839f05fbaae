import Foundation
import XCTest
import QBTestSupport
@testable import QBGeneration
import QBKernels
import QBModel
import QBRunner
import QBText

/// Cancellation is measured in steps and layers, never in wall-clock time: the session's
/// test hooks fire synchronously inside the loop, so a cancel issued from a hook at step N
/// (or cancellation poll N) must end the request at exactly that point.
final class CancellationTests: XCTestCase {
    /// A counter and a slot for a task handle, shared with `@Sendable` hooks.
    final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        private var maximum = 0
        private var task: Task<GenerationResult, any Error>?

        func increment() -> Int { lock.withLock { n += 1; return n } }
        func set(_ value: Int) { lock.withLock { n = value } }
        var count: Int { lock.withLock { n } }
        func record(_ value: Int) { lock.withLock { maximum = max(maximum, value) } }
        var recorded: Int { lock.withLock { maximum } }
        func hold(_ t: Task<GenerationResult, any Error>) { lock.withLock { task = t } }
        func cancelTask() { lock.withLock { task }?.cancel() }
    }

    /// One compute thread: cancellation does not depend on the pool, and a spinning pool
    /// on a busy two-core machine makes a thousand requests slow.
    func session(context: Int = 128, maxBatch: Int = 256, threads: Int = 1) throws -> GenerationSession {
        let t = try TestModels.tiny()
        return try GenerationSession(
            model: t.model, tokenizer: t.tokenizer, contextLength: context, pool: ThreadPool(threads: threads), maxBatch: maxBatch)
    }

    let prompt: [TokenID] = [1000, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58]

    func testSessionCancelDuringDecodeStopsWithinOneStep() async throws {
        let reference = try await session().collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 12))
        XCTAssertEqual(reference.tokens.count, 12)

        let s = try session()
        let tokens = Box()
        await s.setHooks(.init(onEvent: { event in
            if case .token = event, tokens.increment() == 5 { s.cancel() }
        }))
        let r = try await s.streamed(.tokens(prompt), GenerationParameters(maxTokens: 12))
        XCTAssertEqual(r.summary?.finishReason, .cancelled)
        XCTAssertEqual(r.tokens, Array(reference.tokens.prefix(5)), "no step after the one that cancelled")
        let cached = await s.cachedTokens
        XCTAssertEqual(cached, prompt + reference.tokens.prefix(4), "the cache holds what was run, nothing half-done")

        // Usable at once, and a later request is not cancelled by the earlier cancel().
        await s.setHooks(.init())
        let again = try await s.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 12))
        XCTAssertEqual(again.summary.finishReason, .maxTokens)
        XCTAssertEqual(again.tokens, reference.tokens)
        XCTAssertEqual(again.summary.reusedPromptTokens, prompt.count - 1)
    }

    func testCancelDuringPrefillStopsWithinOneLayer() async throws {
        let t = try TestModels.tiny()
        let layers = t.model.config.numHiddenLayers
        XCTAssertEqual(layers, 2)
        let reference = try await session().collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 6))

        // Chunks of 4 positions: 20 prompt ids are 5 chunks of 2 layers, one poll per layer.
        // Cancelling at poll 5 (the first layer of the third chunk) leaves two whole chunks.
        let s = try session(maxBatch: 4)
        let polls = Box()
        await s.setHooks(.init(onPoll: { n in
            polls.record(n)
            if n == 2 * layers + 1 { s.cancel() }
        }))
        let r = try await s.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 6))
        XCTAssertEqual(r.summary.finishReason, .cancelled)
        XCTAssertEqual(r.tokens, [])
        XCTAssertEqual(polls.recorded, 2 * layers + 1, "no layer ran after the cancelling poll")
        let cached = await s.cachedTokens
        XCTAssertEqual(cached, Array(prompt.prefix(8)), "the completed chunks stay in the cache")

        await s.setHooks(.init())
        let again = try await s.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 6))
        XCTAssertEqual(again.summary.reusedPromptTokens, 8)
        XCTAssertEqual(again.tokens, reference.tokens)
    }

    func testCancellingTheCollectingTaskCancelsTheRequest() async throws {
        let s = try session()
        let box = Box()
        await s.setHooks(.init(onEvent: { event in
            if case .token = event, box.increment() == 3 { box.cancelTask() }
        }))
        let (start, go) = AsyncStream<Void>.makeStream()
        let prompt = self.prompt
        let task = Task {
            for await _ in start { break }
            return try await s.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 50))
        }
        box.hold(task)
        go.yield()
        let r = try await task.value
        XCTAssertEqual(r.summary.finishReason, .cancelled)
        XCTAssertEqual(r.tokens.count, 3)
    }

    func testCancellingTheConsumingTaskCancelsTheStream() async throws {
        // The producer waits (inside its first token's hook) until the consumer is gone, so
        // the order of events is fixed; that needs a second cooperative thread.
        guard System.activeProcessorCount >= 2 else { throw XCTSkip("needs two cooperative threads") }
        let s = try session()
        let gate = DispatchSemaphore(value: 0)
        let tokens = Box()
        await s.setHooks(.init(onEvent: { event in
            if case .token = event, tokens.increment() == 1 { _ = gate.wait(timeout: .now() + 30) }
        }))
        let stream = await s.generate(.tokens(prompt), parameters: GenerationParameters(maxTokens: 50))
        let (seen, seenContinuation) = AsyncStream<Void>.makeStream()
        let consumer = Task {
            for try await event in stream {
                if case .token = event { seenContinuation.yield() }
            }
        }
        for await _ in seen { break }
        consumer.cancel()
        _ = try? await consumer.value
        gate.signal()
        let summary = await s.lastSummary
        XCTAssertEqual(summary?.finishReason, .cancelled)
        XCTAssertEqual(summary?.generatedTokens.count, 1)
        await s.setHooks(.init())
        let next = try await s.collect(.tokens(prompt), parameters: GenerationParameters(maxTokens: 4))
        XCTAssertEqual(next.summary.finishReason, .maxTokens)
    }

    func testDroppingAStreamCancelsItsRequest() async throws {
        let s = try session()
        let gate = DispatchSemaphore(value: 0)
        await s.setHooks(.init(onPoll: { n in if n == 1 { _ = gate.wait(timeout: .now() + 30) } }))
        do {
            // Created and dropped without being read.
            _ = await s.generate(.tokens(prompt), parameters: GenerationParameters(maxTokens: 50))
        }
        gate.signal()
        let summary = await s.lastSummary
        XCTAssertEqual(summary?.finishReason, .cancelled)
    }

    /// 1000 requests, each cancelled at a different point (prefill layers, before sampling,
    /// decode steps), leave tcmalloc's allocated bytes where they were.
    func testAThousandCancelledRequestsLeaveMemoryWhereItWas() async throws {
        guard MemoryStats.current().allocatedBytes != nil else { throw XCTSkip("tcmalloc statistics unavailable") }
        let s = try session(maxBatch: 8)
        let cancelAt = Box()
        await s.setHooks(.init(onPoll: { n in if n == cancelAt.count { s.cancel() } }))
        let prompts: [[TokenID]] = [prompt, [1000] + prompt.reversed()]
        func run(_ i: Int) async throws {
            // Polls 1...6 fall in prefill (3 chunks x 2 layers), then one before sampling,
            // then per decode step one before it and two per layer.
            cancelAt.set(1 + i % 13)
            let r = try await s.streamed(.tokens(prompts[i % 2]), GenerationParameters(maxTokens: 40))
            XCTAssertEqual(r.summary?.finishReason, .cancelled)
        }
        // libdispatch and the concurrency runtime fill per-thread caches as cooperative
        // threads join in, which happens at unpredictable points over the first thousand or
        // two streamed requests (measured: about 60 KB in all, in steps), and is not ours to
        // account for. After a warm-up, each batch of 1000 requests is measured; a batch
        // that stays within tolerance shows that requests leave nothing behind, while a
        // per-request leak would make every batch grow.
        var i = 0
        for _ in 0..<1000 { try await run(i); i += 1 }
        var growth: [Int] = []
        for _ in 0..<4 {
            let before = try XCTUnwrap(MemoryStats.current().allocatedBytes)
            for _ in 0..<1000 { try await run(i); i += 1 }
            growth.append(try XCTUnwrap(MemoryStats.current().allocatedBytes) - before)
            // Steady drift is about 1 KB per 1000 requests. The smallest thing a request
            // could leak (a stream's storage, a task, a summary) is over 100 bytes and a
            // logits vector 4 KB, so leaked requests show as 100 KB or more per batch;
            // 16 KiB catches any leak of 16 bytes per request.
            if abs(growth[growth.count - 1]) < 16 << 10 { break }
        }
        XCTAssertLessThan(abs(growth.last ?? .max), 16 << 10, "allocated bytes grew by \(growth) per 1000 requests")
    }
}
