import Foundation
import QBGeneration
import QBText
import Yams

/// Reads prompt suites (YAML, schema in Prompts/README.md) and finds them by name.
///
/// Every problem is a `LocatedError` with the file and the line: a malformed suite never
/// runs half-understood.
public enum SuiteLoader {
    /// The suite `bench` runs when none is named.
    public static let defaultSuite = "smoke"

    static let rootKeys = ["suite", "description", "defaults", "cases"]
    static let defaultKeys = ["max_tokens", "sampling", "system", "context", "batch", "stop"]
    static let caseKeys = [
        "id", "prompt", "system", "messages", "turns", "prompt_tokens", "max_tokens", "stop", "stop_from_output",
        "force_eos", "sampling", "context", "batch", "cancel", "throughput", "expect",
    ]
    static let samplingKeys = [
        "sampler", "temperature", "top_k", "top_p", "min_p", "repeat_penalty", "repeat_last_n", "presence_penalty",
        "frequency_penalty", "logit_bias", "seed",
    ]
    static let expectKeys = [
        "finish_reason", "min_tokens", "max_tokens", "contains", "not_contains", "reuses_prompt", "prompt_round_trip",
        "no_replacement_characters",
    ]

    /// Finds a suite: `nameOrPath` if it is a file, else `Prompts/<name>.yaml` in the
    /// current directory or one above it, or beside the executable's checkout.
    public static func locate(_ nameOrPath: String) throws -> String {
        let fm = FileManager.default
        var isDir: ObjCBool = false
        if fm.fileExists(atPath: nameOrPath, isDirectory: &isDir), !isDir.boolValue { return nameOrPath }
        let looksLikePath = nameOrPath.contains("/") || nameOrPath.hasSuffix(".yaml") || nameOrPath.hasSuffix(".yml")
        if looksLikePath { throw LocatedError(path: nameOrPath, "no such suite file") }
        let file = "\(nameOrPath).yaml"
        var tried: [String] = []
        for dir in promptDirectories() {
            let candidate = dir.appendingPathComponent(file).path
            tried.append(candidate)
            if fm.fileExists(atPath: candidate) { return candidate }
        }
        let known = promptDirectories().lazy.compactMap { try? fm.contentsOfDirectory(atPath: $0.path) }.first ?? []
        let names = known.filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(5)) }.sorted()
        throw LocatedError(
            path: file,
            "no suite named '\(nameOrPath)' (looked in \(tried.isEmpty ? "no Prompts folder" : tried.joined(separator: ", ")))"
                + (names.isEmpty ? "" : "; suites: \(names.joined(separator: ", "))"))
    }

    /// The suite `nameOrPath` names: a file, else `Prompts/<name>.yaml` found on disk (as
    /// `locate` searches), else the copy compiled into the binary (`EmbeddedPrompts`), so a
    /// copied binary runs its suites from any folder.
    public static func resolve(_ nameOrPath: String) throws -> Suite {
        let path: String
        do {
            path = try locate(nameOrPath)
        } catch let error as LocatedError {
            guard let (file, text) = embedded(nameOrPath) else {
                let builtIn = embeddedSuiteNames()
                guard !builtIn.isEmpty, error.message.hasPrefix("no suite named") else { throw error }
                throw LocatedError(path: error.path, "no suite named '\(nameOrPath)'; suites: \(builtIn.joined(separator: ", "))")
            }
            let name = String(file.dropLast(5))
            return try parse(text, path: "Prompts/\(file)", defaultName: name, hash: XXH64.hex(Data(text.utf8)))
        }
        return try load(path: path)
    }

    /// The built-in suite `nameOrPath` names (`smoke`, `smoke.yaml` or `Prompts/smoke.yaml`).
    static func embedded(_ nameOrPath: String) -> (file: String, text: String)? {
        var name = nameOrPath
        if name.hasPrefix("Prompts/") { name.removeFirst("Prompts/".count) }
        guard !name.contains("/") else { return nil }
        let file = name.hasSuffix(".yaml") ? name : name + ".yaml"
        return EmbeddedPrompts.files[file].map { (file, $0) }
    }

    /// The names of the built-in suites.
    public static func embeddedSuiteNames() -> [String] {
        EmbeddedPrompts.files.keys.filter { $0.hasSuffix(".yaml") }.map { String($0.dropLast(5)) }.sorted()
    }

    /// Prompts/ folders to search: from the working directory up, then from the
    /// executable's folder up (so `.build/release/quantbench` finds the checkout's suites).
    static func promptDirectories() -> [URL] {
        var out: [URL] = []
        func walk(_ start: URL) {
            var dir = start.standardized
            for _ in 0..<8 {
                let p = dir.appendingPathComponent("Prompts")
                var isDir: ObjCBool = false
                if FileManager.default.fileExists(atPath: p.path, isDirectory: &isDir), isDir.boolValue, !out.contains(p) {
                    out.append(p)
                }
                let up = dir.deletingLastPathComponent()
                if up.path == dir.path { break }
                dir = up
            }
        }
        walk(URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        walk(URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent())
        return out
    }

    /// Reads and validates the suite file at `path`.
    public static func load(path: String) throws -> Suite {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocatedError(path: path, "cannot read the suite file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw LocatedError(path: path, "the suite file is not UTF-8 text")
        }
        let fallbackName = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return try parse(text, path: path, defaultName: fallbackName, hash: XXH64.hex(data))
    }

    /// Parses suite text; `path` is only used in messages and recorded in the suite.
    public static func parse(_ text: String, path: String, defaultName: String = "suite", hash: String? = nil) throws -> Suite {
        let root = try YAMLObject(YAMLObject.parse(text, path: path), path: path, what: "the suite")
        try root.allowOnly(rootKeys)
        let name = try root.string("suite") ?? defaultName
        try checkName(name, root.value("suite") ?? root.node, path: path, what: "the suite name")

        var base = SuiteCase(id: "")
        var baseSystem: String?
        if let d = try root.object("defaults", what: "defaults") {
            try d.allowOnly(defaultKeys)
            base.maxTokens = try d.int("max_tokens", min: 0, max: 1 << 24) ?? base.maxTokens
            if let s = try d.object("sampling", what: "defaults: sampling") { base.sampling = try sampling(s, over: base.sampling) }
            baseSystem = try d.string("system")
            base.context = try d.int("context", min: 1, max: 1 << 24)
            base.batch = try d.int("batch", min: 1, max: 1 << 20)
            base.stop = try stops(d, "stop") ?? []
        }

        guard let casesNode = root.value("cases") else { throw root.error("the suite has no 'cases' list") }
        guard case .sequence(let items) = casesNode else {
            throw YAMLObject.error(path, casesNode, "'cases' must be a list (lines starting with '- ')")
        }
        guard !items.isEmpty else { throw YAMLObject.error(path, casesNode, "'cases' is empty") }
        var cases: [SuiteCase] = []
        var seen: [String: Int] = [:]
        for item in items {
            let c = try parseCase(item, base: base, baseSystem: baseSystem, path: path)
            if let first = seen[c.id] {
                throw LocatedError(path: path, line: c.line, "case id '\(c.id)' is used twice (first on line \(first))")
            }
            seen[c.id] = c.line
            cases.append(c)
        }
        return Suite(
            name: name, description: try root.string("description"), path: path,
            hash: hash ?? XXH64.hex(Data(text.utf8)), cases: cases)
    }

    static func checkName(_ name: String, _ node: Node, path: String, what: String) throws {
        let ok = !name.isEmpty && name.count <= 80
            && name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) && $0.isASCII || "-_.".unicodeScalars.contains($0) }
        guard ok else {
            throw YAMLObject.error(path, node, "\(what) '\(name)' must be 1 to 80 characters of A-Z, a-z, 0-9, '-', '_', '.'")
        }
    }

    static func parseCase(_ node: Node, base: SuiteCase, baseSystem: String?, path: String) throws -> SuiteCase {
        let probe = try YAMLObject(node, path: path, what: "a case")
        guard let id = try probe.string("id") else { throw probe.error("a case has no 'id'") }
        try checkName(id, probe.value("id") ?? node, path: path, what: "the case id")
        let o = try YAMLObject(node, path: path, what: "case '\(id)'")
        try o.allowOnly(caseKeys)
        var c = base
        c.id = id
        c.line = o.line ?? 0
        c.maxTokens = try o.int("max_tokens", min: 0, max: 1 << 24) ?? base.maxTokens
        if let s = try o.object("sampling", what: "case '\(id)': sampling") { c.sampling = try sampling(s, over: base.sampling) }
        c.context = try o.int("context", min: 1, max: 1 << 24) ?? base.context
        c.batch = try o.int("batch", min: 1, max: 1 << 20) ?? base.batch
        c.stop = try stops(o, "stop") ?? base.stop
        c.forceEndOfSequence = try o.bool("force_eos") ?? false
        if let s = try o.object("stop_from_output") {
            try s.allowOnly(["start", "length"])
            c.stopFromOutput = StopProbe(start: try s.int("start", min: 0, max: 1 << 24) ?? 0, length: try s.int("length", min: 1, max: 1 << 24) ?? 1)
        }

        // The prompt: exactly one source (a throughput test takes none).
        let sources = ["prompt", "messages", "prompt_tokens"].filter { o.value($0) != nil }
        if let t = try o.object("throughput") {
            try t.allowOnly(["test", "tokens", "depth"])
            guard let name = try t.string("test"), let test = ThroughputTest.Test(rawValue: name) else {
                throw (t.value("test").map { YAMLObject.error(path, $0, "case '\(id)': throughput test must be pp or tg") })
                    ?? t.error("case '\(id)': throughput needs 'test: pp' or 'test: tg'")
            }
            guard let tokens = try t.int("tokens", min: 1, max: 1 << 20) else { throw t.error("case '\(id)': throughput needs 'tokens'") }
            c.throughput = ThroughputTest(test: test, tokens: tokens, depth: try t.int("depth", min: 0, max: 1 << 20) ?? 0)
            for key in ["prompt", "messages", "prompt_tokens", "turns", "cancel", "stop", "stop_from_output", "system", "expect"]
            where o.value(key) != nil {
                throw YAMLObject.error(path, o.pairs.first { $0.key == key }?.keyNode, "case '\(id)': a throughput test takes no '\(key)'")
            }
            return c
        }
        if sources.isEmpty { throw o.error("case '\(id)' needs one of 'prompt', 'messages' or 'prompt_tokens' (or 'throughput')") }
        if o.value("messages") != nil && sources.count > 1 {
            throw o.error("case '\(id)': 'messages' cannot be combined with 'prompt' or 'prompt_tokens'")
        }
        if let count = try o.int("prompt_tokens", min: 1, max: 1 << 20) {
            c.prompt = .tokens(count: count, filler: try o.string("prompt"))
        } else if let text = try o.string("prompt") {
            c.prompt = .text(text)
        } else if let list = try o.list("messages") {
            guard !list.isEmpty else { throw o.error("case '\(id)': 'messages' is empty") }
            let messages = try list.map { try message($0, path: path, caseID: id) }
            c.prompt = .messages(system: try o.string("system") ?? baseSystem, messages)
        }
        if o.value("system") != nil {
            guard case .messages = c.prompt else {
                throw YAMLObject.error(path, o.value("system"), "case '\(id)': 'system' needs 'messages'")
            }
        }
        if let turns = try o.strings("turns") {
            guard case .messages = c.prompt else {
                throw YAMLObject.error(path, o.value("turns"), "case '\(id)': 'turns' needs 'messages'")
            }
            c.turns = turns
        }
        if let k = try o.object("cancel") { c.cancel = try cancel(k, id: id) }
        if c.cancel != nil, !c.turns.isEmpty {
            throw YAMLObject.error(path, o.value("cancel"), "case '\(id)': a cancel case has a single turn")
        }
        if let e = try o.object("expect") { c.expect = try expectations(e, id: id) }
        return c
    }

    static func stops(_ o: YAMLObject, _ key: String) throws -> [String]? {
        guard let list = try o.strings(key) else { return nil }
        if list.contains("") { throw YAMLObject.error(o.path, o.value(key), "\(o.what): a stop string cannot be empty") }
        return list
    }

    static func message(_ node: Node, path: String, caseID: String) throws -> SuiteMessage {
        let m = try YAMLObject(node, path: path, what: "case '\(caseID)': a message")
        try m.allowOnly(["role", "content"])
        guard let roleName = try m.string("role") else { throw m.error("case '\(caseID)': a message has no 'role'") }
        guard let role = SuiteMessage.Role(rawValue: roleName) else {
            throw YAMLObject.error(
                path, m.value("role"),
                "case '\(caseID)': role must be one of \(SuiteMessage.Role.allCases.map(\.rawValue).joined(separator: ", ")), got '\(roleName)'")
        }
        guard let content = try m.string("content") else { throw m.error("case '\(caseID)': a message has no 'content'") }
        return SuiteMessage(role: role, content: content)
    }

    static func cancel(_ k: YAMLObject, id: String) throws -> CancelPoint {
        try k.allowOnly(["during", "after_tokens", "after_layers"])
        switch try k.string("during") {
        case "decode":
            guard let n = try k.int("after_tokens", min: 1, max: 1 << 24) else { throw k.error("case '\(id)': cancel during decode needs 'after_tokens' (>= 1)") }
            if k.value("after_layers") != nil { throw k.error("case '\(id)': 'after_layers' belongs to cancel during prefill") }
            return .decode(afterTokens: n)
        case "prefill":
            guard let n = try k.int("after_layers", min: 0, max: 1 << 24) else { throw k.error("case '\(id)': cancel during prefill needs 'after_layers' (>= 0)") }
            if k.value("after_tokens") != nil { throw k.error("case '\(id)': 'after_tokens' belongs to cancel during decode") }
            return .prefill(afterLayers: n)
        default:
            throw YAMLObject.error(k.path, k.value("during") ?? k.node, "case '\(id)': cancel 'during' must be decode or prefill")
        }
    }

    static func expectations(_ e: YAMLObject, id: String) throws -> Expectations {
        try e.allowOnly(expectKeys)
        var x = Expectations()
        if let reasons = try e.list("finish_reason") {
            x.finishReasons = try reasons.map { node in
                let s = try YAMLObject.string(node, path: e.path, what: "case '\(id)': finish_reason")
                guard let r = FinishReason(rawValue: s) else {
                    let all = ["eos", "stop", "max_tokens", "context_full", "cancelled"]
                    throw YAMLObject.error(e.path, node, "case '\(id)': unknown finish_reason '\(s)'; one of \(all.joined(separator: ", "))")
                }
                return r
            }
        }
        x.minTokens = try e.int("min_tokens", min: 0, max: 1 << 24)
        x.maxTokens = try e.int("max_tokens", min: 0, max: 1 << 24)
        x.contains = try e.strings("contains") ?? []
        x.notContains = try e.strings("not_contains") ?? []
        x.reusesPrompt = try e.bool("reuses_prompt") ?? false
        x.promptRoundTrip = try e.bool("prompt_round_trip") ?? false
        x.noReplacementCharacters = try e.bool("no_replacement_characters") ?? false
        return x
    }

    /// Sampling keys as `SamplingParameters`' JSON spells them, over `base`; validated here
    /// so a bad value is reported at its line.
    static func sampling(_ s: YAMLObject, over base: SamplingParameters) throws -> SamplingParameters {
        try s.allowOnly(samplingKeys)
        var p = base
        if let name = try s.string("sampler") {
            guard let m = SamplingParameters.Method(rawValue: name) else {
                throw YAMLObject.error(s.path, s.value("sampler"), "\(s.what): sampler must be default or llama2c, got '\(name)'")
            }
            p.sampler = m
        }
        p.temperature = try s.double("temperature") ?? p.temperature
        p.topK = try s.int("top_k") ?? p.topK
        p.topP = try s.double("top_p") ?? p.topP
        p.minP = try s.double("min_p") ?? p.minP
        p.repeatPenalty = try s.double("repeat_penalty") ?? p.repeatPenalty
        p.repeatLastN = try s.int("repeat_last_n", max: 1 << 24) ?? p.repeatLastN
        p.presencePenalty = try s.double("presence_penalty") ?? p.presencePenalty
        p.frequencyPenalty = try s.double("frequency_penalty") ?? p.frequencyPenalty
        p.seed = try s.uint64("seed") ?? p.seed
        if let biases = try s.list("logit_bias") {
            p.logitBias = try biases.map { node in
                let b = try YAMLObject(node, path: s.path, what: "\(s.what): a logit_bias entry")
                try b.allowOnly(["token", "bias"])
                guard let token = try b.int("token", min: 0, max: Int(Int32.max)) else { throw b.error("\(b.what) needs 'token'") }
                let bias: Float
                if let text = try? b.string("bias"), text.lowercased() == "-inf" {
                    bias = -.infinity
                } else if let d = try b.double("bias") {
                    bias = Float(d)
                } else {
                    throw b.error("\(b.what) needs 'bias' (a number or -inf)")
                }
                return LogitBias(token: TokenID(token), bias: bias)
            }
        }
        do {
            try p.validate()
        } catch let e as SamplingParameterError {
            throw s.error("\(s.what): \(e.description)")
        }
        return p
    }
}

extension SuiteLoader {
    /// The suite `bench --pp/--tg` runs: llama-bench's tests, prompt tests first, each at
    /// every depth given (0 for none).
    public static func throughputSuite(prompt: [Int], generate: [Int], depths: [Int] = [0]) -> Suite {
        var cases: [SuiteCase] = []
        for d in depths.isEmpty ? [0] : depths {
            for n in prompt { cases.append(SuiteCase(id: "pp\(n)" + (d > 0 ? "-d\(d)" : ""), throughput: ThroughputTest(test: .prompt, tokens: n, depth: d))) }
            for n in generate { cases.append(SuiteCase(id: "tg\(n)" + (d > 0 ? "-d\(d)" : ""), throughput: ThroughputTest(test: .generate, tokens: n, depth: d))) }
        }
        let description = cases.compactMap { $0.throughput?.name }.joined(separator: ", ")
        let name = cases.map(\.id).joined(separator: "-")
        return Suite(
            name: name.count <= 80 ? name : "throughput", description: "llama-bench tests: \(description)", path: nil,
            hash: XXH64.hex(Data(("llama-bench " + description).utf8)), cases: cases)
    }
}
