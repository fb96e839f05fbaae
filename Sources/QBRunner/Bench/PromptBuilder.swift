import QBGeneration
import QBText

/// Turns a case's `PromptSpec` into what a session runs.
enum PromptBuilder {
    /// Story-like filler for `prompt_tokens` cases without their own text: plain English
    /// that any tokenizer handles, written for this project.
    static let filler = """
        The old lighthouse keeper climbed the stairs every evening to light the lamp. \
        From the top he could see the harbor, the fishing boats coming home, and the gulls \
        circling over the water. One night a storm rolled in from the sea, and the wind \
        shook the windows until they rattled. The keeper trimmed the wick, polished the \
        glass, and kept the light burning until morning, when the clouds broke apart and \
        the boats sailed safely into the bay.
        """

    /// Exactly `count` ids: BOS when the tokenizer adds one, then the filler's ids repeated
    /// and cut. Nil when the filler tokenizes to nothing.
    static func tokens(count: Int, filler text: String?, tokenizer: any Tokenizer) -> [TokenID]? {
        var ids: [TokenID] = []
        if tokenizer.addsBOS, let bos = tokenizer.bosTokenID { ids.append(bos) }
        let piece = tokenizer.encode((text ?? filler) + " ", addSpecialTokens: false, parseSpecialTokens: false)
        guard !piece.isEmpty else { return nil }
        while ids.count < count { ids += piece }
        return Array(ids.prefix(count))
    }

    /// The first turn's prompt of a case that is not a chat.
    /// The case's prompt, or nil after marking `result` skipped: filler text that
    /// tokenizes to nothing leaves nothing to run.
    static func promptOrSkip(_ spec: PromptSpec, loaded: LoadedModel, result: inout CaseResult) throws -> Prompt? {
        guard let p = try prompt(spec, loaded: loaded) else {
            result.status = .skipped
            result.notes.append("the filler text tokenizes to nothing")
            return nil
        }
        return p
    }

    /// Throws when a conversation cannot be rendered (the model's chat template does not
    /// parse or rejects it).
    static func prompt(_ spec: PromptSpec, loaded: LoadedModel) throws -> Prompt? {
        let tokenizer = loaded.tokenizer
        switch spec {
        case .text(let t): return .text(t)
        case .tokens(let n, let filler): return tokens(count: n, filler: filler, tokenizer: tokenizer).map { .tokens($0) }
        case .messages(let system, let messages):
            return try ChatPromptRenderer.prompt(
                for: ChatPromptRenderer.conversation(system: system, messages), format: loaded.chatFormat.get(), tokenizer: tokenizer)
        }
    }

    /// The texts a case's prompt is made of (for the round-trip expectation).
    static func texts(_ spec: PromptSpec, turns: [String]) -> [String] {
        switch spec {
        case .text(let t): return [t]
        case .tokens(_, let filler): return filler.map { [$0] } ?? []
        case .messages(let system, let messages): return (system.map { [$0] } ?? []) + messages.map(\.content) + turns
        }
    }
}
