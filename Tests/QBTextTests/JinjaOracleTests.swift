import Foundation
import XCTest
import QBTestSupport

@testable import QBJinja
@testable import QBText

/// Python's jinja2, configured as transformers configures it, through
/// oracles/jinja_render.py. Without python3 or jinja2 the tests using it are skipped with
/// the reason, unless QB_REQUIRE_ORACLES=1 (CI), where they fail.
enum JinjaOracle {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("oracles/jinja_render.py")
    static var required: Bool { ProcessInfo.processInfo.environment["QB_REQUIRE_ORACLES"] == "1" }

    struct Case {
        var template: String
        var context: JinjaObject
        /// What strftime_now formats (the goldens' date by default).
        var now = "2024-07-26"
        /// "transformers" (render the context as is) or "llamacpp" (llama.cpp's message
        /// rewriting first).
        var mode = "transformers"
    }

    enum Result: Equatable {
        case output(String)
        case error(String)

        var output: String? { if case .output(let s) = self { return s } else { return nil } }
    }

    static func render(_ cases: [Case], file: StaticString = #filePath, line: UInt = #line) throws -> [Result] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jinja-oracle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let request = dir.appendingPathComponent("request.json"), response = dir.appendingPathComponent("response.json")
        let list: [JinjaValue] = cases.map {
            ["template": .string($0.template), "context": .object($0.context), "now": .string($0.now), "mode": .string($0.mode)]
        }
        // Written by our own JSON writer so that key order (which templates can see) survives.
        try Data(JinjaJSON.dumps(["cases": .array(list)]).utf8).write(to: request)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, request.path, response.path]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            try unavailable("cannot start python3: \(error)", file: file, line: line)
        }
        let log = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        switch process.terminationStatus {
        case 0: break
        case 3, 127: try unavailable("python3 with jinja2 is not available: \(log.suffix(300))", file: file, line: line)
        default:
            XCTFail("jinja_render.py failed (\(process.terminationStatus)): \(log.suffix(2000))", file: file, line: line)
            throw XCTSkip("oracle failed")
        }
        guard case .object(let root) = try JinjaJSON.parse(Data(contentsOf: response)), case .array(let results)? = root["results"],
            results.count == cases.count
        else {
            XCTFail("jinja_render.py gave an unreadable response", file: file, line: line)
            throw XCTSkip("oracle failed")
        }
        return results.map { r in
            if let s = r.objectValue?["output"]?.stringValue { return .output(s) }
            return .error(r.objectValue?["error"]?.stringValue ?? "?")
        }
    }

    private static func unavailable(_ why: String, file: StaticString, line: UInt) throws -> Never {
        if required { XCTFail(why, file: file, line: line) }
        throw XCTSkip(why)
    }
}

/// The engine against jinja2 itself: the construct corpus, every template from the
/// fixtures on several conversations, and random templates.
final class JinjaOracleTests: XCTestCase {
    static let hfTemplates = "chat-templates/hf-templates"
    static let goldens = "chat-templates/llamacpp-minja-goldens"

    func testConstructCorpusIsWhatJinja2Renders() throws {
        let cases = try JinjaCases.constructs.map { c -> JinjaOracle.Case in
            guard case .object(let o) = try JinjaJSON.parse(c.context) else { throw XCTSkip("bad context") }
            return JinjaOracle.Case(template: c.template, context: o)
        }
        let results = try JinjaOracle.render(cases)
        for (c, r) in zip(JinjaCases.constructs, results) {
            XCTAssertEqual(r, .output(c.expected), "\(c.name): the expected text no longer matches jinja2")
        }
        let failures = try JinjaOracle.render(
            try JinjaCases.failures.map { c in
                guard case .object(let o) = try JinjaJSON.parse(c.context) else { throw XCTSkip("bad context") }
                return JinjaOracle.Case(template: c.template, context: o)
            })
        for (c, r) in zip(JinjaCases.failures, failures) {
            XCTAssertNil(r.output, "\(c.name): jinja2 renders this")
        }
    }

