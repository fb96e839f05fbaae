import QBText

/// Keeps a long conversation inside the context: when the prompt for the next reply would
/// leave too little room, the oldest turns are dropped (the system prompt and the new
/// message are always kept) instead of the request failing.
///
/// A turn (user message and reply) is the unit: dropping half of one would leave the roles
/// out of order, which many templates reject.
public enum ChatHistoryTrimmer {
    /// The outcome for one message.
    public struct Plan: Sendable, Equatable {
        /// How many of the oldest turns must go.
        public var droppedTurns: Int
        /// The prompt's ids once they are gone.
        public var promptTokens: [TokenID]
    }

    /// The most prompt ids that leave room for a reply: the context minus a reserve of
    /// `maxTokens`, but never more than half the context, so a large `--max-tokens` does
    /// not shrink the history to nothing (a reply that runs out of room ends with
    /// `context_full`, and the next turn trims).
    public static func promptBudget(contextLength: Int, maxTokens: Int) -> Int {
        let reserve = min(max(1, maxTokens), max(1, contextLength / 2))
        return max(1, contextLength - reserve)
    }

    /// Where a trimmed prompt should end up: half the budget. Dropping turns changes the
    /// start of the prompt, so the whole rest must be prefilled again; leaving room for
    /// several more turns means the next ones extend this prompt and reuse the cache,
    /// instead of every turn sliding the window and prefilling everything (llama.cpp's
    /// context shift also discards half).
    public static func trimTarget(budget: Int) -> Int { max(1, budget / 2) }

    /// Finds how many of the oldest turns to drop for the prompt answering `pendingUser`:
    /// none when it fits in `budget` ids; otherwise the fewest that bring it down to
    /// `target` (at most `budget`), or every turn if that is what it takes to fit the
    /// budget. `tokens` renders and encodes a conversation (see `ChatPromptFormat.tokens`);
    /// it is called once per candidate.
    ///
    /// - Throws: `ChatError.messageTooLong` when even the system prompt and the new
    ///   message alone do not fit; errors from `tokens` (a template rejecting the
    ///   conversation) as they are.
    public static func fit(
        _ conversation: ChatConversation, pendingUser: String, budget: Int, target: Int? = nil,
        tokens: (ChatConversation, String) throws -> [TokenID]
    ) throws -> Plan {
        let goal = min(target ?? budget, budget)
        let ids0 = try tokens(conversation, pendingUser)
        if ids0.count <= budget { return Plan(droppedTurns: 0, promptTokens: ids0) }
        // Prompts shrink with every turn dropped, so the fewest drops that reach the goal
        // are found by bisection: O(log turns) encodings of the conversation instead of one
        // per dropped turn (which made resuming a long history quadratic).
        func without(_ n: Int) throws -> (ChatConversation, [TokenID]) {
            var c = conversation
            c.dropOldest(n)
            return (c, try tokens(c, pendingUser))
        }
        let total = conversation.turns.count
        var best = try without(total)
        var dropped = total
        if best.1.count <= goal {
            // Invariant: dropping `high` turns reaches the goal, dropping `low` does not.
            var low = 0, high = total
            while high - low > 1 {
                let mid = low + (high - low) / 2
                let attempt = try without(mid)
                if attempt.1.count <= goal {
                    high = mid
                    best = attempt
                } else {
                    low = mid
                }
            }
            dropped = high
        }
        let (candidate, ids) = best
        guard ids.count <= budget else {
            throw ChatError.messageTooLong(tokens: ids.count, budget: budget, hasSystemPrompt: candidate.effectiveSystem != nil)
        }
        return Plan(droppedTurns: dropped, promptTokens: ids)
    }
}
