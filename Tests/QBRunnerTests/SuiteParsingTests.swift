import Foundation
import XCTest
import QBGeneration
@testable import QBRunner

/// Suites: every shipped suite parses to what it says; every kind of bad input is an
/// error naming the file and the line.
final class SuiteParsingTests: XCTestCase {
    func parse(_ yaml: String) throws -> Suite {
        try SuiteLoader.parse(yaml, path: "bad.yaml", defaultName: "bad")
    }

    func testShippedSuitesParse() throws {
        let names = ["smoke", "chat", "long-prompt", "unicode", "stops", "cancel", "throughput"]
        for name in names {
            let path = RunnerFixtures.prompts.appendingPathComponent("\(name).yaml").path
            let suite = try SuiteLoader.load(path: path)
            XCTAssertEqual(suite.name, name)
            XCTAssertFalse(suite.cases.isEmpty, name)
            XCTAssertEqual(suite.hash.count, 16)
            XCTAssertTrue(suite.cases.allSatisfy { $0.line > 0 }, name)
        }
        let smoke = try SuiteLoader.load(path: RunnerFixtures.prompts.appendingPathComponent("smoke.yaml").path)
        XCTAssertEqual(Set(smoke.cases.map(\.kind)), [.generate, .chat, .cancel, .throughput])
        let sampled = try XCTUnwrap(smoke.cases.first { $0.id == "sampled" })
        XCTAssertEqual(sampled.sampling.temperature, 0.8)
        XCTAssertEqual(sampled.sampling.seed, 42)
        XCTAssertEqual(sampled.maxTokens, 24, "from defaults")

        let long = try SuiteLoader.load(path: RunnerFixtures.prompts.appendingPathComponent("long-prompt.yaml").path)
        XCTAssertEqual(long.cases.compactMap { if case .tokens(let n, _) = $0.prompt { n } else { nil } }, [128, 512, 2048, 512])
        let throughput = try SuiteLoader.load(path: RunnerFixtures.prompts.appendingPathComponent("throughput.yaml").path)
        XCTAssertEqual(throughput.cases.compactMap(\.throughput?.name), ["pp512", "pp128", "tg128", "tg128 @ d4096"])
        let cancel = try SuiteLoader.load(path: RunnerFixtures.prompts.appendingPathComponent("cancel.yaml").path)
        XCTAssertTrue(cancel.cases.contains { $0.cancel == .decode(afterTokens: 5) })
        XCTAssertTrue(cancel.cases.contains { $0.cancel == .prefill(afterLayers: 3) })
        let unicode = try SuiteLoader.load(path: RunnerFixtures.prompts.appendingPathComponent("unicode.yaml").path)
        XCTAssertTrue(unicode.cases.contains { $0.prompt == .text("Cafe\u{301} na\u{308}ive, Tiê\u{301}ng Việt, Z\u{335}a\u{336}l\u{337}g\u{338}o\u{335}.") })
    }

    func testSuiteFeatures() throws {
        let suite = try parse("""
            suite: demo
            defaults:
              max_tokens: 7
              system: Be brief.
              sampling: {temperature: 0.5, seed: 3}
            cases:
              - id: a
                messages:
                  - {role: user, content: Hi}
                turns: [More]
                sampling: {top_k: 5, logit_bias: [{token: 2, bias: -inf}, {token: 3, bias: 1.5}]}
                expect: {finish_reason: [eos, max_tokens], reuses_prompt: true}
              - id: b
                prompt_tokens: 64
                prompt: filler
                stop: "\\n"
            """)
        XCTAssertEqual(suite.name, "demo")
        let a = suite.cases[0]
        XCTAssertEqual(a.line, 7)
        XCTAssertEqual(a.kind, .chat)
        XCTAssertEqual(a.prompt, .messages(system: "Be brief.", [SuiteMessage(role: .user, content: "Hi")]))
        XCTAssertEqual(a.turns, ["More"])
        XCTAssertEqual(a.maxTokens, 7)
        XCTAssertEqual(a.sampling.temperature, 0.5, "defaults kept")
        XCTAssertEqual(a.sampling.topK, 5, "case overrides")
        XCTAssertEqual(a.sampling.seed, 3)
        XCTAssertEqual(a.sampling.logitBias, [LogitBias(token: 2, bias: -.infinity), LogitBias(token: 3, bias: 1.5)])
        XCTAssertEqual(a.expect.finishReasons, [.endOfSequence, .maxTokens])
        XCTAssertTrue(a.expect.reusesPrompt)
        XCTAssertEqual(suite.cases[1].prompt, .tokens(count: 64, filler: "filler"))
        XCTAssertEqual(suite.cases[1].stop, ["\n"])
    }

