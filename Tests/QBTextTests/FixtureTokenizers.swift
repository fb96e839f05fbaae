import Foundation
import QBFormats
import XCTest

@testable import QBText

/// The fixture tokenizers, each loaded once per test process (the Llama 3 ranks take a
/// moment in a debug build). A missing fixture is an XCTSkip, rethrown to every caller.
enum FixtureTokenizers {
    private static func load<T: Sendable>(_ body: () throws -> T) -> Result<T, any Error> {
        Result { try body() }
    }

    private static let llama3Result = load { try Tiktoken.llama3(contentsOf: try TestSupport.fixture("llama3-tokenizer/tokenizer.model")) }
    private static let llama2JSONResult = load { try BPETokenizer(contentsOf: try TestSupport.fixture("llama2-tokenizer/tokenizer.json")) }
    private static let llama2GGUFResult = load {
        try GGUFTokenizer.tokenizer(path: try TestSupport.fixture("llamacpp-vocab-tests/ggml-vocab-llama-spm.gguf").path)
    }
    private static let llama2ModelResult = load {
        try SentencePieceModelFile.tokenizer(contentsOf: try TestSupport.fixture("llama2-tokenizer/tokenizer.model"))
    }
    private static let smolLM2Result = load { try BPETokenizer(contentsOf: try TestSupport.fixture("smollm2-tokenizer/tokenizer.json")) }
    private static let smolLM2GGUFResult = load { () throws -> any Tokenizer in
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("qbtext-smollm2-\(ProcessInfo.processInfo.processIdentifier).gguf")
        defer { try? FileManager.default.removeItem(at: url) }
        try writeVocabularyGGUF(try smolLM2(), modelVocabularySize: 49152, to: url)
        return try GGUFTokenizer.tokenizer(path: url.path)
    }

    /// Llama 3 (tiktoken ranks).
    static func llama3() throws -> BPETokenizer { try llama3Result.get() }
    /// Llama 2 from Hugging Face's tokenizer.json.
    static func llama2JSON() throws -> BPETokenizer { try llama2JSONResult.get() }
    /// Llama 2 from llama.cpp's vocabulary GGUF.
    static func llama2GGUF() throws -> any Tokenizer { try llama2GGUFResult.get() }
    /// Llama 2 from the SentencePiece tokenizer.model.
    static func llama2Model() throws -> SentencePieceTokenizer { try llama2ModelResult.get() }
    /// SmolLM2 from its tokenizer.json.
    static func smolLM2() throws -> BPETokenizer { try smolLM2Result.get() }
    /// SmolLM2's vocabulary written into a GGUF (GGUFVocabulary + GGUFWriter) and read back.
    static func smolLM2GGUF() throws -> any Tokenizer { try smolLM2GGUFResult.get() }

    /// Writes a vocabulary-only GGUF of a tokenizer.json tokenizer.
    static func writeVocabularyGGUF(_ tokenizer: BPETokenizer, modelVocabularySize: Int, to url: URL) throws {
        var writer = GGUFWriter()
        writer.add("general.architecture", .string("llama"))
        for (key, value) in try GGUFVocabulary.metadata(bpe: tokenizer, modelVocabularySize: modelVocabularySize) {
            writer.add(key, value)
        }
        try writer.write(to: url)
    }
}
