import Foundation
import XCTest
import QBGeneration
import QBKernels
import QBModel
import QBRunner
import QBText

/// Models the generation tests run on: the trained stories260K (llama2.c format, from the
/// shared fixtures; tests skip when it is missing) and the tiny synthetic model with its
/// byte-level BPE tokenizer, made once per process.
enum TestModels {
    static let storiesDirectory = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("../shared/fixtures/stories260k").standardized

    /// One case of expected_generations.json (llama2.c's published outputs).
    struct StoriesCase: Decodable, Sendable {
        let temperature: Double
        let top_p: Double?
        let random_seed: UInt64?
        let steps: Int
        let prompt: String
        let expected_stdout: String
    }

    struct Stories: Sendable {
        let model: any LanguageModel
        let tokenizer: Llama2cTokenizer
        let cases: [StoriesCase]
    }

    static func stories() throws -> Stories {
        let dir = storiesDirectory
        let expected = dir.appendingPathComponent("expected_generations.json")
        guard FileManager.default.fileExists(atPath: expected.path) else {
            throw XCTSkip("fixture \(dir.path) is missing")
        }
        struct File: Decodable { let cases: [StoriesCase] }
        let cases = try JSONDecoder().decode(File.self, from: Data(contentsOf: expected)).cases
        let model = try ModelLoader.load(path: dir.appendingPathComponent("stories260K.bin").path)
        let tokenizer = try Llama2cTokenizer(
            path: dir.appendingPathComponent("tok512.bin").path, vocabularySize: model.config.vocabSize)
        return Stories(model: model, tokenizer: tokenizer, cases: cases)
    }

    struct Tiny: Sendable {
        let model: any LanguageModel
        let tokenizer: any Tokenizer
    }

    private static let tinyResult: Result<Tiny, any Error> = Result {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-gen-tiny-\(getpid())")
        try ModelMaker.make(preset: .tiny, seed: 11, dtype: .f32, to: dir)
        let model = try ModelLoader.load(path: dir.path)
        return Tiny(model: model, tokenizer: try TokenizerLoader.load(for: model, path: nil))
    }

    static func tiny() throws -> Tiny { try tinyResult.get() }

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
