import Foundation
import XCTest
import QBTestSupport

@testable import QBJinja
@testable import QBText

/// Hostile templates, as a downloaded model could carry: each ends with a clear error
/// naming the template and the limit, without the work or memory it asks for. The
/// budget is work and bytes counted by the engine, so which limit fires does not depend on
/// how busy the machine is (the wall-time limit is raised here; it has a test of its own).
/// Real memory (peak RSS of a process rendering each case) is checked by
/// CLITests.JinjaSandboxMemoryTests with the same corpus.
final class JinjaSandboxTests: XCTestCase {
    enum Expect: Equatable {
        case limit(Set<JinjaLimit>)
        case syntax, unsupported, render
        /// Renders or fails cleanly: the point is that it does not trap.
        case noTrap
    }

    /// The corpus: name, template, what must stop it.
    static let corpus: [(name: String, source: String, expect: Expect)] = {
        let valueSize = Expect.limit([.valueBytes])
        let work = Expect.limit([.operations, .createdBytes])
        let long = 50_000
        return [
            // The three cases of issue #18.
            ("nested range loops", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", work),
            ("namespace doubling", #"{% set ns = namespace(s="x") %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"#,
             .limit([.valueBytes, .createdBytes])),
            ("string times 10^10", "{{ 'x' * 10000000000 }}", valueSize),
            // Repetition.
            ("string times Int.max", "{{ 'x' * 9223372036854775807 }}", valueSize),
            ("int times string", "{{ 10000000000 * 'ab' }}", valueSize),
            ("list times 10^9", "{{ [1] * 1000000000 }}", valueSize),
            ("list of lists shared", "{% set l = [[1] * 1000] * 100000 %}{{ l|length }}", valueSize),
            ("list of a big string", "{% set s = 'x' * 1000000 %}{% set l = [s] * 100 %}{{ l|length }}", valueSize),
            // Growth by ~, + and join.
            ("concat chain", "{% set s = 'x' * 3000000 %}{{ s ~ s ~ s }}", valueSize),
            ("plus strings", "{% set s = 'x' * 5000000 %}{{ s + s }}", valueSize),
            ("plus growth in a loop",
             "{% set ns = namespace(s='') %}{% for i in range(100000) %}{% set ns.s = ns.s + 'x' * 1000 %}{% endfor %}",
             .limit([.valueBytes, .createdBytes])),
            ("list growth in a loop",
             "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}{% set ns.l = ns.l + [i] %}{% endfor %}", work),
            ("dict growth in a loop",
             "{% set ns = namespace(d={}) %}{% for i in range(100000) %}{% set ns.d = dict(ns.d.items()|list + [(i|string, 'x' * 100)]) %}{% endfor %}",
             work),
            ("join with a big separator", "{{ range(100000)|join('x' * 1000) }}", valueSize),
            ("str.join", "{{ ('y' * 1000).join(range(100000)|map('string')) }}", valueSize),
            ("sum of lists", "{{ ([[1] * 100000] * 100)|sum(start=[])|length }}", valueSize),
            // Filters and methods that widen.
            ("replace filter", "{{ ('a' * 1000000)|replace('a', 'b' * 100) }}", valueSize),
            ("replace empty old", "{{ ('a' * 100000).replace('', 'x' * 1000) }}", .limit([.valueBytes, .operations])),
            ("center filter", "{{ 'x'|center(1000000000000) }}", valueSize),
            ("ljust", "{{ 'x'.ljust(1000000000000) }}", valueSize),
            ("center method with fill", "{{ 'x'.center(1000000000000, '*') }}", valueSize),
            ("zfill", "{{ '7'.zfill(1000000000000) }}", valueSize),
            ("expandtabs", "{{ ('\t' * 1000000).expandtabs(100000) }}", valueSize),
            ("indent width", "{{ 'a\nb'|indent(1000000000000) }}", valueSize),
            ("indent string", "{{ ('a\n' * 100000)|indent('x' * 1000) }}", valueSize),
            ("printf width", "{{ '%1000000000000s' % 'x' }}", valueSize),
            ("printf precision", "{{ '%.1000000000000f' % 1.5 }}", valueSize),
            ("format filter width", "{{ '%99999999999d'|format(1) }}", valueSize),
            ("printf mapping reuse", "{{ ('%(a)s' * 100000) % {'a': 'x' * 1000} }}", valueSize),
            ("str.format field reuse", "{{ ('{0}' * 100000).format('x' * 1000) }}", .limit([.valueBytes, .operations])),
            ("batch fill", "{{ [1]|batch(1000000000000, 'x')|list }}", valueSize),
            ("split into pieces", "{{ (',' * 5000000).split(',')|length }}", valueSize),
            ("iterate a long string", "{% for c in 'x' * 5000000 %}{% endfor %}", valueSize),
            ("stepped slice", "{{ ('x' * 5000000)[::2]|length }}", .limit([.valueBytes, .createdBytes])),
            // Escapes.
            ("escape", "{{ ('&' * 4000000)|escape }}", valueSize),
            ("escape concat", "{{ ('<' * 3000000)|e ~ ('<' * 3000000)|e }}", valueSize),
            ("tojson control characters", "{{ ('\u{01}' * 2000000)|tojson }}", valueSize),
            // tojson on huge and deep values.
            ("tojson indent", "{{ [1]|tojson(indent=1000000000000) }}", valueSize),
            ("tojson big list", "{% set l = range(100000)|list %}{{ (l * 5)|tojson }}", valueSize),
            ("tojson deep indent", "{% set ns = namespace(x=1) %}{% for i in range(900) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|tojson(indent=100000) }}",
             valueSize),
            ("deep value", "{% set ns = namespace(x=1) %}{% for i in range(5000) %}{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x|tojson }}",
             .render),
            ("repr of a big list", "{{ ['x' * 3000000] }}", valueSize),
            // Output.
            ("output flood", "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}", .limit([.outputBytes])),
            ("text flood", "{% for i in range(100000) %}" + String(repeating: "t", count: 1000) + "{% endfor %}", .limit([.outputBytes])),
            ("set block capture", "{% set x %}{% for i in range(100000) %}{{ 'y' * 1000 }}{% endfor %}{% endset %}", .limit([.outputBytes])),
            // Work without size.
            ("macro fan-out", "{% macro f(n) %}{% if n < 40 %}{{ f(n + 1) }}{{ f(n + 1) }}{% endif %}{% endmacro %}{{ f(0) }}",
             .limit([.operations])),
            ("unique is quadratic", "{{ range(100000)|unique|list|length }}", .limit([.operations])),
            ("in is linear", "{% set l = range(100000)|list %}{% for i in l %}{% if i in l %}{% endif %}{% endfor %}", .limit([.operations])),
            ("equality walks", "{% set l = range(100000)|list %}{% for i in range(100000) %}{% if l == l %}{% endif %}{% endfor %}", .limit([.operations])),
            ("substring search", "{{ ('a' * 4000000).count('a' * 2000000 ~ 'b') }}", .limit([.operations])),
            ("sort", "{% for i in range(1000) %}{{ (range(100000)|list)|sort|length }}{% endfor %}", work),
            // Recursion.
            ("macro recursion", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", .render),
            ("caller recursion", "{% macro m() %}{{ caller() }}{% endmacro %}{% macro r(n) %}{% call m() %}{{ r(n + 1) }}{% endcall %}{% endmacro %}{{ r(0) }}",
             .render),
            ("recursive loop", "{% for x in [1] recursive %}{{ loop([1]) }}{% endfor %}", .render),
            ("include", "{% include 'other.jinja' %}", .unsupported),
            ("import", "{% import 'macros.jinja' as m %}{{ m.f() }}", .unsupported),
            ("extends", "{% extends 'base.jinja' %}", .unsupported),
            // range.
            ("range too long", "{{ range(1000000)|length }}", .render),
            ("range huge step", "{{ range(0, 9223372036854775807, 4611686018427387904)|list }}", .noTrap),
            ("range full span", "{{ range(-9223372036854775807, 9223372036854775807)|length }}", .render),
            ("range negative span", "{{ range(9223372036854775807, -9223372036854775807, -1)|length }}", .render),
            ("slice huge step", "{{ 'abc'[2::9223372036854775807] }}", .noTrap),
            // Depth (#22.4): 50,000-term expressions and deep nesting fail when parsed.
            ("50,000 additions", "{{ " + Array(repeating: "1", count: long).joined(separator: " + ") + " }}", .syntax),
            ("50,000 concatenations", "{{ " + Array(repeating: "'a'", count: long).joined(separator: " ~ ") + " }}", .syntax),
            ("50,000 ands", "{{ " + Array(repeating: "true", count: long).joined(separator: " and ") + " }}", .syntax),
            ("50,000 filters", "{{ 'x'" + String(repeating: "|string", count: long) + " }}", .syntax),
            ("50,000 attributes", "{{ x" + String(repeating: ".a", count: long) + " }}", .syntax),
            ("50,000 calls", "{{ x" + String(repeating: "()", count: long) + " }}", .syntax),
            ("50,000 conditionals", "{{ 1" + String(repeating: " if true else 1", count: long) + " }}", .syntax),
            ("100,000 parentheses", "{{ " + String(repeating: "(", count: 100_000) + "1" + String(repeating: ")", count: 100_000) + " }}", .syntax),
            ("100,000 brackets", "{{ " + String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000) + " }}", .syntax),
            ("100,000 nots", "{{ " + String(repeating: "not ", count: 100_000) + "1 }}", .syntax),
            ("100,000 minus signs", "{{ " + String(repeating: "-", count: 100_000) + "1 }}", .syntax),
            ("10,000 nested ifs", String(repeating: "{% if true %}", count: 10_000) + String(repeating: "{% endif %}", count: 10_000), .syntax),
            ("10,000 nested fors", String(repeating: "{% for x in [1] %}", count: 10_000) + String(repeating: "{% endfor %}", count: 10_000), .syntax),
        ]
    }()

    static func run(_ source: String, name: String, limits: JinjaLimits) -> (error: (any Error)?, seconds: Double, operations: Int, created: Int) {
        let start = DispatchTime.now().uptimeNanoseconds
        var error: (any Error)?
        var operations = 0, created = 0
        do {
            let t = try JinjaTemplate(source: source, name: name)
            let r = JinjaRenderer(templateName: name, now: Date(timeIntervalSince1970: 0), limits: limits)
            defer {
                operations = r.budget.operations
                created = r.budget.created
            }
            _ = try r.render(t.body, frame: t.frame, context: ["x": ["a": 1]])
        } catch let e {
            error = e
        }
        return (error, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, operations, created)
    }

    func testHostileTemplatesStopWithClearErrors() throws {
        XCTAssertGreaterThanOrEqual(Self.corpus.count, 33)
        // The wall-time backstop is raised so that the limit that fires is the one counted
        // in work and bytes, whatever the machine's load.
        var limits = JinjaLimits.standard
        limits.seconds = 120
        var report = "hostile templates (debug build; error, seconds, operations, bytes made):\n"
        for c in Self.corpus {
            let name = "hostile/" + c.name
            let r = Self.run(c.source, name: name, limits: limits)
            let line = "  \(c.name): \(r.error.map { "\($0)".prefix(140) } ?? "no error") [\(String(format: "%.3f", r.seconds)) s, \(r.operations) ops, \(r.created >> 10) KB]"
            report += line + "\n"
            if c.expect == .noTrap { continue }
            guard let error = r.error as? ChatTemplateError else {
                XCTFail("\(c.name): expected an error, got \(r.error.map { "\($0)" } ?? "none")")
                continue
            }
            XCTAssertTrue(error.description.hasPrefix(name + ":"), "\(c.name): the error names the template: \(error)")
            switch (c.expect, error) {
            case (.limit(let allowed), .limitExceeded(_, _, let limit, let message)):
                XCTAssertTrue(allowed.contains(limit), "\(c.name): stopped by \(limit), expected \(allowed): \(message)")
                XCTAssertTrue(error.description.contains(limit.rawValue), "\(c.name): the error names the limit: \(error)")
            case (.syntax, .syntax), (.unsupported, .unsupported), (.render, .render): break
            default: XCTFail("\(c.name): expected \(c.expect), got \(error)")
            }
            // Work, not seconds, decides: but nothing may take long even in a debug build.
            XCTAssertLessThan(r.seconds, 30, c.name)
            XCTAssertLessThanOrEqual(r.created, limits.createdBytes + limits.valueBytes, c.name)
        }
        print(report)
    }

    /// The cases that must not trap may also render: they only must not crash.
    func testOverflowingArgumentsDoNotTrap() throws {
        for source in [
            "{{ range(0, 9223372036854775807, 4611686018427387904)|list }}", "{{ 'abc'[2::9223372036854775807] }}",
            "{{ 'abc'[::-9223372036854775807] }}", "{{ [1, 2, 3][1::9223372036854775807] }}",
        ] {
            _ = try? JinjaTemplate(source: source).render([:])
        }
    }

    func testWallTimeIsABackstop() throws {
        var limits = JinjaLimits.standard
        limits.seconds = 0.01
        limits.operations = .max
        limits.createdBytes = .max
        let r = Self.run("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", name: "slow", limits: limits)
        guard case .limitExceeded(let t, _, .seconds, _)? = r.error as? ChatTemplateError else {
            return XCTFail("expected the time limit, got \(String(describing: r.error))")
        }
        XCTAssertEqual(t, "slow")
    }

    /// A realistic conversation: a system prompt and 12 turns of ordinary length.
    static func conversation() -> [ChatMessage] {
        var messages = [ChatMessage(role: "system", content: String(repeating: "You are a careful assistant. ", count: 12))]
        for i in 0..<12 {
            messages.append(ChatMessage(role: "user", content: "Question \(i): " + String(repeating: "How do quantized weights change perplexity? ", count: 10)))
            messages.append(ChatMessage(role: "assistant", content: "Answer \(i): " + String(repeating: "Each block keeps a scale and small integers. ", count: 20)))
        }
        messages.append(ChatMessage(role: "user", content: "Thanks. One more question about Q4_0?"))
        return messages
    }

    /// Every real template renders a realistic conversation well inside the limits: with
    /// each limit at a twentieth of the standard one, and the figures are reported.
    func testRealTemplatesUseLittleOfTheLimits() throws {
        var files: [URL] = []
        for folder in ["chat-templates/hf-templates", "chat-templates/llamacpp-minja-goldens/templates"] {
            let dir = try Fixtures.url(folder)
            files += try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".jinja") }.sorted()
                .map { dir.appendingPathComponent($0) }
        }
        XCTAssertGreaterThanOrEqual(files.count, 40)
        var options = ChatTemplateOptions.llamaCpp
        options.now = Date(timeIntervalSince1970: 1_721_952_000)
        options.limits = JinjaLimits(
            operations: JinjaLimits.standard.operations / 20, outputBytes: JinjaLimits.standard.outputBytes / 20,
            valueBytes: JinjaLimits.standard.valueBytes / 20, createdBytes: JinjaLimits.standard.createdBytes / 20, seconds: 60)
        var report = "real templates, 26-message conversation (debug build; ms, operations, KB made, output bytes):\n"
        var worstOps = 0, worstCreated = 0
        for url in files {
            let source = try String(contentsOf: url, encoding: .utf8)
            let name = url.deletingPathExtension().lastPathComponent
            let chat = try ChatTemplate(source: source, name: name)
            let start = DispatchTime.now().uptimeNanoseconds
            let output = try chat.render(messages: Self.conversation(), addGenerationPrompt: true, bosToken: "<s>", eosToken: "</s>", options: options)
            let ms = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            // The same render measured (the context ChatTemplate makes, near enough).
            var context: JinjaObject = ["add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"]
            context["messages"] = .array(Self.conversation().map { .object(["role": .string($0.role), "content": $0.content]) })
            let measured = try? chat.template.renderMeasured(context, now: options.now ?? Date())
            worstOps = max(worstOps, measured?.operations ?? 0)
            worstCreated = max(worstCreated, measured?.createdBytes ?? 0)
            report += "  \(name): \(String(format: "%.1f", ms)) ms, \(measured.map { "\($0.operations) ops, \($0.createdBytes >> 10) KB" } ?? "(needs folding)"), \(output.utf8.count) bytes\n"
        }
        report += "  worst: \(worstOps) operations, \(worstCreated >> 10) KB made\n"
        print(report)
    }
}

