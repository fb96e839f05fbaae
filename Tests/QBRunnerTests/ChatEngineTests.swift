import XCTest
import QBGeneration
import QBKernels
import QBText
@testable import QBRunner

/// The chat engine on the tiny synthetic model (a real chat template, a real KV cache):
/// cache reuse across turns, interruption, and a conversation far longer than the context.
final class ChatEngineTests: XCTestCase {
    /// End-of-sequence ids banned, so replies run to --max-tokens and tests can count on
    /// their length.
    static var greedyWithoutEOS: SamplingParameters {
        var sampling = SamplingParameters.greedy
        sampling.logitBias = SyntheticTokenizer.specialTokenIDs(vocabularySize: 1024).eos.map { LogitBias(token: $0, bias: -.infinity) }
        return sampling
    }

    func engine(context: Int = 512, maxTokens: Int = 12) throws -> ChatEngine {
        let options = ChatSetupOptions(
            modelPath: try RunnerFixtures.tinyModelPath(), contextLength: context,
            parameters: GenerationParameters(maxTokens: maxTokens, sampling: Self.greedyWithoutEOS))
        var steps: [ChatLoadProgress] = []
        let setup = try ChatSetup.load(options, pool: ThreadPool(threads: 2)) { steps.append($0) }
        XCTAssertEqual(steps.map(\.completed), Array(0...4), "one report per step, then done")
        XCTAssertEqual(steps.last?.label, "ready")
        XCTAssertTrue(setup.banner.contains("chat template"), setup.banner)
        return setup.engine
    }

    func testAFollowUpReusesTheCache() async throws {
        let chat = try engine()
        let texts = Pieces()
        let first = try await chat.send("Hello there") { if case .text(let t) = $0 { texts.append(t) } }
        XCTAssertEqual(first.summary.finishReason, .maxTokens)
        XCTAssertEqual(first.summary.reusedPromptTokens, 0)
        XCTAssertGreaterThan(first.textChunks, 1, "streamed")
        let turns = await chat.conversation.turns
        XCTAssertEqual(turns.count, 1)
        XCTAssertEqual(turns[0].assistant, texts.joined, "the history holds what was shown")

        let second = try await chat.send("And then?")
        XCTAssertGreaterThanOrEqual(second.summary.reusedPromptTokens, first.summary.promptTokens, "the whole first prompt came from the cache")
        XCTAssertEqual(second.historyTurns, 2)
        XCTAssertEqual(second.contextUsed, second.summary.promptTokens + second.summary.generatedTokens.count - 1)
        XCTAssertTrue(second.lines.joined().contains("time to first token"))
    }

    func testInterruptStopsTheReplyAndKeepsWhatWasShown() async throws {
        // Room for two whole replies: how far the generator runs past the interrupt depends
        // on scheduling, and the follow-up below must not depend on it.
        let chat = try engine(context: 1024, maxTokens: 400)
        XCTAssertFalse(chat.interrupt(), "nothing to stop")
        let texts = Pieces()
        let stats = try await chat.send("Tell me everything") { event in
            guard case .text(let t) = event else { return }
            texts.append(t)
            // Stop after a few pieces, from the event callback as a signal handler would.
            if texts.count == 3 { XCTAssertTrue(chat.interrupt()) }
        }
        XCTAssertEqual(stats.summary.finishReason, .cancelled)
        // The generator runs ahead of the callback by however long the callback's thread
        // took to be scheduled, so only "well before the end" is certain.
        XCTAssertLessThan(stats.summary.generatedTokens.count, 400)
        let last = await chat.conversation.turns.last
        let turn = try XCTUnwrap(last)
        XCTAssertEqual(turn.finishReason, .cancelled)
        XCTAssertEqual(turn.assistant, texts.joined)
        XCTAssertFalse(chat.isReplying)

        // The chat goes on, and the interrupted reply's positions are reused.
        let next = try await chat.send("Shorter, please")
        XCTAssertEqual(next.summary.finishReason, .maxTokens)
        XCTAssertGreaterThanOrEqual(next.summary.reusedPromptTokens, stats.summary.promptTokens)
    }

    func testALongConversationDropsTheOldestTurnsInsteadOfFailing() async throws {
        let chat = try engine(context: 160, maxTokens: 16)
        await chat.setSystem("You are a patient assistant.")
        let notes = Pieces()
        var dropped = 0
        for i in 1...12 {
            let stats = try await chat.send("Message number \(i): tell me something about the number \(i).") { event in
                if case .trimmed(let d, let k) = event { notes.append("\(d)/\(k)") }
            }
            dropped += stats.droppedTurns
            XCTAssertLessThanOrEqual(stats.summary.promptTokens, chat.promptBudget)
            XCTAssertNotEqual(stats.summary.finishReason, .cancelled)
        }
        XCTAssertGreaterThan(dropped, 0, "the history outgrew the context")
        XCTAssertFalse(notes.pieces.isEmpty, "the chat said so")
        let c = await chat.conversation
        XCTAssertEqual(c.system, "You are a patient assistant.", "the system prompt is kept")
        XCTAssertEqual(c.turns.count, 12 - dropped)
        XCTAssertTrue(c.turns.last?.user.hasPrefix("Message number 12") ?? false, "the newest turns are kept")
    }

    func testAMessageLongerThanTheContextIsRefusedAndChangesNothing() async throws {
        let chat = try engine(context: 64, maxTokens: 8)
        try await chat.send("Hi")
        let before = await chat.conversation
        do {
            try await chat.send(String(repeating: "a long message ", count: 40))
            XCTFail("expected messageTooLong")
        } catch let error as ChatError {
            guard case .messageTooLong = error else { return XCTFail("\(error)") }
        }
        let after = await chat.conversation
        XCTAssertEqual(after, before)
        try await chat.send("Still here")
    }

    func testSaveAndResume() async throws {
        let chat = try engine()
        await chat.setSystem("Be brief.")
        try await chat.send("One")
        try await chat.send("Two")
        let dir = try RunnerFixtures.temporaryDirectory("chat-save")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("chat.jsonl").path
        try await chat.save(to: file)
        let saved = await chat.conversation

        let resumed = try engine()
        await resumed.replaceConversation(try ChatTranscript.load(from: file))
        let restored = await resumed.conversation
        XCTAssertEqual(restored, saved)
        let stats = try await resumed.send("Three")
        XCTAssertEqual(stats.historyTurns, 3)
        await resumed.clear()
        let cleared = await resumed.conversation
        XCTAssertEqual(cleared.turns, [])
        XCTAssertEqual(cleared.system, "Be brief.")
    }
}

/// Text pieces collected from a `@Sendable` event callback.
final class Pieces: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func append(_ s: String) { lock.withLock { list.append(s) } }
    var pieces: [String] { lock.withLock { list } }
    var count: Int { pieces.count }
    var joined: String { pieces.joined() }
}
