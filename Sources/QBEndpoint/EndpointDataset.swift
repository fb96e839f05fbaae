import Foundation
import QBGeneration
import QBRunner
import QBSupport

/// `bench --endpoint --dataset FILE`: prompts from a JSON Lines file, one object per line:
/// `prompt` (text, sent to /completions) or `messages` (`[{role, content}]`, roles system,
/// user, assistant; sent to /chat/completions), and optionally `id`, `max_tokens` (default
/// 128) and `temperature` (default 0). Blank lines are skipped; any other key, type or value
/// is an error naming the file, the line and the field.
public enum EndpointDataset {
    public static let defaultMaxTokens = 128
    static let largestFile = 256 << 20

    public static func load(path: String) throws(EndpointError) -> Suite {
        func fail(_ line: Int?, _ reason: String) -> EndpointError { .badDataset(path: path, line: line, reason: reason) }
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let attributes else { throw fail(nil, "cannot read the file (no such file, or not readable)") }
        if let size = attributes[.size] as? Int, size > largestFile {
            throw fail(nil, "the file is larger than \(largestFile >> 20) MB")
        }
        guard let data = FileManager.default.contents(atPath: path) else { throw fail(nil, "cannot read the file") }
        var cases: [SuiteCase] = []
        var lineNumber = 0
        for raw in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let bytes = raw.last == UInt8(ascii: "\r") ? raw.dropLast() : raw[...]
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            let value: JSONValue
            do {
                value = try JSONReader.parse(Data(bytes), maximumDepth: 16)
            } catch {
                throw fail(lineNumber, "not valid JSON: \(error.reason) at column \(error.column)")
            }
            guard let object = value.objectValue else { throw fail(lineNumber, "expected a JSON object") }
            var c = SuiteCase(id: "line-\(lineNumber)", line: lineNumber, maxTokens: defaultMaxTokens)
            var hasPrompt = false
            for (key, v) in object {
                switch key {
                case "id":
                    guard let s = v.stringValue, !s.isEmpty, s.count <= 200 else { throw fail(lineNumber, "id: expected a string of 1 to 200 characters") }
                    c.id = s
                case "prompt":
                    guard let s = v.stringValue else { throw fail(lineNumber, "prompt: expected a string") }
                    c.prompt = .text(s)
                    hasPrompt = true
                case "messages":
                    c.prompt = try messages(v, fail: { fail(lineNumber, $0) })
                    hasPrompt = true
                case "max_tokens":
                    guard let n = v.intValue, (1...1_000_000).contains(n) else { throw fail(lineNumber, "max_tokens: expected a whole number from 1 to 1000000") }
                    c.maxTokens = n
                case "temperature":
                    guard let t = v.doubleValue ?? v.intValue.map(Double.init), t.isFinite, (0...2).contains(t) else {
                        throw fail(lineNumber, "temperature: expected a number from 0 to 2")
                    }
                    c.sampling.temperature = t
                    c.sampling.seed = UInt64(lineNumber)
                default:
                    throw fail(lineNumber, "unknown field '\(key.prefix(60))' (id, prompt, messages, max_tokens, temperature)")
                }
            }
            guard hasPrompt else { throw fail(lineNumber, "no prompt: give 'prompt' (text) or 'messages' (chat)") }
            if object["prompt"] != nil && object["messages"] != nil { throw fail(lineNumber, "prompt and messages are alternatives; give one") }
            cases.append(c)
        }
        guard !cases.isEmpty else { throw fail(nil, "no prompts (an empty file)") }
        return Suite(
            name: URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent, description: "JSON Lines prompts",
            path: path, hash: XXH64.hex(data), cases: cases)
    }

    static func messages(_ v: JSONValue, fail: (String) -> EndpointError) throws(EndpointError) -> PromptSpec {
        guard let items = v.arrayValue, !items.isEmpty else { throw fail("messages: expected a non-empty array") }
        var system: String?
        var out: [SuiteMessage] = []
        for (i, item) in items.enumerated() {
            guard let m = item.objectValue, let roleName = m["role"]?.stringValue, let content = m["content"]?.stringValue else {
                throw fail("messages[\(i)]: expected {\"role\": ..., \"content\": \"...\"}")
            }
            guard let role = ChatRole(rawValue: roleName) else { throw fail("messages[\(i)].role: expected system, user or assistant, got '\(roleName.prefix(40))'") }
            if role == .system && i == 0 {
                system = content
            } else {
                out.append(SuiteMessage(role: role, content: content))
            }
        }
        guard !out.isEmpty else { throw fail("messages: only a system message") }
        return .messages(system: system, out)
    }
}
