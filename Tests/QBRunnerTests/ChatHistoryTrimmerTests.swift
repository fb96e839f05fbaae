import XCTest
import QBText
@testable import QBRunner

/// History trimming on the conversation model alone: a fake encoder makes every message
/// cost a known number of ids, so the arithmetic is checked exactly.
final class ChatHistoryTrimmerTests: XCTestCase {
    /// One id per character of every message, plus one for the pending message's header.
    func fakeTokens(_ c: ChatConversation, _ user: String) -> [TokenID] {
        let n = c.messages(pendingUser: user).reduce(0) { $0 + $1.content.count } + 1
        return [TokenID](repeating: 7, count: n)
    }

    func conversation(turns: Int, system: String? = "SYS") -> ChatConversation {
        ChatConversation(system: system, turns: (0..<turns).map { ChatTurn(user: "u\($0)xxxxx", assistant: "a\($0)yyyyyyyy") })
    }

    func testNothingIsDroppedWhenEverythingFits() throws {
        let c = conversation(turns: 3)
        let plan = try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 1000, tokens: fakeTokens)
        XCTAssertEqual(plan.droppedTurns, 0)
        XCTAssertEqual(plan.promptTokens.count, 3 + 3 * (7 + 10) + 5 + 1)
    }

    func testOldestTurnsGoFirstAndTheSystemPromptStays() throws {
        // system 3 + each turn 17 + pending 5 + 1 = 9 + 17 n.
        let c = conversation(turns: 5)
        let plan = try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 9 + 17 * 2, tokens: fakeTokens)
        XCTAssertEqual(plan.droppedTurns, 3, "the fewest turns that make it fit")
        XCTAssertEqual(plan.promptTokens.count, 9 + 17 * 2)
        var trimmed = c
        trimmed.dropOldest(plan.droppedTurns)
        XCTAssertEqual(trimmed.system, "SYS")
        XCTAssertEqual(trimmed.turns.map(\.user), ["u3xxxxx", "u4xxxxx"], "the newest turns are kept, in order")
        // One id short of that, a third turn has to go too.
        XCTAssertEqual(try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 9 + 17 * 2 - 1, tokens: fakeTokens).droppedTurns, 4)
    }

    /// #22: resuming a 2,000-turn history encoded the conversation once per dropped turn
    /// (quadratic, 26 s). The fewest drops are found by bisection: O(log turns) encodings,
    /// with the same answer as dropping one at a time.
    func testTrimmingALongHistoryEncodesItLogarithmicallyOften() throws {
        let c = conversation(turns: 2000)
        var calls = 0
        let plan = try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 9 + 17 * 40, target: 9 + 17 * 20) { c, u in
            calls += 1
            return self.fakeTokens(c, u)
        }
        // The fewest drops that reach the target, as dropping one at a time finds.
        XCTAssertLessThanOrEqual(plan.promptTokens.count, 9 + 17 * 20)
        var fewer = c
        fewer.dropOldest(plan.droppedTurns - 1)
        XCTAssertGreaterThan(fakeTokens(fewer, "hello").count, 9 + 17 * 20)
        XCTAssertLessThanOrEqual(calls, 16, "encodings: \(calls)")
    }

    /// Trimming aims below the budget, so the turns after it extend one prompt (and reuse
    /// the cache) instead of each sliding the window.
    func testTrimmingAimsForTheTarget() throws {
        let c = conversation(turns: 5)  // 9 + 17 * 5 = 94 ids
        XCTAssertEqual(try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 80, tokens: fakeTokens).droppedTurns, 1)
        let plan = try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 80, target: 40, tokens: fakeTokens)
        XCTAssertEqual(plan.droppedTurns, 4)
        XCTAssertEqual(plan.promptTokens.count, 9 + 17)
        // A prompt within the budget is left alone, however low the target.
        XCTAssertEqual(try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 100, target: 10, tokens: fakeTokens).droppedTurns, 0)
        // A target below what the system prompt and message need still fits the budget.
        XCTAssertEqual(try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 80, target: 2, tokens: fakeTokens).droppedTurns, 5)
        XCTAssertEqual(ChatHistoryTrimmer.trimTarget(budget: 1792), 896)
        XCTAssertEqual(ChatHistoryTrimmer.trimTarget(budget: 1), 1)
    }

    func testEverythingButTheSystemPromptAndTheMessageCanGo() throws {
        let c = conversation(turns: 4)
        let plan = try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 9, tokens: fakeTokens)
        XCTAssertEqual(plan.droppedTurns, 4)
        XCTAssertEqual(plan.promptTokens.count, 9)
    }

    func testAMessageThatCannotFitIsAnErrorNotACrash() {
        let c = conversation(turns: 2)
        XCTAssertThrowsError(try ChatHistoryTrimmer.fit(c, pendingUser: "hello", budget: 8, tokens: fakeTokens)) { error in
            XCTAssertEqual(error as? ChatError, .messageTooLong(tokens: 9, budget: 8, hasSystemPrompt: true))
            XCTAssertTrue("\(error)".contains("--ctx"), "says what to do: \(error)")
        }
        XCTAssertThrowsError(try ChatHistoryTrimmer.fit(conversation(turns: 0, system: nil), pendingUser: "hello", budget: 3, tokens: fakeTokens)) {
            XCTAssertEqual($0 as? ChatError, .messageTooLong(tokens: 6, budget: 3, hasSystemPrompt: false))
        }
    }

    func testTemplateErrorsPassThrough() {
        struct Rejected: Error {}
        XCTAssertThrowsError(try ChatHistoryTrimmer.fit(conversation(turns: 1), pendingUser: "x", budget: 100) { _, _ in throw Rejected() }) {
            XCTAssertTrue($0 is Rejected)
        }
    }

    func testTheBudgetLeavesRoomForTheReply() {
        XCTAssertEqual(ChatHistoryTrimmer.promptBudget(contextLength: 2048, maxTokens: 256), 1792)
        XCTAssertEqual(ChatHistoryTrimmer.promptBudget(contextLength: 512, maxTokens: 64), 448)
        // A reply reserve never takes more than half the context.
        XCTAssertEqual(ChatHistoryTrimmer.promptBudget(contextLength: 512, maxTokens: 100_000), 256)
        XCTAssertEqual(ChatHistoryTrimmer.promptBudget(contextLength: 2, maxTokens: 5), 1)
    }
}
