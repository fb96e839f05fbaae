import Foundation
import QBFormats
import Synchronization
import XCTest
import QBTestSupport

@testable import QBJinja
@testable import QBText

/// The chat-template API: messages, message preparation, fallbacks, finding templates in
/// model files, speed and thread safety.
final class ChatTemplateTests: XCTestCase {
    static func llama31() throws -> ChatTemplate {
        let url = try Fixtures.url("chat-templates/hf-templates/meta-llama-Llama-3.1-8B-Instruct.jinja")
        return try ChatTemplate.load(templateFile: url.path)
    }

    static func goldenTemplate(_ name: String) throws -> ChatTemplate {
        let url = try Fixtures.url("chat-templates/llamacpp-minja-goldens/templates/\(name).jinja")
        return try ChatTemplate.load(templateFile: url.path)
    }

    func testMessagesFromJSONKeepFieldOrder() throws {
        let json = #"{"messages": [{"role": "user", "content": "hi", "zeta": 1, "alpha": {"b": 2, "a": 1}}], "tools": [], "enable_thinking": false}"#
        let (messages, context) = try ChatMessage.parse(json: Data(json.utf8), source: "test.json")
        XCTAssertEqual(messages.count, 1)
        XCTAssertEqual(messages[0].role, "user")
        XCTAssertEqual(messages[0].content, "hi")
        XCTAssertEqual(messages[0].fields.keys, ["role", "content", "zeta", "alpha"])
        XCTAssertEqual(context.keys, ["tools", "enable_thinking"])
        let t = try JinjaTemplate(source: "{{ messages[0]|tojson }}")
        XCTAssertEqual(
            try t.render(["messages": [.object(messages[0].fields)]]),
            #"{"role": "user", "content": "hi", "zeta": 1, "alpha": {"b": 2, "a": 1}}"#)

        let list = try ChatMessage.parse(json: Data(#"[{"role": "system", "content": null}]"#.utf8), source: "l.json")
        XCTAssertEqual(list.messages[0].content, .none)
        XCTAssertTrue(list.context.isEmpty)
    }

    func testMessagesCodable() throws {
        let m = ChatMessage(role: "assistant", content: .none, extra: ["tool_calls": [["id": "1", "type": "function"]]])
        let data = try JSONEncoder().encode([m, .user("hé")])
        let back = try JSONDecoder().decode([ChatMessage].self, from: data)
        XCTAssertEqual(back, [m, .user("hé")])
        XCTAssertThrowsError(try JSONDecoder().decode(ChatMessage.self, from: Data(#"{"content": "x"}"#.utf8)))
    }

    func testGenerationPromptAndSpecialTokens() throws {
        let t = try Self.llama31()
        var options = ChatTemplateOptions.llamaCpp
        options.now = JinjaCases.now
        let prompt = try t.render(
            messages: [.system("Be brief."), .user("Hi")], addGenerationPrompt: true, bosToken: "<|begin_of_text|>",
            options: options)
        XCTAssertEqual(
            prompt,
            "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        )
        let noPrompt = try t.render(messages: [.user("Hi")], addGenerationPrompt: false, options: options)
        XCTAssertTrue(noPrompt.hasSuffix("Hi<|eot_id|>"))
        XCTAssertTrue(t.supportsSystemRole)
        XCTAssertTrue(t.supportsTools)
        XCTAssertTrue(t.requiresObjectArguments)
    }

    /// llama.cpp's folding: system text joins the next user message; several system
    /// messages join with newlines; one with no user message after it becomes a user message.
    func testSystemMessagesFoldIntoUserTurnsWhenTheTemplateHasNoSystemRole() throws {
        let gemma = try Self.goldenTemplate("google-gemma-7b-it")
        XCTAssertFalse(gemma.supportsSystemRole)
        let prompt = try gemma.render(
            messages: [.system("A."), .system("B."), .user("Q?"), .assistant("R."), .system("C.")], bosToken: "<bos>")
        XCTAssertEqual(
            prompt,
            "<bos><start_of_turn>user\nA.\nB.\nQ?<end_of_turn>\n<start_of_turn>model\nR.<end_of_turn>\n<start_of_turn>user\nC.<end_of_turn>\n")

        // transformers renders the messages as given, so the template's own error comes through.
        XCTAssertThrowsError(try gemma.render(messages: [.system("A."), .user("Q?")], options: .transformers)) { error in
            XCTAssertEqual((error as? ChatTemplateError)?.raisedMessage, "System role not supported")
        }
    }

    /// A template that takes a system message only first: the render fails with it later,
    /// and llama.cpp mode retries with system text folded into the user turn.
    func testSystemMessageRejectedLaterIsFoldedOnRetry() throws {
        let source = """
            {% for m in messages %}{% if m.role == 'system' and not loop.first %}{{ raise_exception('system must be first') }}{% endif %}[{{ m.role }}] {{ m.content }}
            {% endfor %}
            """
        let t = try ChatTemplate(source: source, name: "first-only")
        XCTAssertTrue(t.supportsSystemRole)
        XCTAssertEqual(try t.render(messages: [.user("Q"), .system("S"), .user("R")]), "[user] Q\n[user] S\nR\n")
        XCTAssertThrowsError(try t.render(messages: [.user("Q"), .system("S")], options: .transformers))
    }

    /// Templates that know no tools get tool calls and results as JSON text (llama.cpp).
    func testToolCallsAreWrittenAsJSONForTemplatesWithoutTools() throws {
        let gemma = try Self.goldenTemplate("google-gemma-2-2b-it")
        XCTAssertFalse(gemma.supportsTools)
        let call = ChatMessage(
            role: "assistant", content: "",
            extra: ["tool_calls": [["id": "c1", "type": "function", "function": ["name": "f", "arguments": #"{"x": 1}"#]]]])
        let result = ChatMessage(role: "tool", content: "ok", extra: ["name": "f", "tool_call_id": "c1"])
        let prompt = try gemma.render(messages: [.user("go"), call, result])
        XCTAssertEqual(
            prompt,
            "<start_of_turn>user\ngo<end_of_turn>\n<start_of_turn>model\n{\n  \"tool_calls\": [\n    {\n      \"name\": \"f\",\n      \"arguments\": {\n        \"x\": 1\n      },\n      \"id\": \"c1\"\n    }\n  ]\n}<end_of_turn>\n<start_of_turn>user\n{\n  \"tool_response\": {\n    \"tool\": \"f\",\n    \"content\": \"ok\",\n    \"tool_call_id\": \"c1\"\n  }\n}<end_of_turn>\n"
        )
    }

    /// Llama 3.1 prints arguments with tojson: JSON text arguments are parsed first
    /// (llama.cpp), and printed as a JSON string when rendering as given (transformers).
    func testToolCallArgumentsAreParsedWhenTheTemplateWantsObjects() throws {
        let t = try Self.llama31()
        let call = ChatMessage(
            role: "assistant", content: .none,
            extra: ["tool_calls": [["type": "function", "function": ["name": "f", "arguments": #"{"x": 1}"#]]]])
        var options = ChatTemplateOptions.llamaCpp
        options.now = JinjaCases.now
        let parsed = try t.render(messages: [.user("go"), call], tools: [], options: options)
        XCTAssertTrue(parsed.contains(#"{"name": "f", "parameters": {"x": 1}}"#), parsed)
        options = .transformers
        options.now = JinjaCases.now
        let asGiven = try t.render(messages: [.user("go"), call], tools: [], options: options)
        XCTAssertTrue(asGiven.contains(#"{"name": "f", "parameters": "{\"x\": 1}"}"#), asGiven)
    }

    /// tools absent: undefined for llama.cpp, none for transformers (templates can tell).
    func testAbsentToolsAreUndefinedOrNone() throws {
        let t = try ChatTemplate(source: "{{ tools is defined }} {{ tools is none }} {{ documents is defined }}")
        XCTAssertEqual(try t.render(messages: []), "False False False")
        XCTAssertEqual(try t.render(messages: [], options: .transformers), "True True True")
        XCTAssertEqual(try t.render(messages: [], tools: [["type": "function"]]), "True False False")
        XCTAssertEqual(try t.render(messages: [], extraContext: ["tools": "x"]), "True False False")
    }

    func testFallbackTemplates() throws {
        let messages: [ChatMessage] = [.system("S"), .user("U"), .assistant("A")]
        XCTAssertEqual(
            try ChatTemplate.chatML.render(messages: messages, addGenerationPrompt: true),
            "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\nA<|im_end|>\n<|im_start|>assistant\n")
        XCTAssertEqual(
            try ChatTemplate.plain.render(messages: messages, addGenerationPrompt: true, bosToken: "<s>"),
            "<s>system: S\nuser: U\nassistant: A\nassistant:")
        XCTAssertTrue(ChatTemplate.chatML.supportsSystemRole)
    }

    // MARK: Finding a model's template

    func testTemplateFromTokenizerConfigFolder() throws {
        let dir = try temporaryDirectory()
        let config = #"{"bos_token": {"content": "<s>", "lstrip": false}, "eos_token": "</s>", "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}{{ eos_token }}"}]}"#
        try Data(config.utf8).write(to: dir.appendingPathComponent("tokenizer_config.json"))
        let found = try ChatTemplate.load(modelPath: dir.path)
        XCTAssertEqual(found.bosToken, "<s>")
        XCTAssertEqual(found.eosToken, "</s>")
        let t = try XCTUnwrap(found.template)
        XCTAssertEqual(try t.render(messages: [.user("hi")], bosToken: found.bosToken, eosToken: found.eosToken), "<s>hi</s>")
        // The config file itself works too.
        XCTAssertNotNil(try ChatTemplate.load(modelPath: dir.appendingPathComponent("tokenizer_config.json").path).template)
    }

    func testTemplateFromChatTemplateFilesNextToTheModel() throws {
        let dir = try temporaryDirectory()
        try Data(#"{"eos_token": "</s>"}"#.utf8).write(to: dir.appendingPathComponent("tokenizer_config.json"))
        XCTAssertNil(try ChatTemplate.load(modelPath: dir.path).template)
        try Data(#"{"chat_template": "json:{{ messages|length }}"}"#.utf8).write(to: dir.appendingPathComponent("chat_template.json"))
        XCTAssertEqual(try ChatTemplate.load(modelPath: dir.path).template?.render(messages: [.user("x")]), "json:1")
        try Data("jinja:{{ messages|length }}".utf8).write(to: dir.appendingPathComponent("chat_template.jinja"))
        let found = try ChatTemplate.load(modelPath: dir.path)
        XCTAssertEqual(try found.template?.render(messages: []), "jinja:0")
        XCTAssertEqual(found.eosToken, "</s>")
    }

    func testTemplateFromGGUF() throws {
        let dir = try temporaryDirectory()
        var writer = GGUFWriter()
        writer.add("general.architecture", .string("llama"))
        writer.add("tokenizer.ggml.tokens", .array(.string, [.string("<unk>"), .string("<s>"), .string("</s>")]))
        writer.add("tokenizer.ggml.bos_token_id", .uint32(1))
        writer.add("tokenizer.ggml.eos_token_id", .uint32(2))
        writer.add("tokenizer.chat_template", .string("{{ bos_token }}{{ messages[0].content }}{{ eos_token }}"))
        let url = dir.appendingPathComponent("m.gguf")
        try writer.write(to: url)
        let found = try ChatTemplate.load(modelPath: url.path)
        XCTAssertEqual(found.bosToken, "<s>")
        XCTAssertEqual(found.eosToken, "</s>")
        XCTAssertEqual(try found.template?.render(messages: [.user("x")], bosToken: found.bosToken, eosToken: found.eosToken), "<s>x</s>")
        // A folder holding one .gguf.
        XCTAssertNotNil(try ChatTemplate.load(modelPath: dir.path).template)

        var bare = GGUFWriter()
        bare.add("general.architecture", .string("llama"))
        let bareURL = dir.appendingPathComponent("bare.gguf")
        try bare.write(to: bareURL)
        XCTAssertNil(try ChatTemplate.load(modelPath: bareURL.path).template)
    }

    // MARK: Speed and concurrency

    /// Parse once, render many: a Llama 3.1 prompt takes well under a millisecond in
    /// release builds (and a few in debug builds, which is what tests run). Checked as
    /// work (the sandbox's count of operations and bytes made, the same on any machine),
    /// not as seconds, which a busy machine stretches at random; the time is reported.
    func testRenderingIsFast() throws {
        let t = try Self.llama31()
        let messages: [ChatMessage] = [.system("You are helpful."), .user("Hi"), .assistant("Hello!"), .user("What is 2+2?")]
        _ = try t.render(messages: messages, addGenerationPrompt: true)
        let n = 200
        let start = Date()
        for _ in 0..<n { _ = try t.render(messages: messages, addGenerationPrompt: true) }
        let perRender = Date().timeIntervalSince(start) / Double(n)
        let context: JinjaObject = [
            "messages": .array(messages.map { .object(["role": .string($0.role), "content": $0.content]) }),
            "add_generation_prompt": true, "bos_token": "", "eos_token": "",
        ]
        let work = try t.template.renderMeasured(context)
        print(String(format: "Llama 3.1 template render: %.1f µs, %d operations, %d bytes made", perRender * 1e6, work.operations, work.createdBytes))
        XCTAssertLessThan(work.operations, 2_000)
        XCTAssertLessThan(work.createdBytes, 64 << 10)
    }

    func testConcurrentRendersAgree() throws {
        let t = try Self.llama31()
        let messages: [ChatMessage] = [.user("Hi"), .assistant("Hello!"), .user("Again")]
        let expected = try t.render(messages: messages, addGenerationPrompt: true)
        let results = Mutex([String](repeating: "", count: 16))
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let out = (try? t.render(messages: messages, addGenerationPrompt: true)) ?? "failed"
            results.withLock { $0[i] = out }
        }
        XCTAssertEqual(results.withLock { $0 }, Array(repeating: expected, count: 16))
    }

    private func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("chat-template-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }
}
