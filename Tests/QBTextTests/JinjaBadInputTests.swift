import Foundation
import XCTest

@testable import QBJinja
@testable import QBText

/// Malformed templates, templates needing what is not implemented, and bad messages: each
/// fails with a typed error naming the template (or file) and saying what is wrong.
final class JinjaBadInputTests: XCTestCase {
    private func syntaxError(_ source: String, file: StaticString = #filePath, line: UInt = #line) -> (line: Int, message: String)? {
        do {
            _ = try JinjaTemplate(source: source, name: "bad.jinja")
            XCTFail("parsed: \(source.debugDescription)", file: file, line: line)
        } catch ChatTemplateError.syntax(let template, let l, let message) {
            XCTAssertEqual(template, "bad.jinja", file: file, line: line)
            return (l, message)
        } catch {
            XCTFail("\(source.debugDescription): unexpected \(error)", file: file, line: line)
        }
        return nil
    }

    private func unsupported(_ source: String, file: StaticString = #filePath, line: UInt = #line) -> String? {
        do {
            _ = try JinjaTemplate(source: source, name: "bad.jinja")
            XCTFail("parsed: \(source.debugDescription)", file: file, line: line)
        } catch ChatTemplateError.unsupported(_, _, let construct) {
            return construct
        } catch {
            XCTFail("\(source.debugDescription): unexpected \(error)", file: file, line: line)
        }
        return nil
    }

    func testUnclosedTags() {
        XCTAssertEqual(syntaxError("a\n{{ x ")?.line, 2)
        XCTAssertEqual(syntaxError("a\n{{ x ")?.message, "unclosed tag: '{{' opened on line 2 has no '}}'")
        XCTAssertEqual(syntaxError("{% if x ")?.message, "unclosed tag: '{%' opened on line 1 has no '%}'")
        XCTAssertEqual(syntaxError("\n\n{# note")?.message, "missing end of comment tag ('#}') for the comment opened here")
        XCTAssertEqual(syntaxError("\n\n{# note")?.line, 3)
        XCTAssertEqual(syntaxError("{% raw %}x")?.message, "missing end of raw directive ({% endraw %}) for the raw block opened here")
        XCTAssertEqual(syntaxError("{{ 'abc }}")?.message, "unterminated string literal")
        XCTAssertEqual(syntaxError("{{ (1 }}")?.message, "unexpected '}', expected ')'")
    }

    func testUnclosedBlocksNameTheInnermostOne() {
        let e = syntaxError("{% for m in messages %}\n{% if m %}\nx\n{% endfor %}")
        XCTAssertEqual(e?.line, 4)
        XCTAssertEqual(e?.message, "unexpected tag 'endfor'; the innermost open block is 'if' (line 2)")
        let eof = syntaxError("{% for m in messages %}\n{{ m }}")
        XCTAssertEqual(
            eof?.message,
            "unexpected end of template; looking for 'else' or 'endfor'. The innermost block that needs to be closed is 'for' (line 1)."
        )
        XCTAssertEqual(syntaxError("{% endif %}")?.message, "unknown tag 'endif'")
        XCTAssertEqual(syntaxError("{% frobnicate %}")?.message, "unknown tag 'frobnicate'")
        XCTAssertEqual(syntaxError("{% break %}")?.message, "'break' outside of a for loop")
        XCTAssertEqual(syntaxError("{% for x in y %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}")?.message, "'continue' outside of a for loop")
    }

    func testUnknownFiltersAndTestsAreNamed() {
        XCTAssertEqual(syntaxError("line 1\n{{ messages | shout }}")?.message, "no filter named 'shout'")
        XCTAssertEqual(syntaxError("line 1\n{{ messages | shout }}")?.line, 2)
        XCTAssertEqual(syntaxError("{% if x is shiny %}{% endif %}")?.message, "no test named 'shiny'")
        XCTAssertEqual(unsupported("{{ text | urlize }}"), "the 'urlize' filter")
    }

    func testUnsupportedTagsAreNamed() {
        XCTAssertEqual(unsupported("{% include 'other.jinja' %}"), "the '{% include %}' tag")
        XCTAssertEqual(unsupported("{% extends 'base' %}"), "the '{% extends %}' tag")
        XCTAssertEqual(unsupported("{% import 'm' as m %}"), "the '{% import %}' tag")
        XCTAssertEqual(unsupported("{{ f(*args) }}"), "*args / **kwargs in calls")
        XCTAssertEqual(syntaxError("{% do x.append(1) %}")?.message, "unknown tag 'do'")
    }

    func testBadExpressions() {
        XCTAssertEqual(syntaxError("{{ }}")?.message, "expected an expression, got '}}'")
        XCTAssertEqual(syntaxError("{{ 1 + }}")?.message, "unexpected '}}'")
        XCTAssertEqual(syntaxError("{{ a b }}")?.message, "expected '}}' to end the expression, got 'b'")
        XCTAssertEqual(syntaxError("{{ x is defined is none }}")?.message, "you cannot chain multiple tests with 'is'")
        XCTAssertEqual(syntaxError("{% set = 1 %}")?.message, "expected an assignment target, got '='")
        XCTAssertEqual(syntaxError("{% macro m(a=1, b) %}{% endmacro %}")?.message, "non-default argument 'b' follows default argument")
        XCTAssertEqual(syntaxError("{{ 'a' @ 'b' }}")?.message, "unexpected character '@' in a tag")
        XCTAssertEqual(syntaxError("{{ '\\xZZ' }}")?.message, "truncated \\xXX escape in a string literal")
    }