    /// Every malformed input names the file and the line of the problem.
    func testBadInputNamesFileAndLine() {
        let cases: [(String, Int?, String)] = [
            // Not YAML at all.
            ("cases:\n  - id: a\n    prompt: [unclosed\n", 4, "not valid YAML"),
            ("cases:\n\t- id: a\n", 2, "not valid YAML"),
            ("", 1, "empty"),
            // The document's shape.
            ("- just\n- a list\n", 1, "must be a mapping"),
            ("suite: x\n", 1, "no 'cases'"),
            ("cases: 3\n", 1, "must be a list"),
            ("cases: []\n", 1, "empty"),
            ("sutie: x\ncases:\n  - {id: a, prompt: hi}\n", 1, "did you mean 'suite'"),
            ("suite: bad name!\ncases:\n  - {id: a, prompt: hi}\n", 1, "suite name"),
            ("cases:\n  - {id: a, prompt: hi}\ncases:\n  - {id: b, prompt: hi}\n", 3, "appears twice"),
            ("defaults:\n  max_tokens: -1\ncases:\n  - {id: a, prompt: hi}\n", 2, "at least 0"),
            ("defaults:\n  maxtokens: 3\ncases:\n  - {id: a, prompt: hi}\n", 2, "unknown key 'maxtokens'"),
            // Case ids.
            ("cases:\n  - prompt: hi\n", 2, "no 'id'"),
            ("cases:\n  - id: 'has space'\n    prompt: hi\n", 2, "case id"),
            ("cases:\n  - {id: a, prompt: hi}\n  - {id: a, prompt: ho}\n", 3, "used twice (first on line 2)"),
            ("cases:\n  - just text\n", 2, "must be a mapping"),
            // Case keys and values.
            ("cases:\n  - id: a\n    prompt: hi\n    max_token: 3\n", 4, "did you mean 'max_tokens'"),
            ("cases:\n  - id: a\n    prompt: hi\n    max_tokens: lots\n", 4, "whole number"),
            ("cases:\n  - id: a\n    prompt: hi\n    context: 0\n", 4, "at least 1"),
            ("cases:\n  - id: a\n", 2, "needs one of 'prompt'"),
            ("cases:\n  - id: a\n    prompt: hi\n    messages: [{role: user, content: x}]\n", 2, "cannot be combined"),
            ("cases:\n  - id: a\n    prompt: hi\n    system: s\n", 4, "'system' needs 'messages'"),
            ("cases:\n  - id: a\n    prompt: hi\n    turns: [x]\n", 4, "'turns' needs 'messages'"),
            ("cases:\n  - id: a\n    prompt: hi\n    stop: ['']\n", 4, "cannot be empty"),
            ("cases:\n  - id: a\n    prompt: hi\n    force_eos: maybe\n", 4, "true or false"),
            ("cases:\n  - id: a\n    prompt: hi\n    stop_from_output: {start: 1, length: 0}\n", 4, "at least 1"),
            // Messages.
            ("cases:\n  - id: a\n    messages:\n      - {role: robot, content: x}\n", 4, "role must be one of"),
            ("cases:\n  - id: a\n    messages:\n      - {role: user}\n", 4, "no 'content'"),
            ("cases:\n  - id: a\n    messages: []\n", 2, "'messages' is empty"),
            // Sampling.
            ("cases:\n  - id: a\n    prompt: hi\n    sampling:\n      temperature: -1\n", 5, "temperature must be"),
            ("cases:\n  - id: a\n    prompt: hi\n    sampling:\n      top_p: 0\n", 5, "top-p must be"),
            ("cases:\n  - id: a\n    prompt: hi\n    sampling:\n      temprature: 1\n", 5, "did you mean 'temperature'"),
            ("cases:\n  - id: a\n    prompt: hi\n    sampling:\n      sampler: magic\n", 5, "sampler must be"),
            ("cases:\n  - id: a\n    prompt: hi\n    sampling:\n      seed: -3\n", 5, "2^64-1"),
            ("cases:\n  - id: a\n    prompt: hi\n    sampling:\n      logit_bias: [{token: 1}]\n", 5, "needs 'bias'"),
            ("cases:\n  - id: a\n    prompt: hi\n    sampling:\n      sampler: llama2c\n      repeat_penalty: 1.2\n", 5, "not supported"),
            // Cancellation.
            ("cases:\n  - id: a\n    prompt: hi\n    cancel: {during: soon}\n", 4, "decode or prefill"),
            ("cases:\n  - id: a\n    prompt: hi\n    cancel: {during: decode}\n", 4, "after_tokens"),
            ("cases:\n  - id: a\n    prompt: hi\n    cancel: {during: decode, after_tokens: 0}\n", 4, "at least 1"),
            ("cases:\n  - id: a\n    prompt: hi\n    cancel: {during: prefill, after_tokens: 2}\n", 4, "after_layers"),
            // Throughput.
            ("cases:\n  - id: a\n    throughput: {test: bench, tokens: 5}\n", 3, "pp or tg"),
            ("cases:\n  - id: a\n    throughput: {test: pp}\n", 3, "needs 'tokens'"),
            ("cases:\n  - id: a\n    throughput: {test: pp, tokens: 5}\n    prompt: hi\n", 4, "takes no 'prompt'"),
            // Expectations.
            ("cases:\n  - id: a\n    prompt: hi\n    expect:\n      finish_reason: done\n", 5, "unknown finish_reason"),
            ("cases:\n  - id: a\n    prompt: hi\n    expect:\n      contain: [x]\n", 5, "did you mean 'contains'"),
        ]
        for (yaml, line, fragment) in cases {
            assertLocated("bad.yaml", line: line, fragment) { _ = try parse(yaml) }
        }
    }

