import Foundation
import QBGeneration

/// What one chat reply cost and how it went: the `/stats` command and the smoke run's
/// per-turn report.
public struct ChatReplyStats: Sendable {
    public var summary: GenerationSummary
    /// How many `.text` pieces the reply arrived in (more than one: it streamed).
    public var textChunks: Int
    /// Seconds from sending the request to the first piece of text reaching the chat, as
    /// the person saw it (nil when there was none).
    public var firstTextSeconds: Double?
    /// Oldest turns dropped before this reply to fit the context.
    public var droppedTurns: Int
    /// The process's memory right after the reply.
    public var memory: MemoryStats
    /// Positions of the KV cache in use after the reply, and its size.
    public var contextUsed: Int
    public var contextLength: Int
    /// Turns in the history, this one included.
    public var historyTurns: Int

    public init(
        summary: GenerationSummary, textChunks: Int, firstTextSeconds: Double?, droppedTurns: Int, memory: MemoryStats,
        contextUsed: Int, contextLength: Int, historyTurns: Int
    ) {
        self.summary = summary
        self.textChunks = textChunks
        self.firstTextSeconds = firstTextSeconds
        self.droppedTurns = droppedTurns
        self.memory = memory
        self.contextUsed = contextUsed
        self.contextLength = contextLength
        self.historyTurns = historyTurns
    }

    /// The `/stats` text, one fact per line.
    public var lines: [String] {
        let s = summary
        var out: [String] = []
        out.append("last reply: \(s.generatedTokens.count) tokens, finish: \(s.finishReason.rawValue)")
        let ttft = s.timeToFirstToken.map { Self.milliseconds($0) } ?? "none (no token generated)"
        out.append(
            "  time to first token: \(ttft) (prompt \(s.promptTokens) tokens, \(s.reusedPromptTokens) reused from the cache, "
                + "\(s.prefilledTokens) prefilled in \(Self.milliseconds(s.prefillSeconds)))")
        out.append(String(format: "  decode: %.1f tokens/s (%.3f s); total %.3f s", s.decodeTokensPerSecond, s.decodeSeconds, s.totalSeconds))
        var memory: [String] = []
        if let r = self.memory.residentBytes { memory.append("resident \(Self.mebibytes(r))") }
        if let p = self.memory.peakResidentBytes { memory.append("peak \(Self.mebibytes(p))") }
        if let a = self.memory.allocatedBytes { memory.append("heap in use \(Self.mebibytes(a))") }
        out.append("  memory: " + (memory.isEmpty ? "unavailable" : memory.joined(separator: ", ")))
        out.append("  context: \(contextUsed) of \(contextLength) positions in use; history: \(ChatREPL.turns(historyTurns))")
        return out
    }

    /// One line for the smoke report.
    public var brief: String {
        let s = summary
        var parts = ["prompt \(s.promptTokens) tokens (\(s.reusedPromptTokens) reused)"]
        parts.append("TTFT " + (s.timeToFirstToken.map { Self.milliseconds($0) } ?? "none"))
        parts.append(String(format: "%d tokens at %.1f tok/s", s.generatedTokens.count, s.decodeTokensPerSecond))
        parts.append("\(textChunks) text chunks")
        parts.append("finish \(s.finishReason.rawValue)")
        return parts.joined(separator: ", ")
    }

    static func milliseconds(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1e3) }

    static func mebibytes(_ bytes: Int) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
}
