import Foundation
import QBGeneration

/// A scripted chat for `chat --smoke FILE`: one user turn per line.
///
/// Blank lines and lines starting with `#` are skipped; `/system TEXT` (or `/system` alone,
/// to remove it) and `/clear` act as they do in the chat; a line starting with `//` is a
/// message starting with `/`. Every other line is a user message.
public struct ChatSmokeScript: Sendable, Equatable {
    public enum Step: Sendable, Equatable {
        case user(String, line: Int)
        case system(String?)
        case clear
    }

    public var path: String
    public var steps: [Step]

    public init(path: String, steps: [Step]) {
        self.path = path
        self.steps = steps
    }

    /// Reads the script at `path`; a missing `chat-smoke.txt` (bare or as
    /// `Prompts/chat-smoke.txt`) is the copy compiled into the binary.
    public static func load(path: String) throws -> ChatSmokeScript {
        if !FileManager.default.fileExists(atPath: path) {
            var name = path.hasPrefix("Prompts/") ? String(path.dropFirst("Prompts/".count)) : path
            if !name.hasSuffix(".txt") { name += ".txt" }
            if !name.contains("/"), let text = EmbeddedPrompts.files[name] { return try parse(text, path: "Prompts/\(name)") }
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocatedError(path: path, FileManager.default.fileExists(atPath: path) ? "cannot read the file" : "no such file")
        }
        guard let text = String(data: data, encoding: .utf8) else { throw LocatedError(path: path, "not UTF-8 text") }
        return try parse(text, path: path)
    }

    public static func parse(_ text: String, path: String) throws -> ChatSmokeScript {
        var steps: [Step] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw)
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("#") { continue }
            switch ChatInput.parse(line) {
            case .empty:
                continue
            case .message(let m):
                steps.append(.user(m, line: index + 1))
            case .command(.system(let s)):
                steps.append(.system(s))
            case .command(.clear):
                steps.append(.clear)
            case .command:
                throw LocatedError(path: path, line: index + 1, "only /system and /clear can appear in a smoke file")
            }
        }
        guard steps.contains(where: { if case .user = $0 { return true } else { return false } }) else {
            throw ChatError.noTurns(path: path)
        }
        return ChatSmokeScript(path: path, steps: steps)
    }
}

/// One scripted turn's outcome.
public struct ChatSmokeTurn: Sendable {
    public var number: Int
    public var line: Int
    public var user: String
    public var reply: String
    /// Nil when the turn failed before generating.
    public var stats: ChatReplyStats?
    /// Checks that failed, each one line; empty when the turn passed.
    public var failures: [String]

    public var passed: Bool { failures.isEmpty }
}

/// The whole smoke run.
public struct ChatSmokeReport: Sendable {
    public var turns: [ChatSmokeTurn]
    public var seconds: Double

    public var passed: Bool { !turns.isEmpty && turns.allSatisfy(\.passed) }

    /// The closing line.
    public var summary: String {
        let failed = turns.filter { !$0.passed }
        let stats = turns.compactMap(\.stats)
        let ttft = Statistics.median(stats.compactMap(\.summary.timeToFirstToken)).map { String(format: "%.2f ms", $0 * 1e3) }
        let rate = Statistics.median(stats.filter { $0.summary.generatedTokens.count > 1 }.map(\.summary.decodeTokensPerSecond))
            .map { String(format: "%.1f tokens/s", $0) }
        let figures = "median time to first token \(ttft ?? "n/a"), median decode \(rate ?? "n/a")"
        if failed.isEmpty {
            return "chat smoke: all \(turns.count) turns passed in \(String(format: "%.2f", seconds)) s (\(figures))"
        }
        let which = failed.map { "turn \($0.number) (line \($0.line))" }.joined(separator: ", ")
        return "chat smoke: FAILED: \(failed.count) of \(turns.count) turns: \(which)"
    }
}

/// Runs a `ChatSmokeScript` through a `ChatEngine` and checks every reply.
public enum ChatSmokeRunner {
    /// Finish reasons a reply may end with when nothing interrupted it.
    public static let validFinishReasons: Set<FinishReason> = [.endOfSequence, .stopString, .maxTokens, .contextFull]