/// Real memory: each hostile template rendered by `quantbench template` in a process of
/// its own, its peak resident size (from wait4) compared with a trivial template's.
final class JinjaSandboxMemoryTests: XCTestCase {
    static var binary: URL? {
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("quantbench")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        return nil
    }

    /// Runs the binary under GNU time and returns its exit status and peak RSS in KB.
    /// Measured by `time` (which forks the command from its own small process) because a
    /// process spawned straight from this one inherits this process's peak: Linux keeps
    /// the high-water mark of the memory a vfork child shared with its parent across exec.
    static func spawn(_ binary: URL, _ args: [String], scratch: URL) throws -> (status: Int32, maxRSSKB: Int) {
        let time = "/usr/bin/time"
        guard FileManager.default.isExecutableFile(atPath: time) else { throw XCTSkip("GNU time (\(time)) is not installed") }
        let report = scratch.appendingPathComponent("rss-\(UUID().uuidString)")
        var pid: pid_t = 0
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv: [UnsafeMutablePointer<CChar>?] = ([time, "-f", "%M", "-o", report.path, binary.path] + args).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        let rc = posix_spawn(&pid, time, &actions, nil, argv, environ)
        guard rc == 0 else { throw XCTSkip("cannot start \(time): \(rc)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let text = (try? String(contentsOf: report, encoding: .utf8)) ?? ""
        // GNU time writes "Command exited with non-zero status N" (or a signal) first.
        let kb = text.split(whereSeparator: \.isNewline).last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        return (status, kb)
    }

    func testHostileTemplatesStayUnder64MB() throws {
        guard let binary = Self.binary else { throw XCTSkip("the quantbench binary is not built beside the tests") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-sandbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let messages = dir.appendingPathComponent("messages.json")
        try Data(#"[{"role": "user", "content": "hi"}]"#.utf8).write(to: messages)
        func measure(_ source: String, _ name: String) throws -> (Int32, Int) {
            let file = dir.appendingPathComponent(name + ".jinja")
            try Data(source.utf8).write(to: file)
            return try Self.spawn(binary, ["template", "--template", file.path, "--messages", messages.path], scratch: dir)
        }
        let (baseStatus, base) = try measure("{{ messages[0].content }}", "baseline")
        XCTAssertEqual(baseStatus, 0)
        var report = "hostile templates in a process each (peak RSS above a trivial template's \(base / 1024) MB):\n"
        var worst = 0
        for (i, c) in JinjaSandboxTests.corpus.enumerated() {
            let (status, rss) = try measure(c.source, "case\(i)")
            let growth = max(0, rss - base)
            worst = max(worst, growth)
            report += "  \(c.name): exit \(status >> 8), +\(growth / 1024) MB\n"
            // Exited (no signal): status is exit code << 8, and GNU time exits with the
            // command's code, or 128 + the signal that killed it.
            XCTAssertEqual(status & 0x7f, 0, "\(c.name): killed by signal \(status & 0x7f)")
            XCTAssertLessThan(status >> 8, 128, "\(c.name): killed by signal \((status >> 8) - 128)")
            XCTAssertGreaterThan(rss, 0, "\(c.name): no peak RSS measured")
            XCTAssertLessThan(growth, 64 * 1024, "\(c.name): peak RSS grew by \(growth / 1024) MB")
        }
        report += "  worst: +\(worst / 1024) MB"
        print(report)
    }
}
