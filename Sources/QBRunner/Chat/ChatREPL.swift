import Foundation
import QBGeneration
import QBText

/// Where an interactive chat reads lines and writes text. The command line binds it to the
/// terminal; tests can bind it to anything.
public struct ChatConsole: Sendable {
    /// The next line without its newline; nil at end of input (Ctrl-D).
    public var readLine: @Sendable () -> String?
    /// Replies, notes and command output, written as they come (unbuffered).
    public var write: @Sendable (String) -> Void
    /// Errors.
    public var writeError: @Sendable (String) -> Void
    /// Show a prompt before each line (when the input is a terminal).
    public var showsPrompt: Bool
    /// Called with true before a reply streams and false after it (the terminal stops
    /// echoing and drops what was typed meanwhile, so nothing typed leaks into a reply).
    public var replying: @Sendable (Bool) -> Void = { _ in }

    public init(
        readLine: @escaping @Sendable () -> String?, write: @escaping @Sendable (String) -> Void,
        writeError: @escaping @Sendable (String) -> Void, showsPrompt: Bool
    ) {
        self.readLine = readLine
        self.write = write
        self.writeError = writeError
        self.showsPrompt = showsPrompt
    }
}

/// The interactive chat loop: read a line, run the command or send the message and stream
/// the reply, until the input ends or `/exit`.
public enum ChatREPL {
    public static let prompt = "> "
    /// What Ctrl-C says when no reply is running (it never exits the chat).
    public static let idleInterruptHint = "(no reply is running: Ctrl-D exits, /help lists the commands)"

    public static func run(_ engine: ChatEngine, console: ChatConsole) async {
        var replies = 0, tokens = 0, decodeSeconds = 0.0
        while true {
            if console.showsPrompt { console.write(prompt) }
            guard let line = console.readLine() else {
                // Ctrl-D: end the prompt's line so the shell starts on a fresh one, with a
                // one-line summary of the session.
                if console.showsPrompt {
                    let history = await engine.conversation.turns.count
                    console.write("\n" + sessionSummary(replies: replies, tokens: tokens, decodeSeconds: decodeSeconds, historyTurns: history) + "\n")
                }
                return
            }
            switch ChatInput.parse(line) {
            case .empty:
                continue
            case .message(let text):
                console.replying(true)
                let stats = await reply(to: text, engine: engine, console: console)
                console.replying(false)
                if let stats {
                    replies += 1
                    tokens += stats.summary.generatedTokens.count
                    decodeSeconds += stats.summary.decodeSeconds
                }
            case .command(let command):
                if await !perform(command, engine: engine, console: console) { return }
            }
        }
    }

    /// A restored conversation as the chat showed it: the system prompt, then each user
    /// line after the prompt and the reply below it.
    public static func transcript(_ c: ChatConversation) -> String {
        var out = ""
        if let system = c.effectiveSystem { out += "[system] \(system)\n" }
        for t in c.turns { out += prompt + t.user + "\n" + t.assistant + "\n" }
        return out
    }

    /// What Ctrl-D prints: `[bye: 3 replies, 412 tokens at 51.3 tok/s; 5 turns in the history]`.
    public static func sessionSummary(replies: Int, tokens: Int, decodeSeconds: Double, historyTurns: Int) -> String {
        var parts = ["\(replies) repl\(replies == 1 ? "y" : "ies")"]
        if tokens > 0 {
            parts.append(decodeSeconds > 0 ? String(format: "%d tokens at %.1f tok/s", tokens, Double(tokens) / decodeSeconds) : "\(tokens) tokens")
        }
        return "[bye: " + parts.joined(separator: ", ") + "; \(turns(historyTurns)) in the history]"
    }

    /// Runs a command; false when the chat should end.
    static func perform(_ command: ChatCommand, engine: ChatEngine, console: ChatConsole) async -> Bool {
        switch command {
        case .help:
            console.write(ChatCommand.helpText)
        case .clear:
            await engine.clear()
            console.write("[conversation cleared; the system prompt stays]\n")
        case .stats:
            if let stats = await engine.lastReply {
                console.write(stats.lines.map { $0 + "\n" }.joined())
            } else {
                let turns = await engine.conversation.turns.count
                console.write("[no reply yet in this session; history: \(Self.turns(turns))]\n")
            }
        case .save(let path):
            guard let path else {
                console.writeError("error: /save needs a file name, e.g. /save chat.jsonl\n")
                return true
            }
            do {
                try await engine.save(to: path)
                let turns = await engine.conversation.turns.count
                console.write("[saved \(Self.turns(turns)) to \(path)]\n")
            } catch {
                console.writeError("error: \(error)\n")
            }
        case .system(let text):
            await engine.setSystem(text)
            console.write(text == nil ? "[system prompt removed]\n" : "[system prompt set]\n")
        case .exit:
            return false
        case .unknown(let name):
            console.writeError("error: unknown command /\(name); /help lists the commands\n")
        }
        return true
    }

    /// Sends a message and streams the reply, then says how it ended if that was not the
    /// model's own choice.
    @discardableResult
    static func reply(to text: String, engine: ChatEngine, console: ChatConsole) async -> ChatReplyStats? {
        let output = LineTracker(console.write)
        do {
            let stats = try await engine.send(text) { event in
                switch event {
                case .trimmed(let dropped, let kept):
                    output.write(trimNote(dropped: dropped, kept: kept, context: engine.contextLength) + "\n")
                case .text(let piece):
                    output.write(piece)
                }
            }
            output.endLine()
            if let note = finishNote(stats.summary.finishReason, maxTokens: engine.parameters.maxTokens) {
                output.write(note + "\n")
            }
            return stats
        } catch {
            output.endLine()
            console.writeError("error: \(error)\n")
            return nil
        }
    }

    /// What the chat says when it drops turns.
    public static func trimNote(dropped: Int, kept: Int, context: Int) -> String {
        "[the conversation no longer fits the context (\(context) positions): dropped the oldest \(turns(dropped)), "
            + "\(kept) kept; the system prompt stays]"
    }

    /// "1 turn", "2 turns".
    public static func turns(_ n: Int) -> String { n == 1 ? "1 turn" : "\(n) turns" }

    /// A note for replies the model did not end itself; nil when it did.
    public static func finishNote(_ reason: FinishReason, maxTokens: Int) -> String? {
        switch reason {
        case .endOfSequence, .stopString: return nil
        case .cancelled: return "[stopped]"
        case .maxTokens: return "[reply cut at --max-tokens \(maxTokens)]"
        case .contextFull: return "[the context is full; the next message drops the oldest turns]"
        }
    }
}

/// Writes streamed text and remembers whether the cursor is at the start of a line, so
/// notes after a reply start on a fresh one.
final class LineTracker: @unchecked Sendable {
    private let lock = NSLock()
    private let sink: @Sendable (String) -> Void
    private var atLineStart = true

    init(_ sink: @escaping @Sendable (String) -> Void) { self.sink = sink }

    func write(_ s: String) {
        guard !s.isEmpty else { return }
        lock.withLock {
            sink(s)
            atLineStart = s.hasSuffix("\n")
        }
    }

    func endLine() {
        lock.withLock {
            if !atLineStart { sink("\n") }
            atLineStart = true
        }
    }
}
