import Foundation
import XCTest
import QBTestSupport
import QBGeneration
import QBKernels
import QBModel
import QBRunner
import QBText

extension TestModels {
    /// The text llama2.c prints for a prompt: the prompt ids' pieces after BOS.
    static func promptText(_ ids: [TokenID], _ tokenizer: any Tokenizer) -> String {
        guard ids.count > 1 else { return "" }
        let bytes = (1..<ids.count).flatMap { tokenizer.bytes(for: ids[$0], after: ids[$0 - 1]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension GenerationSession {
    /// Drains a stream into its ids, text and summary.
    func streamed(_ prompt: Prompt, _ parameters: GenerationParameters) async throws -> (tokens: [TokenID], text: String, summary: GenerationSummary?) {
        var tokens: [TokenID] = [], text = ""
        var summary: GenerationSummary?
        for try await event in generate(prompt, parameters: parameters) {
            switch event {
            case .token(let id): tokens.append(id)
            case .text(let piece): text += piece
            case .finished(let s): summary = s
            }
        }
        return (tokens, text, summary)
    }
}