    func testUnreadableAndMissingSuites() throws {
        let dir = try RunnerFixtures.temporaryDirectory("suites")
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("latin1.yaml")
        try Data([0x63, 0x61, 0x73, 0x65, 0x73, 0x3A, 0x20, 0xE9, 0xFF]).write(to: file)
        assertLocated(file.path, line: nil, "not UTF-8") { _ = try SuiteLoader.load(path: file.path) }
        assertLocated(dir.appendingPathComponent("absent.yaml").path, line: nil, "cannot read") {
            _ = try SuiteLoader.load(path: dir.appendingPathComponent("absent.yaml").path)
        }
        assertLocated("no/such/suite.yaml", line: nil, "no such suite file") { _ = try SuiteLoader.locate("no/such/suite.yaml") }
        assertLocated("no-such-suite.yaml", line: nil, "no suite named") { _ = try SuiteLoader.locate("no-such-suite") }
    }

    func testThroughputSuiteFromFlags() {
        let s = SuiteLoader.throughputSuite(prompt: [512], generate: [128], depths: [0, 1024])
        XCTAssertEqual(s.cases.compactMap(\.throughput?.name), ["pp512", "tg128", "pp512 @ d1024", "tg128 @ d1024"])
        XCTAssertEqual(Set(s.cases.map(\.id)).count, 4)
        XCTAssertEqual(s.hash, SuiteLoader.throughputSuite(prompt: [512], generate: [128], depths: [0, 1024]).hash)
    }

    func testChatFallbackRendering() throws {
        // A model without a chat template: the one renderer continues the text plainly.
        let plain = ChatPromptFormat(kind: .plainContinuation)
        let messages = ChatPromptRenderer.conversation(
            system: "Be kind.", [SuiteMessage(role: .user, content: "Hi"), SuiteMessage(role: .assistant, content: "Hello")])
        let text = try plain.render(messages: messages.map { (role: $0.role, content: $0.content) })
        XCTAssertEqual(text, "Be kind.\nHiHello\n")
        // A follow-up renders the earlier conversation unchanged, so its prefix is reusable.
        let first = try plain.render(messages: [(role: .user, content: "Hi")])
        let next = try plain.render(messages: [(role: .user, content: "Hi"), (role: .assistant, content: " there"), (role: .user, content: "More")])
        XCTAssertTrue(next.hasPrefix(first))
    }
}
