import QBSupport
import QBFormats
import Foundation
import XCTest
import QBTestSupport
import QBKernels
import QBModel
import QBRunner
import QBText

/// Gemma 3 (text) against things this project did not write: transformers' own
/// Gemma3ForCausalLM (eager attention, f32) on a folder transformers saved itself, over
/// more positions than the tiny preset's sliding window (16), and GGUF files written by
/// `quantize` read back (and run by llama.cpp when QB_LLAMA_CPP_BIN names its binaries).
final class GemmaOracleTests: XCTestCase {
    func testTinyGemma3F32() throws {
        try compare(.tinyGemma3, dtype: "float32", tokens: 48, seed: 11, architecture: "gemma3")
    }

    func testTinyGemma3BF16() throws {
        try compare(.tinyGemma3, dtype: "bfloat16", tokens: 40, seed: 12, architecture: "gemma3")
    }

    /// The config transformers wrote (transformers 5: `layer_types`, nested
    /// `rope_parameters`) reads back as the preset's: the same layer kinds and RoPE bases.
    func testTransformersConfigReadsBackAsThePreset() throws {
        let (dir, _, _) = try transformersFolder(.tinyGemma3, dtype: "float32", tokens: 2, seed: 13)
        defer { try? FileManager.default.removeItem(at: dir) }
        let theirs = try TransformerConfig.load(path: dir.appendingPathComponent("config.json").path)
        let ours = SyntheticModel.Preset.tinyGemma3.config
        XCTAssertEqual((0..<7).map(theirs.isSlidingLayer), [true, true, true, true, true, false, true])
        XCTAssertEqual((0..<7).map(theirs.isSlidingLayer), (0..<7).map(ours.isSlidingLayer))
        XCTAssertEqual(theirs.theta, 1_000_000)
        XCTAssertEqual(theirs.localRopeTheta, 10000)
        XCTAssertEqual(theirs.slidingWindow, 16)
        XCTAssertEqual(theirs.queryPreAttnScalar, 32)
    }

    /// `quantize` to GGUF and back: f32 gives the very same logits (norm factors stored as
    /// 1 + w, Q and K rows unpermuted, RoPE by halves as llama.cpp runs gemma3), q8_0 the
    /// logits of the same conversion made at load; the metadata uses llama.cpp's keys.
    func testGGUFExportLoadsBackToTheSameLogits() throws {
        let (dir, model, tokenizer) = try made(.tinyGemma3, seed: 14)
        defer { try? FileManager.default.removeItem(at: dir) }
        let pool = ThreadPool(threads: 2)
        var rng = SplitMix64(seed: 15)
        let tokens = (0..<40).map { _ in Int32(rng.next() % UInt64(model.config.vocabSize)) }
        for spec in ["f32", "q8_0"] {
            let url = dir.appendingPathComponent("\(spec).gguf")
            try ModelExporter.export(model, tokenizer: tokenizer, spec: QuantSpec(spec), to: url, pool: pool)
            let file = try GGUFFile(path: url.path)
            XCTAssertEqual(file.metadata["general.architecture"], .string("gemma3"))
            XCTAssertEqual(file.metadata["gemma3.attention.sliding_window"]?.int, 16)
            XCTAssertEqual(file.metadata["gemma3.attention.key_length"]?.int, 32)
            XCTAssertNil(file.metadata["gemma3.attention.sliding_window_pattern"], "the default pattern (6) is left implicit")
            // The factor, not w: a norm weight of the file is 1 + the folder's.
            let stored = try file.matrix("blk.0.post_ffw_norm.weight", rows: 1, cols: 64).toFloats()
            XCTAssertEqual(stored, model.weights.layers[0].postFFNNorm?.array)
            let back = try ModelLoader.load(path: url.path)
            XCTAssertEqual(back.architecture.name, "gemma3")
            XCTAssertEqual(back.rope.style, .halves)
            XCTAssertEqual((0..<7).map(back.config.isSlidingLayer), (0..<7).map(model.config.isSlidingLayer))
            let expected = spec == "f32" ? model : try model.quantized(QuantSpec(spec), pool: pool)
            let a = try logits(expected, tokens), b = try logits(back, tokens)
            XCTAssertEqual(a.prefill, b.prefill, "\(spec) prefill")
            XCTAssertEqual(a.decode, b.decode, "\(spec) decode")
        }
    }

    /// `quantize` to an MLX folder and back: norms go back to w (Hugging Face's convention)
    /// and the logits are those of the same conversion made at load.
    func testMLXExportLoadsBack() throws {
        let (dir, model, tokenizer) = try made(.tinyGemma3, seed: 16)
        defer { try? FileManager.default.removeItem(at: dir) }
        let pool = ThreadPool(threads: 2)
        let out = dir.appendingPathComponent("mlx")
        try ModelExporter.export(model, tokenizer: tokenizer, spec: QuantSpec("mlx-q8-g32"), to: out, pool: pool)
        let back = try ModelLoader.load(path: out.path)
        XCTAssertEqual(back.architecture.name, "gemma3")
        let tokens: [Int32] = (0..<24).map { Int32(($0 * 37 + 5) % 1024) }
        let a = try logits(try model.quantized(QuantSpec("mlx-q8-g32"), pool: pool), tokens), b = try logits(back, tokens)
        for p in 0..<tokens.count {
            let r = (p * model.config.vocabSize)..<((p + 1) * model.config.vocabSize)
            XCTAssertLessThanOrEqual(relativeL2(b.prefill[r], a.prefill[r]), 1e-6, "position \(p)")
        }
    }

    /// Every KV cache type through the windowed layers: f16 and q8_0 stay close to f32 past
    /// the window, and prefill in chunks smaller than the window equals one prefill.
    func testCacheTypesAndChunkedPrefillPastTheWindow() throws {
        let (dir, model, _) = try made(.tinyGemma3, seed: 17)
        defer { try? FileManager.default.removeItem(at: dir) }
        let pool = ThreadPool(threads: 2)
        let tokens: [Int32] = (0..<50).map { Int32(($0 * 97 + 11) % 1024) }
        let reference = try model.forward(tokens, state: model.makeState(contextLength: 50, pool: pool), logits: .all)
        let chunked = try model.forward(tokens, state: model.makeState(contextLength: 50, pool: pool, maxBatch: 7), logits: .all)
        XCTAssertLessThanOrEqual(relativeL2(chunked[...], reference[...]), 1e-5)
        for type in [KVCacheType.f16, .q8_0] {
            let out = try model.forward(tokens, state: model.makeState(contextLength: 50, pool: pool, kvType: type), logits: .all)
            XCTAssertLessThanOrEqual(relativeL2(out[...], reference[...]), type == .f16 ? 2e-3 : 2e-2, type.rawValue)
        }
    }

    func testLlamaCppGreedyTextMatches() throws {
        try assertLlamaCppGreedyTextMatches([.tinyGemma3])
    }
}
