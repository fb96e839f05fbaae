import Foundation
import XCTest
import QBModel
import QBRunner
import QBText

/// The models tests run on: the trained stories260K (llama2.c format, from the shared
/// fixtures; tests skip when it is missing) and tiny synthetic models with their byte-level
/// BPE tokenizer, each seed made once per process in a temporary folder so tests never
/// depend on the user's cache.
public enum TestModels {
    /// One case of expected_generations.json (llama2.c's published outputs).
    public struct StoriesCase: Decodable, Sendable {
        public let temperature: Double
        public let top_p: Double?
        public let random_seed: UInt64?
        public let steps: Int
        public let prompt: String
        public let expected_stdout: String
    }

    /// stories260K with its tokenizer and llama2.c's expected generations.
    public struct Stories: Sendable {
        public let model: any LanguageModel
        public let tokenizer: Llama2cTokenizer
        public let cases: [StoriesCase]
    }

    /// The stories260K fixture folder.
    public static func storiesDirectory() throws -> URL { try Fixtures.url("stories260k") }

    public static func stories() throws -> Stories {
        let dir = try storiesDirectory()
        let expected = try Fixtures.url("stories260k/expected_generations.json")
        struct File: Decodable { let cases: [StoriesCase] }
        let cases = try JSONDecoder().decode(File.self, from: Data(contentsOf: expected)).cases
        let model = try ModelLoader.load(path: dir.appendingPathComponent("stories260K.bin").path)
        let tokenizer = try Llama2cTokenizer(
            path: dir.appendingPathComponent("tok512.bin").path, vocabularySize: model.config.vocabSize)
        return Stories(model: model, tokenizer: tokenizer, cases: cases)
    }

    /// A tiny synthetic model and its tokenizer.
    public struct Tiny: Sendable {
        public let model: any LanguageModel
        public let tokenizer: any Tokenizer
    }

    private static let folders = Memo<UInt64, String>()

    /// The folder of the tiny preset drawn with `seed` (made on first use in this process).
    public static func tinyFolder(seed: UInt64) throws -> String {
        try folders.value(seed) {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-tiny-\(seed)-\(getpid())")
            try ModelMaker.make(preset: .tiny, seed: seed, dtype: .f32, to: dir)
            return dir.path
        }
    }

    /// The tiny preset drawn with `seed`, opened as every command opens a model.
    public static func tiny(seed: UInt64 = 11) throws -> Tiny {
        let model = try ModelPipeline.open(path: tinyFolder(seed: seed))
        return Tiny(model: model, tokenizer: try ModelPipeline.tokenizer(for: model, path: nil))
    }
}
