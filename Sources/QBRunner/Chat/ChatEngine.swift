import Foundation
import QBSupport
import QBGeneration
import QBText

/// What a reply reports while it is produced, in order.
public enum ChatEvent: Sendable, Equatable {
    /// The oldest turns were dropped so the prompt fits the context (before any text).
    case trimmed(droppedTurns: Int, keptTurns: Int)
    /// Reply text as it is generated (whole characters).
    case text(String)
}

/// A conversation with a model: the history, how it is rendered, and the generation
/// session whose KV cache carries it from turn to turn. Nothing here touches a terminal;
/// the interactive chat, the smoke run and the tests drive it the same way.
///
/// Each message renders the whole history (trimmed when it outgrows the context: to half
/// the prompt budget, see `ChatHistoryTrimmer`) and
/// sends the ids to the session, which reuses the cached prefix, so a follow-up only
/// prefills what is new. One reply runs at a time; `interrupt()` stops it from any thread
/// (a signal handler) and the part already generated stays in the history.
public actor ChatEngine {
    public nonisolated let session: GenerationSession
    public nonisolated let format: ChatPromptFormat
    public nonisolated let parameters: GenerationParameters
    /// The most prompt ids a turn may use, leaving room for the reply.
    public nonisolated let promptBudget: Int
    public private(set) var conversation: ChatConversation
    /// Figures of the most recent reply, for `/stats`.
    public private(set) var lastReply: ChatReplyStats?
    private nonisolated let control = ReplyControl()

    /// The files the chat reads (model, tokenizer, template), which `/save` never replaces.
    let inputs: [String]

    public init(session: GenerationSession, format: ChatPromptFormat, parameters: GenerationParameters,
                conversation: ChatConversation = ChatConversation(), inputs: [String] = []) {
        self.inputs = inputs
        self.session = session
        self.format = format
        self.parameters = parameters
        self.conversation = conversation
        promptBudget = ChatHistoryTrimmer.promptBudget(contextLength: session.contextLength, maxTokens: parameters.maxTokens)
    }

    public nonisolated var contextLength: Int { session.contextLength }

    /// Sends a user message and generates the reply, calling `onEvent` with each piece of
    /// text as it is generated. The turn (with the reply as far as it got) joins the
    /// history when generation ends for any reason, interruption included.
    ///
    /// - Throws: `ChatError.messageTooLong` (the history is left as it was),
    ///   `ChatTemplateError` when the template rejects the conversation, `ChatError.busy`
    ///   when another reply is running, generation errors.
    @discardableResult
    public func send(_ text: String, onEvent: @Sendable (ChatEvent) -> Void = { _ in }) async throws -> ChatReplyStats {
        guard control.begin() else { throw ChatError.busy }
        defer { control.end() }

        let tokenizer = session.tokenizer, format = self.format
        let plan = try ChatHistoryTrimmer.fit(
            conversation, pendingUser: text, budget: promptBudget, target: ChatHistoryTrimmer.trimTarget(budget: promptBudget)
        ) { c, user in
            try format.tokens(c, pendingUser: user, tokenizer: tokenizer)
        }
        if plan.droppedTurns > 0 {
            conversation.dropOldest(plan.droppedTurns)
            onEvent(.trimmed(droppedTurns: plan.droppedTurns, keptTurns: conversation.turns.count))
        }

        let clock = ContinuousClock()
        let start = clock.now
        let stream = await session.generate(.tokens(plan.promptTokens), parameters: parameters)
        // An interrupt that came before the request existed could not cancel it.
        if control.cancelRequested { session.cancel() }
        var reply = ""
        var chunks = 0
        var firstText: Double?
        var summary: GenerationSummary?
        for try await event in stream {
            switch event {
            case .text(let piece):
                if firstText == nil { firstText = (clock.now - start).seconds }
                reply += piece
                chunks += 1
                onEvent(.text(piece))
            case .token:
                break
            case .finished(let s):
                summary = s
            }
        }
        // The stream ends without a summary only when this task itself was cancelled.
        guard let summary else { throw CancellationError() }

        conversation.turns.append(ChatTurn(user: text, assistant: reply, finishReason: summary.finishReason))
        let stats = ChatReplyStats(
            summary: summary, textChunks: chunks, firstTextSeconds: firstText, droppedTurns: plan.droppedTurns,
            memory: MemoryStats.current(), contextUsed: await session.cachedTokens.count,
            contextLength: contextLength, historyTurns: conversation.turns.count)
        lastReply = stats
        return stats
    }

    /// Stops the reply being generated, if there is one, and returns whether there was.
    /// Safe to call from any thread, including a signal handler's queue.
    @discardableResult
    public nonisolated func interrupt() -> Bool {
        guard control.requestCancel() else { return false }
        session.cancel()
        return true
    }

    /// Whether a reply is being generated right now.
    public nonisolated var isReplying: Bool { control.isRunning }

    /// Forgets every turn; the system prompt stays (and so do the last reply's figures).
    /// The KV cache is left alone: the next prompt still starts with the system prompt,
    /// which the session then reuses.
    public func clear() {
        conversation.turns.removeAll()
    }

    /// Sets the system prompt (nil or empty removes it). The history stays.
    public func setSystem(_ text: String?) {
        conversation.system = (text?.isEmpty ?? true) ? nil : text
    }

    /// Replaces the whole history (resuming a saved chat).
    public func replaceConversation(_ conversation: ChatConversation) {
        self.conversation = conversation
        lastReply = nil
    }

    /// Saves the history as JSONL (see `ChatTranscript`).
    public func save(to path: String) throws {
        try OutputGuard.check(output: path, kind: .file, flag: "/save", inputs: inputs)
        try ChatTranscript.save(conversation, to: path)
    }
}

/// Whether a reply is running and whether it was asked to stop, shared between the
/// engine and whatever thread calls `interrupt()`; hence the lock.
final class ReplyControl: @unchecked Sendable {
    private let lock = NSLock()
    private var running = false
    private var cancel = false

    /// Marks a reply as started; false if one already is.
    func begin() -> Bool {
        lock.withLock {
            guard !running else { return false }
            running = true
            cancel = false
            return true
        }
    }

    func end() { lock.withLock { running = false; cancel = false } }

    /// Records a stop request for the running reply; false when none is running.
    func requestCancel() -> Bool {
        lock.withLock {
            guard running else { return false }
            cancel = true
            return true
        }
    }

    var cancelRequested: Bool { lock.withLock { cancel } }
    var isRunning: Bool { lock.withLock { running } }
}