    /// Pathological nesting is refused, not a stack overflow.
    func testDeepNestingIsRefused() {
        let deep = "{{ " + String(repeating: "(", count: 5000) + "1" + String(repeating: ")", count: 5000) + " }}"
        XCTAssertEqual(syntaxError(deep)?.message, "expression nested too deeply")
        let nots = "{{ " + String(repeating: "not ", count: 5000) + "x }}"
        XCTAssertEqual(syntaxError(nots)?.message, "expression nested too deeply")
    }

    func testDeepBlocksAreRefused() {
        let deep = String(repeating: "{% if true %}", count: 300) + "x" + String(repeating: "{% endif %}", count: 300)
        XCTAssertEqual(syntaxError(deep)?.message, "blocks nested too deeply")
    }

    /// A value fed back into itself (`set ns.x = [ns.x]`) cannot nest without bound;
    /// big flat values are fine. The standard half-second wall-time backstop is lifted: the
    /// nesting bound is what is tested, and a loaded machine (a CI run beside the suite)
    /// took 0.6 s of a debug build's wall time to reach it.
    func testRunawayNestingFails() throws {
        let limits = JinjaLimits(seconds: 60)
        let t = try JinjaTemplate(
            source: "{% set ns = namespace(x=[]) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|length }}")
        XCTAssertThrowsError(try t.render([:], limits: limits)) { error in
            XCTAssertTrue("\(error)".contains("value nested more than 1000 levels deep"), "\(error)")
        }
        XCTAssertEqual(try JinjaTemplate(source: "{{ range(100000)|list|length }}").render([:], limits: limits), "100000")
    }

    func testRuntimeFailuresNameTheLine() throws {
        let t = try JinjaTemplate(source: "ok\n{% for m in messages %}\n{{ m.content + 1 }}\n{% endfor %}", name: "t.jinja")
        XCTAssertThrowsError(try t.render(["messages": [["content": "x"]]])) { error in
            XCTAssertEqual(
                error as? ChatTemplateError, .render(template: "t.jinja", line: 3, message: "can only concatenate str (not \"int\") to str"))
            XCTAssertEqual("\(error)", "t.jinja:3: template error: can only concatenate str (not \"int\") to str")
        }
        let r = try JinjaTemplate(source: "\n\n{{ raise_exception('Only user and assistant roles are supported!') }}", name: "r.jinja")
        XCTAssertThrowsError(try r.render([:])) { error in
            XCTAssertEqual(error as? ChatTemplateError, .raised(template: "r.jinja", line: 3, message: "Only user and assistant roles are supported!"))
            XCTAssertEqual((error as? ChatTemplateError)?.raisedMessage, "Only user and assistant roles are supported!")
        }
    }

    func testRunawayRecursionFails() throws {
        let t = try JinjaTemplate(source: "{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}")
        XCTAssertThrowsError(try t.render([:])) { error in
            XCTAssertTrue("\(error)".contains("maximum recursion depth exceeded"), "\(error)")
        }
    }

    func testMalformedTemplateFileIsNamed() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jinja-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("broken.jinja")
        try Data("{% for m in messages %}\n{{ m.content }}\n".utf8).write(to: file)
        XCTAssertThrowsError(try ChatTemplate.load(templateFile: file.path)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix(file.path + ":2: template syntax error: unexpected end of template"), text)
        }
        let config = dir.appendingPathComponent("tokenizer_config.json")
        try Data(#"{"chat_template": "{{ x | nope }}"}"#.utf8).write(to: config)
        XCTAssertThrowsError(try ChatTemplate.load(modelPath: dir.path)) { error in
            XCTAssertEqual("\(error)", "\(config.path) (chat_template):1: template syntax error: no filter named 'nope'")
        }
        XCTAssertThrowsError(try ChatTemplate.load(templateFile: dir.appendingPathComponent("missing.jinja").path)) { error in
            XCTAssertTrue("\(error)".contains("missing.jinja: cannot read chat template: no such file"), "\(error)")
        }
        XCTAssertThrowsError(try ChatTemplate.load(modelPath: dir.appendingPathComponent("nothing").path))
    }

    func testMalformedMessages() {
        func failure(_ json: String) -> String {
            do {
                _ = try ChatMessage.parse(json: Data(json.utf8), source: "msgs.json")
                return "parsed"
            } catch {
                return "\(error)"
            }
        }
        XCTAssertEqual(failure(#"[{"role": "user", "content": "hi"},]"#), "msgs.json: invalid JSON: expected a JSON value, found ']' at line 1, column 36")
        XCTAssertEqual(failure("[{\"role\": \"user\",\n \"content\": \"hi\"}"), "msgs.json: invalid JSON: unexpected end of JSON in an array at line 2, column 18")
        XCTAssertEqual(failure(#"[{"content": "hi"}]"#), "msgs.json: invalid chat messages: message 0 has no string \"role\"")
        XCTAssertEqual(failure(#"["hi"]"#), "msgs.json: invalid chat messages: message 0 is not an object")
        XCTAssertEqual(failure(#"{"conversation": []}"#), "msgs.json: invalid chat messages: expected a list of messages or an object with a \"messages\" list")
        XCTAssertEqual(failure(#"{"messages": [{"role": "user", "content": "\ud800"}]}"#), "parsed")
    }
}
