import XCTest
import QBTestSupport
@testable import QBGeneration
import QBKernels
import QBModel
import QBText

/// `--sampler llama2c` replays llama2.c's published stories260K generations exactly: the
/// greedy case and the three sampled ones (xorshift RNG, top-p sampler).
final class Llama2cCompatibilityTests: XCTestCase {
    /// llama2.c's `steps` counts forward passes, prompt included; each pass prints the
    /// token it leads to, so it emits steps - prompt + 1 new tokens.
    func parameters(for c: TestModels.StoriesCase, promptCount: Int) -> GenerationParameters {
        GenerationParameters(
            maxTokens: c.steps - promptCount + 1,
            sampling: .llama2c(temperature: c.temperature, topP: c.top_p ?? 1, seed: c.random_seed ?? 0))
    }

    func testAllFourCasesThroughTheLoop() throws {
        let s = try TestModels.stories()
        XCTAssertEqual(s.cases.count, 4)
        XCTAssertEqual(s.cases.filter { $0.temperature > 0 }.count, 3, "three sampled cases")
        for c in s.cases {
            let prompt = s.tokenizer.encode(c.prompt, addSpecialTokens: true, parseSpecialTokens: false)
            let state = s.model.makeState(contextLength: c.steps, pool: ThreadPool(threads: 1))
            var text = TestModels.promptText(prompt, s.tokenizer)
            var cached: [TokenID] = []
            let summary = try GenerationLoop.run(
                model: s.model, tokenizer: s.tokenizer, state: state, cachedTokens: &cached, prompt: .tokens(prompt),
                parameters: parameters(for: c, promptCount: prompt.count),
                onEvent: { if case .text(let piece) = $0 { text += piece } })
            XCTAssertEqual(text, c.expected_stdout, "temperature \(c.temperature), top-p \(c.top_p ?? 0), prompt '\(c.prompt)'")
            XCTAssertEqual(summary.finishReason, .maxTokens)
        }
    }

    /// llama2.c keeps its KV cache in f32; sampled text follows the last bit of the logits,
    /// so exactness needs the f32 cache (the session's default is f16).
    func testAllFourCasesThroughASessionAtTwoThreads() async throws {
        let s = try TestModels.stories()
        let session = try GenerationSession(
            model: s.model, tokenizer: s.tokenizer, contextLength: 256, pool: ThreadPool(threads: 2), kvType: .f32)
        for c in s.cases {
            let prompt = s.tokenizer.encode(c.prompt, addSpecialTokens: true, parseSpecialTokens: false)
            let run = try await session.streamed(.text(c.prompt), parameters(for: c, promptCount: prompt.count))
            XCTAssertEqual(TestModels.promptText(prompt, s.tokenizer) + run.text, c.expected_stdout, "prompt '\(c.prompt)', top-p \(c.top_p ?? 0)")
        }
    }
}
