import QBFormats
import QBSupport
import Foundation
import XCTest
import QBTestSupport
import QBKernels
import QBModel
import QBRunner
import QBText

/// Qwen2 and Qwen3 against things this project did not write: transformers' own
/// Qwen2ForCausalLM / Qwen3ForCausalLM (eager attention, f32) on folders transformers
/// saved itself, and GGUF files written by `quantize` read back (and run by llama.cpp when
/// QB_LLAMA_CPP_BIN names its binaries).
final class QwenOracleTests: XCTestCase {
    func testTinyQwen2F32() throws { try compare(.tinyQwen2, dtype: "float32", tokens: 48, seed: 1, architecture: "qwen2") }
    func testTinyQwen3F32() throws { try compare(.tinyQwen3, dtype: "float32", tokens: 48, seed: 2, architecture: "qwen3") }
    func testTinyQwen2BF16() throws { try compare(.tinyQwen2, dtype: "bfloat16", tokens: 40, seed: 3, architecture: "qwen2") }
    func testTinyQwen3F16() throws { try compare(.tinyQwen3, dtype: "float16", tokens: 40, seed: 4, architecture: "qwen3") }

    /// `quantize` to GGUF and back: f32 gives the very same logits (Q and K rows are
    /// stored unpermuted and run with RoPE by halves, as llama.cpp runs qwen2/qwen3), q8_0
    /// the logits of the same conversion made at load; the metadata uses llama.cpp's keys.
    func testGGUFExportLoadsBackToTheSameLogits() throws {
        for (preset, arch) in [(SyntheticModel.Preset.tinyQwen2, "qwen2"), (.tinyQwen3, "qwen3")] {
            let (dir, model, tokenizer) = try made(preset, seed: 5)
            defer { try? FileManager.default.removeItem(at: dir) }
            let pool = ThreadPool(threads: 2)
            var rng = SplitMix64(seed: 6)
            let tokens = (0..<24).map { _ in Int32(rng.next() % UInt64(model.config.vocabSize)) }
            for spec in ["f32", "q8_0"] {
                let url = dir.appendingPathComponent("\(spec).gguf")
                try ModelExporter.export(model, tokenizer: tokenizer, spec: QuantSpec(spec), to: url, pool: pool)
                let file = try GGUFFile(path: url.path)
                XCTAssertEqual(file.metadata["general.architecture"], .string(arch))
                XCTAssertEqual(file.metadata["\(arch).embedding_length"]?.int, model.config.hiddenSize)
                XCTAssertEqual(file.metadata["\(arch).attention.head_count_kv"]?.int, model.config.kvHeads)
                if arch == "qwen3" { XCTAssertEqual(file.metadata["qwen3.attention.key_length"]?.int, 32) }
                let back = try ModelLoader.load(path: url.path)
                XCTAssertEqual(back.architecture.name, arch)
                XCTAssertEqual(back.rope.style, .halves)
                let expected = spec == "f32" ? model : try model.quantized(QuantSpec(spec), pool: pool)
                let a = try logits(expected, tokens), b = try logits(back, tokens)
                XCTAssertEqual(a.prefill, b.prefill, "\(arch) \(spec) prefill")
                XCTAssertEqual(a.decode, b.decode, "\(arch) \(spec) decode")
            }
            // The GGUF vocabulary round-trips too: the same ids for the same text.
            let gguf = try ModelPipeline.tokenizer(for: try ModelLoader.load(path: dir.appendingPathComponent("f32.gguf").path), path: nil)
            let text = "the cat sat on the mat"
            XCTAssertEqual(
                gguf.encode(text, addSpecialTokens: false, parseSpecialTokens: false),
                tokenizer.encode(text, addSpecialTokens: false, parseSpecialTokens: false))
        }
    }

    /// `quantize` to an MLX folder and back: the same logits as the conversion made at load.
    func testMLXExportLoadsBack() throws {
        for preset in [SyntheticModel.Preset.tinyQwen2, .tinyQwen3] {
            let (dir, model, tokenizer) = try made(preset, seed: 7)
            defer { try? FileManager.default.removeItem(at: dir) }
            let pool = ThreadPool(threads: 2)
            let out = dir.appendingPathComponent("mlx")
            try ModelExporter.export(model, tokenizer: tokenizer, spec: QuantSpec("mlx-q8-g32"), to: out, pool: pool)
            let back = try ModelLoader.load(path: out.path)
            XCTAssertEqual(back.architecture.name, model.architecture.name)
            let tokens: [Int32] = [3, 17, 200, 5, 999, 42, 7, 8]
            let a = try logits(try model.quantized(QuantSpec("mlx-q8-g32"), pool: pool), tokens), b = try logits(back, tokens)
            for p in 0..<tokens.count {
                let r = (p * model.config.vocabSize)..<((p + 1) * model.config.vocabSize)
                XCTAssertLessThanOrEqual(relativeL2(b.prefill[r], a.prefill[r]), 1e-6, "\(preset.rawValue) position \(p)")
            }
        }
    }

    /// llama.cpp on the GGUF we write: the same greedy text as ours. Runs when
    /// QB_LLAMA_CPP_BIN names a folder holding llama-simple.
    func testLlamaCppGreedyTextMatches() throws {
        try assertLlamaCppGreedyTextMatches([.tinyQwen2, .tinyQwen3])
    }
}
