import XCTest
import QBJinja
import QBModel
import QBText
@testable import QBRunner

/// The one function that turns a conversation into prompt text, with and without a chat
/// template.
final class ChatPromptFormatTests: XCTestCase {
    let history = ChatConversation(system: "Sys", turns: [ChatTurn(user: "Once", assistant: " upon a time.")])

    func testPlainContinuationJoinsTurnsWithNewlines() throws {
        let plain = ChatPromptFormat(kind: .plainContinuation)
        XCTAssertEqual(try plain.render(history, pendingUser: "Then"), "Sys\nOnce upon a time.\nThen")
        XCTAssertEqual(try plain.render(ChatConversation(), pendingUser: "Once"), "Once")
        XCTAssertTrue(plain.isPlainContinuation)
    }

    func testTemplateRenderingWithTheGenerationPrompt() throws {
        let template = try ChatTemplate(source: SyntheticTokenizer.chatTemplate, name: "synthetic")
        let format = ChatPromptFormat(kind: .template(template), bosToken: "<|begin_of_text|>", eosToken: "<|end_of_text|>")
        let h = "<|start_header_id|>", e = "<|end_header_id|>\n\n"
        XCTAssertEqual(
            try format.render(history, pendingUser: "Then"),
            "<|begin_of_text|>\(h)system\(e)Sys<|eot_id|>\(h)user\(e)Once<|eot_id|>\(h)assistant\(e) upon a time.<|eot_id|>"
                + "\(h)user\(e)Then<|eot_id|>\(h)assistant\(e)")
    }

    /// KV-cache reuse depends on it: the next turn's prompt begins with this turn's prompt
    /// followed by the reply, so only the new part is prefilled.
    func testAFollowUpExtendsThePreviousPrompt() throws {
        let template = try ChatTemplate(source: SyntheticTokenizer.chatTemplate, name: "synthetic")
        for format in [ChatPromptFormat(kind: .plainContinuation), ChatPromptFormat(kind: .template(template), bosToken: "<B>")] {
            let first = try format.render(history, pendingUser: "Next")
            var after = history
            after.turns.append(ChatTurn(user: "Next", assistant: " reply"))
            let second = try format.render(after, pendingUser: "Again")
            XCTAssertTrue(second.hasPrefix(first + " reply"), "\(format.summary): \(second)")
        }
    }

    func testTheTinyModelsTokenizerBringsItsTemplate() throws {
        let model = try ModelLoader.load(path: RunnerFixtures.tinyModelPath())
        let tokenizer = try TokenizerLoader.load(for: model, path: nil)
        let format = try ChatPromptFormat.forTokenizer(tokenizer)
        XCTAssertFalse(format.isPlainContinuation)
        XCTAssertEqual(format.bosToken, "<|begin_of_text|>")
        let ids = try format.tokens(history, pendingUser: "Hi", tokenizer: tokenizer)
        XCTAssertEqual(ids.first, tokenizer.bosTokenID, "exactly one BOS, from the template")
        XCTAssertEqual(ids.filter { $0 == tokenizer.bosTokenID }.count, 1)
    }

    func testALlama2cTokenizerGetsPlainContinuation() throws {
        let dir = RunnerFixtures.shared.appendingPathComponent("stories260k")
        let tok = dir.appendingPathComponent("tok512.bin").path
        guard FileManager.default.fileExists(atPath: tok) else { throw XCTSkip("fixture \(dir.path) is missing") }
        let tokenizer = try Llama2cTokenizer(path: tok, vocabularySize: 512)
        let format = try ChatPromptFormat.forTokenizer(tokenizer)
        XCTAssertTrue(format.isPlainContinuation)
        let ids = try format.tokens(ChatConversation(), pendingUser: "Once upon a time", tokenizer: tokenizer)
        XCTAssertEqual(ids, tokenizer.encode("Once upon a time"), "the same ids generate would use")
    }

    func testABadTemplateFileIsOneLineNamingIt() throws {
        let dir = try RunnerFixtures.temporaryDirectory("template")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("bad.jinja")
        try Data("{% for m in messages %}{{ m.content }".utf8).write(to: file)
        let model = try ModelLoader.load(path: RunnerFixtures.tinyModelPath())
        let tokenizer = try TokenizerLoader.load(for: model, path: nil)
        XCTAssertThrowsError(try ChatPromptFormat.forTokenizer(tokenizer, templateFile: file.path)) { error in
            XCTAssertTrue(error is ChatTemplateError, "\(error)")
            XCTAssertTrue("\(error)".hasPrefix(file.path), "\(error)")
            XCTAssertFalse("\(error)".contains("\n"), "one line: \(error)")
        }
        XCTAssertThrowsError(try ChatPromptFormat.forTokenizer(tokenizer, templateFile: dir.appendingPathComponent("none.jinja").path)) {
            XCTAssertTrue("\($0)".contains("none.jinja"), "\($0)")
        }
    }
}
