import XCTest
import QBGeneration
@testable import QBRunner

/// `/save` and `--resume`: the JSONL history, its exact shape, and what a bad file says.
final class ChatTranscriptTests: XCTestCase {
    func testTheFileIsOneMessagePerLine() {
        let c = ChatConversation(system: "Be brief.", turns: [
            ChatTurn(user: "Hi", assistant: "Hello.", finishReason: .endOfSequence),
            ChatTurn(user: "And?", assistant: "", finishReason: .cancelled),
        ])
        XCTAssertEqual(ChatTranscript.encode(c), """
            {"role":"system","content":"Be brief."}
            {"role":"user","content":"Hi"}
            {"role":"assistant","content":"Hello.","finish_reason":"eos"}
            {"role":"user","content":"And?"}
            {"role":"assistant","content":"","finish_reason":"cancelled"}

            """)
        XCTAssertEqual(ChatTranscript.encode(ChatConversation(system: "", turns: [])), "", "an empty system prompt is none")
    }

    func testRoundTripKeepsEveryCharacter() throws {
        let c = ChatConversation(system: "line one\nline \"two\"\t/ \\", turns: [
            ChatTurn(user: "naïve café 🙂\r\n", assistant: "{\"json\": [1, 2]}\n\n", finishReason: .maxTokens),
            ChatTurn(user: "\u{0}\u{1F}", assistant: " spaced ", finishReason: nil),
        ])
        let text = ChatTranscript.encode(c)
        XCTAssertEqual(text.split(separator: "\n").count, 5, "newlines inside messages are escaped")
        XCTAssertEqual(try ChatTranscript.decode(text, path: "t.jsonl"), c)

        let dir = try RunnerFixtures.temporaryDirectory("transcript")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("chat.jsonl").path
        try ChatTranscript.save(c, to: file)
        XCTAssertEqual(try ChatTranscript.load(from: file), c)
    }

    func testHandWrittenFilesAreAccepted() throws {
        let text = """

            {"content": "Hi", "role": "user"}
            {"role": "assistant", "content": "Hello", "finish_reason": "something new"}

            """
        let c = try ChatTranscript.decode(text, path: "t.jsonl")
        XCTAssertNil(c.system)
        XCTAssertEqual(c.turns, [ChatTurn(user: "Hi", assistant: "Hello", finishReason: nil)])
    }

    func testBadFilesNameTheLine() {
        let user = #"{"role":"user","content":"u"}"#
        let assistant = #"{"role":"assistant","content":"a"}"#
        let system = #"{"role":"system","content":"s"}"#
        let cases: [(String, Int, String)] = [
            ("\(user)\nnot json", 2, "JSON object"),
            ("\(user)\n{\"role\":\"assistant\"}", 2, "no \"content\""),
            ("{\"role\":\"user\",\"content\":null}", 1, "\"content\" is not a string"),
            ("{\"role\":\"tool\",\"content\":\"x\"}", 1, "unsupported role \"tool\""),
            (assistant, 1, "without a user message"),
            ("\(user)\n\(user)", 2, "two user messages"),
            ("\(user)\n\(assistant)\n\(system)", 3, "only come first"),
            ("\(system)\n\(user)\n\(assistant)\n\n\(user)\n", 5, "no assistant reply"),
        ]
        for (text, line, fragment) in cases {
            assertLocated("t.jsonl", line: line, fragment) { _ = try ChatTranscript.decode(text, path: "t.jsonl") }
        }
        assertLocated("/nonexistent/chat.jsonl", line: nil, "no such file") {
            _ = try ChatTranscript.load(from: "/nonexistent/chat.jsonl")
        }
    }
}
