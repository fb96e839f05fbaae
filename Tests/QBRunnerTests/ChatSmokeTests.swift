import XCTest
import QBGeneration
import QBKernels
@testable import QBRunner

/// `chat --smoke`: the script format, the per-reply checks, and a whole run.
final class ChatSmokeTests: XCTestCase {
    func testScriptFormat() throws {
        let script = try ChatSmokeScript.parse("""
            # a comment
            Hello

            /system Be kind.
            //slash
            /clear
            /system
            Bye
            """, path: "s.txt")
        XCTAssertEqual(script.steps, [
            .user("Hello", line: 2), .system("Be kind."), .user("/slash", line: 5), .clear, .system(nil), .user("Bye", line: 8),
        ])
        assertLocated("s.txt", line: 2, "only /system and /clear") { _ = try ChatSmokeScript.parse("Hi\n/save x", path: "s.txt") }
        XCTAssertThrowsError(try ChatSmokeScript.parse("# nothing\n/clear\n", path: "s.txt")) {
            XCTAssertEqual($0 as? ChatError, .noTurns(path: "s.txt"))
        }
        assertLocated("/nonexistent/smoke.txt", line: nil, "no such file") { _ = try ChatSmokeScript.load(path: "/nonexistent/smoke.txt") }
    }

    func testTheRepositorysSmokeFileParses() throws {
        let script = try ChatSmokeScript.load(path: RunnerFixtures.prompts.appendingPathComponent("chat-smoke.txt").path)
        XCTAssertGreaterThanOrEqual(script.steps.filter { if case .user = $0 { return true } else { return false } }.count, 5)
    }

    func stats(_ reason: FinishReason = .maxTokens, tokens: Int = 4, chunks: Int = 4, reused: Int = 0, ttft: Double? = 0.01) -> ChatReplyStats {
        let summary = GenerationSummary(
            finishReason: reason, promptTokens: 30, reusedPromptTokens: reused, generatedTokens: Array(repeating: 5, count: tokens),
            prefillSeconds: 0.005, timeToFirstToken: tokens > 0 ? ttft : nil, decodeSeconds: 0.03, totalSeconds: 0.05,
            tokenTimestamps: (0..<tokens).map { 0.01 + Double($0) * 0.01 })
        return ChatReplyStats(
            summary: summary, textChunks: chunks, firstTextSeconds: 0.01, droppedTurns: 0, memory: MemoryStats(),
            contextUsed: 33, contextLength: 64, historyTurns: 1)
    }

    func testChecks() {
        XCTAssertEqual(ChatSmokeRunner.check(stats(), reply: "abcd", previousPromptTokens: nil), [])
        XCTAssertEqual(ChatSmokeRunner.check(stats(.endOfSequence, tokens: 1, chunks: 1), reply: "a", previousPromptTokens: nil), [])
        XCTAssertEqual(ChatSmokeRunner.check(stats(reused: 20), reply: "abcd", previousPromptTokens: 24), [])

        func fails(_ s: ChatReplyStats, reply: String = "abcd", previous: Int? = nil, _ fragment: String, line: UInt = #line) {
            let f = ChatSmokeRunner.check(s, reply: reply, previousPromptTokens: previous)
            XCTAssertTrue(f.contains { $0.contains(fragment) }, "\(f) should mention \(fragment)", line: line)
        }
        fails(stats(.cancelled), "finish reason cancelled")
        fails(stats(tokens: 0, chunks: 0), reply: "", "no tokens")
        fails(stats(chunks: 0), reply: "", "no text arrived")
        fails(stats(chunks: 1), "one piece")
        fails(stats(ttft: 0), "time to first token")
        fails(stats(reused: 1), previous: 24, "reused 1 prompt tokens")
    }

    func testASmokeRunOnTheTinyModelPasses() async throws {
        let setup = try ChatSetup.load(
            ChatSetupOptions(modelPath: try RunnerFixtures.tinyModelPath(), contextLength: 256, parameters: GenerationParameters(maxTokens: 8, sampling: ChatEngineTests.greedyWithoutEOS)),
            pool: ThreadPool(threads: 2))
        let script = try ChatSmokeScript.parse("Hello\nHow are you?\n/clear\n/system Be brief.\nBye\n", path: "s.txt")
        let log = Pieces()
        let report = await ChatSmokeRunner.run(script, engine: setup.engine) { log.append($0) }
        XCTAssertEqual(report.turns.count, 3)
        XCTAssertTrue(report.passed, log.joined)
        XCTAssertTrue(log.joined.contains("[turn 2 ok: "), log.joined)
        XCTAssertTrue(log.joined.hasSuffix(report.summary + "\n"))
        XCTAssertTrue(report.summary.hasPrefix("chat smoke: all 3 turns passed"), report.summary)
    }
}
