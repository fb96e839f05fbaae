import Foundation
import XCTest
import QBGeneration
import QBKernels
import QBModel
import QBRunner
import QBServe
import QBText

/// Models the serving tests run on: the tiny synthetic Llama as stored (f32) and converted
/// to the block formats decode reads through its int8 kernels, in the decode layout.
enum ServeModels {
    struct Tiny: @unchecked Sendable {
        let model: any LanguageModel
        let tokenizer: any Tokenizer
    }

    static let pool = ThreadPool(threads: 2)

    private static let base: Result<Tiny, any Error> = Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-serve-tiny-\(getpid())")
        try ModelMaker.make(preset: .tiny, seed: 5, dtype: .f32, to: dir)
        let model = try ModelLoader.load(path: dir.path)
        return Tiny(model: model, tokenizer: try TokenizerLoader.load(for: model, path: nil))
    }

    static func tiny(quant: String? = nil) throws -> Tiny {
        let t = try base.get()
        let m = try ModelPipeline.prepare(t.model, spec: quant.map { try QuantSpec($0) }, pool: pool)
        return Tiny(model: m, tokenizer: t.tokenizer)
    }
}

final class BatchForwardTests: XCTestCase {
    /// Each sequence's logits from one batched step equal, bit for bit, those of the same
    /// step taken alone, for sequences at different depths.
    func checkBatchEqualsAlone(quant: String?, kvType: KVCacheType) throws {
        let m = try ServeModels.tiny(quant: quant).model
        let pool = ServeModels.pool
        let vocab = m.config.vocabSize
        let prompts: [[Int32]] = (0..<5).map { i in (0..<(3 + 7 * i)).map { Int32(($0 * 31 + i * 17 + 1) % vocab) } }
        func states() throws -> [InferenceState] {
            try prompts.map { p in
                let s = m.makeState(contextLength: 64, pool: pool, maxBatch: 16, kvType: kvType)
                _ = try m.forward(p, state: s, logits: .none)
                return s
            }
        }
        let alone = try states(), together = try states()
        let scratch = m.makeState(contextLength: 8, pool: pool, maxBatch: 8, kvType: kvType)
        var next: [Int32] = [5, 9, 13, 2, 7]
        for step in 0..<4 {
            let expected = try zip(next, alone).map { try m.forward([$0], state: $1, logits: .last) }
            let got = try m.forwardBatch(next, states: together, scratch: scratch)
            for i in 0..<next.count {
                XCTAssertEqual(got[i], expected[i], "quant \(quant ?? "f32"), sequence \(i), step \(step)")
                XCTAssertEqual(together[i].cache.length, alone[i].cache.length)
            }
            next = next.map { ($0 * 7 + 3) % Int32(vocab) }
        }
        // A smaller batch (a sequence left) goes on unchanged.
        let a = try m.forward([4], state: alone[3], logits: .last)
        let b = try m.forwardBatch([4], states: [together[3]], scratch: scratch)
        XCTAssertEqual(b[0], a)
    }

    func testBatchedDecodeEqualsAloneF32() throws { try checkBatchEqualsAlone(quant: nil, kvType: .f32) }
    func testBatchedDecodeEqualsAloneQ4_0() throws { try checkBatchEqualsAlone(quant: "q4_0", kvType: .f16) }
    func testBatchedDecodeEqualsAloneQ8_0() throws { try checkBatchEqualsAlone(quant: "q8_0", kvType: .q8_0) }
    func testBatchedDecodeEqualsAloneMLX() throws { try checkBatchEqualsAlone(quant: "mlx-q4-g32", kvType: .f16) }

    func testBatchRejectsBadInput() throws {
        let m = try ServeModels.tiny().model
        let pool = ServeModels.pool
        let s = m.makeState(contextLength: 4, pool: pool, kvType: .f32)
        let scratch = m.makeState(contextLength: 2, pool: pool, maxBatch: 2, kvType: .f32)
        XCTAssertThrowsError(try m.forwardBatch([1, 2], states: [s], scratch: scratch))
        XCTAssertThrowsError(try m.forwardBatch([1, 2], states: [s, s], scratch: scratch))
        XCTAssertThrowsError(try m.forwardBatch([-1], states: [s], scratch: scratch))
        XCTAssertThrowsError(try m.forwardBatch([1, 2, 3], states: [s, s, s], scratch: scratch))
        _ = try m.forward([1, 2, 3, 4], state: s, logits: .none)
        XCTAssertThrowsError(try m.forwardBatch([1], states: [s], scratch: scratch))
    }
}

final class SchedulerTests: XCTestCase {
    static func run(_ scheduler: BatchScheduler, _ job: CompletionJob) async throws -> (tokens: [TokenID], text: String, summary: JobSummary?) {
        let ticket = try await scheduler.submit(job)
        var tokens: [TokenID] = [], text = ""
        var summary: JobSummary?
        for await e in ticket.events {
            switch e {
            case .text(let t, let ids): text += t; tokens += ids
            case .finished(let s): summary = s
            }
        }
        return (tokens, text, summary)
    }