    /// Prompt ids at the end of the previous prompt that a follow-up may fail to reuse: a
    /// reply can change how the tokenizer splits the text just before it.
    public static let reuseSlack = 4

    /// Runs every step, writing each message, the streamed reply and a verdict line per
    /// turn to `write`.
    public static func run(_ script: ChatSmokeScript, engine: ChatEngine, write: @escaping @Sendable (String) -> Void) async -> ChatSmokeReport {
        let clock = ContinuousClock()
        let start = clock.now
        var turns: [ChatSmokeTurn] = []
        // The prompt of the previous turn, while the history still extends it (no /clear,
        // /system or trimming since): the next prompt should reuse it from the cache.
        var previousPrompt: Int?
        for step in script.steps {
            switch step {
            case .system(let text):
                await engine.setSystem(text)
                write("[/system: \(text == nil ? "removed" : "set")]\n")
                previousPrompt = nil
            case .clear:
                await engine.clear()
                write("[/clear]\n")
                previousPrompt = nil
            case .user(let text, let line):
                let number = turns.count + 1
                write("[turn \(number), line \(line)] > \(text)\n")
                let output = LineTracker(write)
                var turn = ChatSmokeTurn(number: number, line: line, user: text, reply: "", stats: nil, failures: [])
                do {
                    let stats = try await engine.send(text) { event in
                        switch event {
                        case .trimmed(let dropped, let kept):
                            output.write(ChatREPL.trimNote(dropped: dropped, kept: kept, context: engine.contextLength) + "\n")
                        case .text(let piece):
                            output.write(piece)
                        }
                    }
                    turn.reply = await engine.conversation.turns.last?.assistant ?? ""
                    turn.stats = stats
                    let expected = stats.droppedTurns == 0 ? previousPrompt : nil
                    turn.failures = check(stats, reply: turn.reply, previousPromptTokens: expected)
                    previousPrompt = stats.summary.promptTokens
                } catch {
                    turn.failures = ["\(error)"]
                    previousPrompt = nil
                }
                output.endLine()
                let verdict = turn.passed ? "ok" : "FAILED: " + turn.failures.joined(separator: "; ")
                write("[turn \(number) \(verdict)" + (turn.stats.map { ": " + $0.brief } ?? "") + "]\n")
                turns.append(turn)
            }
        }
        let report = ChatSmokeReport(turns: turns, seconds: (clock.now - start).seconds)
        write(report.summary + "\n")
        return report
    }

    /// The checks one reply must pass; each failure is one line. `previousPromptTokens`
    /// is the previous turn's prompt size when this prompt extends it.
    public static func check(_ stats: ChatReplyStats, reply: String, previousPromptTokens: Int?) -> [String] {
        let s = stats.summary
        let tokens = s.generatedTokens.count
        var failures: [String] = []
        if !validFinishReasons.contains(s.finishReason) {
            failures.append("finish reason \(s.finishReason.rawValue) (expected one of eos, stop, max_tokens, context_full)")
        }
        if tokens == 0 {
            failures.append("no tokens were generated")
        } else if reply.isEmpty {
            failures.append("\(tokens) tokens were generated but no text arrived")
        } else if stats.textChunks < min(2, tokens) {
            failures.append("the reply arrived in one piece instead of streaming (\(tokens) tokens)")
        }
        if tokens > 0 {
            if let t = s.timeToFirstToken, t.isFinite, t > 0, t <= s.totalSeconds {
            } else {
                failures.append("no valid time to first token")
            }
            if s.tokenTimestamps.count != tokens || zip(s.tokenTimestamps, s.tokenTimestamps.dropFirst()).contains(where: { $0 > $1 }) {
                failures.append("token timestamps are missing or out of order")
            }
        }
        if tokens > 1, !(s.decodeTokensPerSecond.isFinite && s.decodeTokensPerSecond > 0) {
            failures.append("no valid decode rate")
        }
        if let previous = previousPromptTokens, s.reusedPromptTokens < previous - reuseSlack {
            failures.append("the follow-up reused \(s.reusedPromptTokens) prompt tokens from the KV cache, expected at least \(previous - reuseSlack) of the previous turn's \(previous)")
        }
        return failures
    }
}
