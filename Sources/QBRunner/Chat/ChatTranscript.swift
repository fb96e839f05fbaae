import Foundation
import QBGeneration
import QBSupport

/// A chat's history as JSONL: one message per line, oldest first, in the shape chat APIs
/// and `ChatMessage.parse` use, so a saved chat can be read by other tools and a
/// hand-written one resumed:
///
///     {"role":"system","content":"You are terse."}
///     {"role":"user","content":"Hello"}
///     {"role":"assistant","content":"Hi.","finish_reason":"eos"}
///
/// `finish_reason` (optional) records how a reply ended ("cancelled" for one stopped by
/// Ctrl-C). Reading accepts an optional first system message, then user and assistant
/// messages alternating, starting with a user message and ending with an assistant one;
/// blank lines are skipped. Anything else is an error naming the file and line.
public enum ChatTranscript {
    /// The JSONL text of a conversation.
    public static func encode(_ conversation: ChatConversation) -> String {
        var lines: [String] = []
        if let s = conversation.effectiveSystem { lines.append(line(.system, s, nil)) }
        for t in conversation.turns {
            lines.append(line(.user, t.user, nil))
            lines.append(line(.assistant, t.assistant, t.finishReason))
        }
        return lines.map { $0 + "\n" }.joined()
    }

    /// Writes the conversation to `path` atomically (a reader never sees half a file).
    public static func save(_ conversation: ChatConversation, to path: String) throws {
        try AtomicWriter.write(Data(encode(conversation).utf8), to: URL(fileURLWithPath: path))
    }

    /// Reads a conversation saved by `save` (or written by hand in the same shape).
    public static func load(from path: String) throws -> ChatConversation {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file"
            throw LocatedError(path: path, reason)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw LocatedError(path: path, "not UTF-8 text")
        }
        return try decode(text, path: path)
    }

    /// Parses JSONL text; `path` names it in errors.
    public static func decode(_ text: String, path: String) throws -> ChatConversation {
        var conversation = ChatConversation()
        var pendingUser: (text: String, line: Int)?
        var sawMessage = false
        let decoder = JSONDecoder()
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = index + 1
            let trimmed = raw.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty { continue }
            let message: Line
            do {
                try NestingDepth.checkJSON(trimmed.utf8)
            } catch {
                throw LocatedError(path: path, line: lineNumber, "expected a JSON object with string \"role\" and \"content\" (\(error.description))")
            }
            do {
                message = try decoder.decode(Line.self, from: Data(trimmed.utf8))
            } catch {
                throw LocatedError(
                    path: path, line: lineNumber,
                    "expected a JSON object with string \"role\" and \"content\" (\(Self.reason(error)))")
            }
            guard let role = ChatRole(rawValue: message.role) else {
                throw LocatedError(path: path, line: lineNumber, "unsupported role \"\(message.role)\" (expected system, user or assistant)")
            }
            switch role {
            case .system:
                guard !sawMessage else {
                    throw LocatedError(path: path, line: lineNumber, "a system message may only come first")
                }
                conversation.system = message.content
            case .user:
                if pendingUser != nil {
                    throw LocatedError(path: path, line: lineNumber, "two user messages in a row (expected an assistant reply between them)")
                }
                pendingUser = (message.content, lineNumber)
            case .assistant:
                guard let user = pendingUser else {
                    throw LocatedError(path: path, line: lineNumber, "an assistant message without a user message before it")
                }
                let finish = message.finishReason.flatMap(FinishReason.init(rawValue:))
                conversation.turns.append(ChatTurn(user: user.text, assistant: message.content, finishReason: finish))
                pendingUser = nil
            }
            sawMessage = true
        }
        if let user = pendingUser {
            throw LocatedError(path: path, line: user.line, "the last user message has no assistant reply after it")
        }
        return conversation
    }

    private struct Line: Decodable {
        let role: String
        let content: String
        let finishReason: String?

        enum CodingKeys: String, CodingKey {
            case role, content
            case finishReason = "finish_reason"
        }
    }

    private static func line(_ role: ChatRole, _ content: String, _ finish: FinishReason?) -> String {
        var s = "{\"role\":\(quoted(role.rawValue)),\"content\":\(quoted(content))"
        if let f = finish { s += ",\"finish_reason\":\(quoted(f.rawValue))" }
        return s + "}"
    }

    /// A JSON string literal (Foundation's escaping, which keeps the line on one line).
    private static func quoted(_ s: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        guard let data = try? encoder.encode(s), let text = String(data: data, encoding: .utf8) else {
            // Encoding a String cannot fail; this keeps the function total all the same.
            return "\"\""
        }
        return text
    }

    /// DecodingError's debugDescription without the coding path noise.
    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): return "no \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let c), DecodingError.valueNotFound(_, let c):
            let field = c.codingPath.last?.stringValue ?? "value"
            return "\"\(field)\" is not a string"
        case DecodingError.dataCorrupted: return "not valid JSON"
        default: return "\(error)"
        }
    }
}