    func makeScheduler(parallel: Int, queue: Int = 64, budget: Int? = nil, quant: String? = "q4_0") throws -> BatchScheduler {
        let t = try ServeModels.tiny(quant: quant)
        let s = BatchScheduler(
            model: t.model, tokenizer: t.tokenizer, pool: ServeModels.pool, kvType: .f16,
            limits: SchedulerLimits(parallel: parallel, contextLength: 128, kvBudget: budget, queueLimit: queue, prefillChunk: 8))
        Task { await s.run() }
        return s
    }

    func job(_ i: Int, seed: UInt64, maxTokens: Int = 24) throws -> CompletionJob {
        let tok = try ServeModels.tiny().tokenizer
        let prompt = tok.encode("Once upon a time number \(i) there was", addSpecialTokens: true, parseSpecialTokens: false)
        return CompletionJob(
            prompt: prompt + (i % 3 == 0 ? prompt : []), maxTokens: maxTokens,
            sampling: SamplingParameters(temperature: 0.9, topK: 0, topP: 1, minP: 0, seed: seed), stop: [])
    }

    /// A seeded request samples the same tokens alone and among 7 concurrent others, and
    /// matches the single-sequence engine (`GenerationLoop`).
    func testSeededJobSameAloneAndAmongOthers() async throws {
        let scheduler = try makeScheduler(parallel: 8)
        let target = try job(0, seed: 42)
        let alone = try await Self.run(scheduler, target)
        XCTAssertEqual(alone.summary?.completionTokens, alone.tokens.count)
        XCTAssertFalse(alone.tokens.isEmpty)

        let jobs = try (0..<8).map { i in i == 0 ? target : try job(i, seed: UInt64(100 + i), maxTokens: 16 + 3 * i) }
        let together = try await withThrowingTaskGroup(of: (Int, [TokenID]).self) { group in
            for (i, j) in jobs.enumerated() {
                group.addTask { (i, try await Self.run(scheduler, j).tokens) }
            }
            var out: [Int: [TokenID]] = [:]
            for try await (i, t) in group { out[i] = t }
            return out
        }
        XCTAssertEqual(together[0], alone.tokens)

        // The single-sequence engine gives the same ids.
        let t = try ServeModels.tiny(quant: "q4_0")
        let state = t.model.makeState(contextLength: 128, pool: ServeModels.pool, maxBatch: 8, kvType: .f16)
        var cached: [TokenID] = []
        let summary = try GenerationLoop.run(
            model: t.model, tokenizer: t.tokenizer, state: state, cachedTokens: &cached, prompt: .tokens(target.prompt),
            parameters: GenerationParameters(maxTokens: target.maxTokens, stop: [], sampling: target.sampling))
        XCTAssertEqual(summary.generatedTokens, alone.tokens)
        let load = scheduler.metrics.load
        XCTAssertEqual(load.active, 0)
        XCTAssertEqual(load.kvBytes, 0)
    }

    func testQueueFullAndBudget() async throws {
        let scheduler = try makeScheduler(parallel: 1, queue: 1)
        let long = try job(1, seed: 1, maxTokens: 80)
        // One running, one waiting, then refusals: at most 1 + 1 jobs are taken.
        var tickets: [JobTicket] = []
        var refused: AdmissionError?
        for _ in 0..<4 {
            do {
                tickets.append(try await scheduler.submit(long))
            } catch {
                refused = error
            }
        }
        XCTAssertEqual(refused, .queueFull(limit: 1))
        XCTAssertLessThanOrEqual(tickets.count, 2)
        for t in tickets { await scheduler.cancel(t.id) }
        for t in tickets { for await _ in t.events {} }

        let small = try makeScheduler(parallel: 2, budget: 1000)
        do {
            _ = try await small.submit(long)
            XCTFail("a job over the budget must be refused")
        } catch {
            guard case .exceedsBudget = error else { return XCTFail("\(error)") }
        }
    }

    /// Cancelling a running job frees its slot.
    func testCancelFreesSlot() async throws {
        let scheduler = try makeScheduler(parallel: 2)
        let ticket = try await scheduler.submit(try job(2, seed: 3, maxTokens: 100))
        var n = 0
        for await e in ticket.events {
            if case .text = e { n += 1 }
            if n == 3 { await scheduler.cancel(ticket.id) }
            if case .finished(let s) = e { XCTAssertEqual(s.finish, .cancelled) }
        }
        for _ in 0..<100 where scheduler.metrics.load.active != 0 { try await Task.sleep(for: .milliseconds(10)) }
        XCTAssertEqual(scheduler.metrics.load.active, 0)
        XCTAssertEqual(scheduler.metrics.load.kvBytes, 0)
    }
}
