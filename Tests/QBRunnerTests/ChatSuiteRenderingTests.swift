import XCTest
import QBGeneration
@testable import QBRunner

/// The bench's chat cases send what `quantbench chat` sends for the same conversation.
final class ChatSuiteRenderingTests: XCTestCase {
    func testAChatCaseRendersAsTheChatDoes() throws {
        let loaded = try RunnerFixtures.tiny()
        let format = try loaded.chatFormat.get()
        XCTAssertFalse(format.isPlainContinuation, "the tiny model brings a chat template")
        let spec = PromptSpec.messages(system: "Be kind.", [SuiteMessage(role: .user, content: "Hi")])
        let prompt = try XCTUnwrap(try PromptBuilder.prompt(spec, loaded: loaded))
        let chat = try format.tokens(ChatConversation(system: "Be kind."), pendingUser: "Hi", tokenizer: loaded.tokenizer)
        XCTAssertEqual(prompt.tokens(with: loaded.tokenizer), chat)
        XCTAssertEqual(format.name, "chat-template")
    }
}
