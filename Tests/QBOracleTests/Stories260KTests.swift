import Foundation
import XCTest
import QBTestSupport
import QBGeneration
import QBKernels
import QBModel
import QBText

/// The trained stories260K model reproduces llama2.c's published greedy generation
/// exactly (../shared/fixtures/stories260k/expected_generations.json).
final class Stories260KTests: XCTestCase {
    /// llama2.c's `steps` counts forward passes, prompt included; each pass prints the
    /// token it leads to, so it emits steps - prompt + 1 new tokens.
    func testGreedyMatchesLlama2c() throws {
        let stories = try TestModels.stories()
        let (model, tok, cases) = (stories.model, stories.tokenizer, stories.cases)
        let greedy = cases.filter { $0.temperature == 0 }
        XCTAssertFalse(greedy.isEmpty)
        for c in greedy {
            for threads in [1, 2] {
                let prompt = tok.encode(c.prompt, addSpecialTokens: true, parseSpecialTokens: false)
                let state = model.makeState(contextLength: c.steps, pool: ThreadPool(threads: threads))
                let promptBytes = (1..<prompt.count).flatMap { tok.bytes(for: prompt[$0], after: prompt[$0 - 1]) }
                var text = String(decoding: promptBytes, as: UTF8.self)
                let summary = try Greedy.generate(
                    model: model, tokenizer: tok, prompt: prompt, maxTokens: c.steps - prompt.count + 1, state: state
                ) { text += $0 }
                XCTAssertEqual(text, c.expected_stdout, "\(threads) threads")
                XCTAssertEqual(summary.finishReason, .maxTokens)
            }
        }
    }
}