    /// Conversations for the newer templates. Tool calls carry their arguments as objects,
    /// which is what transformers documents (and as JSON text in one case, which some
    /// templates print as is).
    static let conversations: [(name: String, json: String, tools: Bool, generation: Bool, extra: JinjaObject)] = [
        ("system+user", #"[{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hello!"}]"#, false, true, [:]),
        ("user, no generation prompt", #"[{"role": "user", "content": "Hello!"}]"#, false, false, [:]),
        (
            "multi-turn with system",
            #"[{"role": "system", "content": "Sys."}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, how can I help?"}, {"role": "user", "content": "Tell me a joke.\nPlease."}]"#,
            false, true, [:]
        ),
        (
            "multi-turn ending with assistant",
            #"[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}, {"role": "user", "content": "Bye"}, {"role": "assistant", "content": "See you"}]"#,
            false, false, [:]
        ),
        (
            "special characters",
            #"[{"role": "user", "content": "Ünïcödé “quotes” 'single' \"double\" \\backslash\\ 🎉 {{ not a tag }} {% neither %}\n\ttabbed"}]"#,
            false, true, [:]
        ),
        (
            "tool call (object arguments)",
            #"[{"role": "system", "content": "Use tools."}, {"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}}]}, {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "{\"temp\": 21.5}"}, {"role": "assistant", "content": "It is 21.5°C."}]"#,
            true, true, [:]
        ),
        (
            "tool call (null content)",
            #"[{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}, {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "sunny"}]"#,
            true, true, [:]
        ),
        (
            "tool call (JSON text arguments)",
            #"[{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "call12345", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}, {"role": "tool", "tool_call_id": "call12345", "name": "get_weather", "content": "sunny"}]"#,
            true, true, [:]
        ),
        ("tools offered", #"[{"role": "user", "content": "Weather in Paris?"}]"#, true, true, [:]),
        (
            "reasoning, thinking off",
            #"[{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "<think>\nsimple\n</think>\n\n4"}, {"role": "user", "content": "3+3?"}]"#,
            false, true, ["enable_thinking": false]
        ),
        (
            "reasoning_content field",
            #"[{"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4", "reasoning_content": "add them"}]"#,
            false, false, [:]
        ),
        ("date_string given", #"[{"role": "user", "content": "date?"}]"#, false, true, ["date_string": "01 Jan 2025"]),
    ]

    static let tools: [JinjaValue] = {
        let json = #"[{"type": "function", "function": {"name": "get_weather", "description": "Get the weather in a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city"}, "unit": {"type": "string", "enum": ["c", "f"]}}, "required": ["city"]}}}]"#
        return (try? JinjaJSON.parse(json))?.arrayValue ?? []
    }()

    static func fixtureTemplates(_ folder: String) throws -> [(name: String, source: String)] {
        let dir = try Fixtures.url(folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jinja") }.sorted()
        return try names.map { (String($0.dropLast(6)), try String(contentsOf: dir.appendingPathComponent($0), encoding: .utf8)) }
    }

    /// Every hf-template on every conversation, as transformers renders them: same text,
    /// or both fail (a template's raise_exception with the same message).
    func testNewerTemplatesRenderExactlyAsJinja2() throws {
        let templates = try Self.fixtureTemplates(Self.hfTemplates)
        XCTAssertEqual(templates.count, 12)
        var cases: [JinjaOracle.Case] = []
        var mine: [Result<String, Error>] = []
        for (name, source) in templates {
            let template = try ChatTemplate(source: source, name: name)
            for conv in Self.conversations {
                let (messages, _) = try ChatMessage.parse(json: Data(conv.json.utf8), source: conv.name)
                var context: JinjaObject = [
                    "messages": .array(messages.map { .object($0.fields) }), "tools": conv.tools ? .array(Self.tools) : .none,
                    "documents": .none, "add_generation_prompt": .bool(conv.generation), "bos_token": "<s>", "eos_token": "</s>",
                ]
                for (k, v) in conv.extra { context[k] = v }
                cases.append(JinjaOracle.Case(template: source, context: context, now: "2025-03-09"))
                var options = ChatTemplateOptions.transformers
                options.now = JinjaOracleTests.date("2025-03-09")
                mine.append(
                    Result {
                        try template.render(
                            messages: messages, addGenerationPrompt: conv.generation, bosToken: "<s>", eosToken: "</s>",
                            tools: conv.tools ? Self.tools : nil, extraContext: conv.extra, options: options)
                    })
            }
        }
        let expected = try JinjaOracle.render(cases)
        var table: [String: (rendered: Int, failedAlike: Int, total: Int)] = [:]
        var i = 0
        for (name, _) in templates {
            var row = (rendered: 0, failedAlike: 0, total: 0)
            for conv in Self.conversations {
                defer { i += 1 }
                row.total += 1
                switch (expected[i], mine[i]) {
                case (.output(let want), .success(let got)):
                    XCTAssertEqual(got, want, "\(name) / \(conv.name)")
                    if got == want { row.rendered += 1 }
                case (.error(let why), .failure(let error)):
                    // A template's own rejection must come with its message.
                    if why.hasPrefix("TemplateError: ") {
                        XCTAssertEqual((error as? ChatTemplateError)?.raisedMessage, String(why.dropFirst(15)), "\(name) / \(conv.name)")
                    }
                    row.failedAlike += 1
                case (.output, .failure(let error)):
                    XCTFail("\(name) / \(conv.name): jinja2 renders it, we fail: \(error)")
                case (.error(let why), .success):
                    XCTFail("\(name) / \(conv.name): jinja2 fails (\(why)), we render")
                }
            }
            table[name] = row
            // Every template renders most conversations (not just fails alike); gemma-2
            // rejects system messages and tool turns.
            XCTAssertGreaterThanOrEqual(row.rendered, 7, name)
        }
        var report = "hf-templates vs jinja2 (transformers settings):\n"
        for (name, _) in templates {
            let r = table[name] ?? (0, 0, 0)
            report += "  \(name): \(r.rendered + r.failedAlike)/\(r.total) identical (\(r.rendered) rendered, \(r.failedAlike) rejected by both)\n"
        }
        print(report)
    }

    /// The same templates with llama.cpp's message preparation (system folding, tool-call
    /// polyfills), against jinja2 after the same preparation (a port of llama.cpp's code in
    /// the oracle).
    func testNewerTemplatesLlamaCppModeMatchesJinja2() throws {
        let templates = try Self.fixtureTemplates(Self.hfTemplates)
        var cases: [JinjaOracle.Case] = []
        var mine: [Result<String, Error>] = []
        for (name, source) in templates {
            let template = try ChatTemplate(source: source, name: name)
            for conv in Self.conversations where conv.extra.isEmpty {
                let (messages, _) = try ChatMessage.parse(json: Data(conv.json.utf8), source: conv.name)
                var context: JinjaObject = [
                    "messages": .array(messages.map { .object($0.fields) }), "add_generation_prompt": .bool(conv.generation),
                    "bos_token": "<s>", "eos_token": "</s>",
                ]
                var extra: JinjaObject = [:]
                if conv.tools {
                    context["tools"] = .array(Self.tools)
                    context["builtin_tools"] = ["wolfram_alpha", "brave_search"]
                    extra["builtin_tools"] = ["wolfram_alpha", "brave_search"]
                }
                cases.append(JinjaOracle.Case(template: source, context: context, now: "2025-03-09", mode: "llamacpp"))
                var options = ChatTemplateOptions.llamaCpp
                options.now = JinjaOracleTests.date("2025-03-09")
                mine.append(
                    Result {
                        try template.render(
                            messages: messages, addGenerationPrompt: conv.generation, bosToken: "<s>", eosToken: "</s>",
                            tools: conv.tools ? Self.tools : nil, extraContext: extra, options: options)
                    })
            }
        }
        let expected = try JinjaOracle.render(cases)
        for (i, (want, got)) in zip(expected, mine).enumerated() {
            switch (want, got) {
            case (.output(let w), .success(let g)): XCTAssertEqual(g, w, "case \(i)")
            case (.error, .failure): break
            case (.output, .failure(let e)): XCTFail("case \(i): jinja2 renders it, we fail: \(e)")
            case (.error(let e), .success): XCTFail("case \(i): jinja2 fails (\(e)), we render")
            }
        }
    }

    /// All 114 golden contexts against jinja2 with llama.cpp's preparation: where the
    /// golden and jinja2 disagree (see ChatTemplateGoldenTests), we side with jinja2.
    func testGoldenContextsMatchJinja2() throws {
        let templates = try Self.fixtureTemplates(Self.goldens + "/templates")
        let contexts = try ChatTemplateGoldenTests.contexts()
        var cases: [JinjaOracle.Case] = []
        var mine: [String] = []
        for (name, source) in templates {
            for (contextName, context) in contexts {
                cases.append(JinjaOracle.Case(template: source, context: context, mode: "llamacpp"))
                mine.append(try ChatTemplateGoldenTests.render(source, name: name, context: context))
                _ = contextName
            }
        }
        let expected = try JinjaOracle.render(cases)
        XCTAssertEqual(expected.count, 114)
        for (i, (want, got)) in zip(expected, mine).enumerated() {
            XCTAssertEqual(got, want.output, "golden case \(i)")
        }
    }

    /// Random templates mixing every whitespace control (`-`, `+`, trim_blocks,
    /// lstrip_blocks, comments, raw blocks) with text, newlines and tabs.
    func testRandomWhitespaceMatchesJinja2() throws {
        var rng = SeededGenerator(seed: 20240726)
        let pieces = ["", " ", "  ", "\n", "\n\n", "\t", " \n ", "\n  ", "x", "ab\n", "\r\n", " \u{a0}", "\n\t "]
        func ws() -> String { (0..<Int.random(in: 0...3, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }.joined() }
        func sign() -> String { ["", "-", "+"].randomElement(using: &rng) ?? "" }
        func tag(_ t: String) -> String { "{%" + sign() + " " + t + " " + sign() + "%}" }
        func block(_ depth: Int) -> String {
            var out = ws()
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                let r = Double.random(in: 0..<1, using: &rng)
                if r < 0.2 && depth < 3 {
                    out += tag("if x") + block(depth + 1) + (Bool.random(using: &rng) ? tag("else") + block(depth + 1) : "") + tag("endif")
                } else if r < 0.35 && depth < 3 {
                    out += tag("for i in [1, 2]") + block(depth + 1) + tag("endfor")
                } else if r < 0.5 {
                    out += "{{" + sign() + " 'v' " + (Bool.random(using: &rng) ? "-" : "") + "}}"
                } else if r < 0.6 {
                    out += "{#" + sign() + " c\n " + sign() + "#}"
                } else if r < 0.65 {
                    out += tag("set y = 1")
                } else if r < 0.7 {
                    out += tag("raw") + ws() + "{{ raw }}" + ws() + tag("endraw")
                }
                out += ws()
            }
            return out
        }
        var cases: [JinjaOracle.Case] = []
        for _ in 0..<400 {
            cases.append(JinjaOracle.Case(template: block(0), context: ["x": .bool(Bool.random(using: &rng))]))
        }
        let expected = try JinjaOracle.render(cases)
        var mismatches = 0
        for (c, want) in zip(cases, expected) {
            let got = Result { try JinjaTemplate(source: c.template).render(c.context) }
            switch (want, got) {
            case (.output(let w), .success(let g)) where w == g: continue
            case (.error, .failure): continue
            default:
                mismatches += 1
                if mismatches <= 5 { XCTFail("\(c.template.debugDescription): jinja2 \(want), we \(got)") }
            }
        }
        XCTAssertEqual(mismatches, 0)
    }

    static func date(_ ymd: String) -> Date {
        let parts = ymd.split(separator: "-").compactMap { Int($0) }
        var c = DateComponents()
        (c.year, c.month, c.day) = (parts[0], parts[1], parts[2])
        return Calendar(identifier: .gregorian).date(from: c) ?? Date(timeIntervalSince1970: 0)
    }
}
