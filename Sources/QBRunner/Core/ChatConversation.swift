import QBGeneration

/// One exchange of a chat: what the person wrote and what the model answered.
///
/// A turn is the unit history trimming drops, so user and assistant messages always leave
/// together and the roles keep alternating (many chat templates raise an exception when
/// they do not).
public struct ChatTurn: Sendable, Equatable {
    public var user: String
    /// The reply as it was shown: for a reply stopped by Ctrl-C, the part that was
    /// generated before the stop (possibly empty).
    public var assistant: String
    /// Why the reply ended; nil when unknown (a transcript written by another tool).
    public var finishReason: FinishReason?

    public init(user: String, assistant: String, finishReason: FinishReason? = nil) {
        self.user = user
        self.assistant = assistant
        self.finishReason = finishReason
    }
}

/// A chat's history: an optional system prompt and the turns so far, oldest first.
///
/// Plain data with no model attached, so trimming, saving and resuming can be tested
/// without running anything.
public struct ChatConversation: Sendable, Equatable {
    /// Sent before every turn; never dropped by trimming. Nil or empty means none.
    public var system: String?
    public var turns: [ChatTurn]

    public init(system: String? = nil, turns: [ChatTurn] = []) {
        self.system = system
        self.turns = turns
    }

    /// The system prompt if there is a non-empty one.
    public var effectiveSystem: String? {
        guard let s = system, !s.isEmpty else { return nil }
        return s
    }

    /// Removes the `count` oldest turns (all of them if there are fewer).
    public mutating func dropOldest(_ count: Int) {
        turns.removeFirst(min(max(0, count), turns.count))
    }

    /// The history as role/content pairs, in order, followed by `pendingUser` (the message
    /// about to be answered) when given.
    public func messages(pendingUser: String? = nil) -> [(role: ChatRole, content: String)] {
        var out: [(role: ChatRole, content: String)] = []
        if let s = effectiveSystem { out.append((.system, s)) }
        for t in turns {
            out.append((.user, t.user))
            out.append((.assistant, t.assistant))
        }
        if let p = pendingUser { out.append((.user, p)) }
        return out
    }
}

/// Who wrote a chat message; the raw values are the role names chat templates expect.
public enum ChatRole: String, Sendable, Codable, CaseIterable {
    case system, user, assistant
}
