import XCTest
@testable import QBRunner

/// What a typed line means.
final class ChatInputTests: XCTestCase {
    func testMessagesAndCommands() {
        XCTAssertEqual(ChatInput.parse("Hello there"), .message("Hello there"))
        XCTAssertEqual(ChatInput.parse("  leading space kept"), .message("  leading space kept"))
        XCTAssertEqual(ChatInput.parse("Hello\r"), .message("Hello"), "Windows line ends")
        XCTAssertEqual(ChatInput.parse(""), .empty)
        XCTAssertEqual(ChatInput.parse("   \t"), .empty)
        XCTAssertEqual(ChatInput.parse("//etc/passwd"), .message("/etc/passwd"))
        XCTAssertEqual(ChatInput.parse("/help"), .command(.help))
        XCTAssertEqual(ChatInput.parse("/HELP"), .command(.help))
        XCTAssertEqual(ChatInput.parse("/clear"), .command(.clear))
        XCTAssertEqual(ChatInput.parse("/stats  "), .command(.stats))
        XCTAssertEqual(ChatInput.parse("/save chat log.jsonl"), .command(.save(path: "chat log.jsonl")))
        XCTAssertEqual(ChatInput.parse("/save"), .command(.save(path: nil)))
        XCTAssertEqual(ChatInput.parse("/system   You are   terse. "), .command(.system("You are   terse.")))
        XCTAssertEqual(ChatInput.parse("/system"), .command(.system(nil)))
        XCTAssertEqual(ChatInput.parse("/exit"), .command(.exit))
        XCTAssertEqual(ChatInput.parse("/quit"), .command(.exit))
        XCTAssertEqual(ChatInput.parse("/frobnicate now"), .command(.unknown("frobnicate")))
    }

    func testHelpListsEveryCommand() {
        for name in ["/system", "/clear", "/stats", "/save", "/help", "/exit", "Ctrl-C", "Ctrl-D"] {
            XCTAssertTrue(ChatCommand.helpText.contains(name), name)
        }
    }
}
