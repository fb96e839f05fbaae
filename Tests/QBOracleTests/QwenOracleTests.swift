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
    /// A folder transformers built from `preset`'s config with seeded random weights and
    /// saved in `dtype`, the token ids, and transformers' logits for them.
    func transformersFolder(_ preset: SyntheticModel.Preset, dtype: String, tokens count: Int, seed: UInt64) throws -> (URL, [Int32], [Float]) {
        try Oracle.require(modules: ["torch", "transformers", "numpy"])
        let dir = try Oracle.temporaryDirectory("hf-\(preset.rawValue)-\(dtype)")
        let config = preset.config
        try JSONEncoder().encode(config).write(to: dir.appendingPathComponent("config.json"))
        var rng = SplitMix64(seed: seed &+ 99)
        let tokens = (0..<count).map { _ in Int32(rng.next() % UInt64(config.vocabSize)) }
        let out = dir.appendingPathComponent("logits.f32").path
        _ = try Oracle.script(
            "hf_random_model.py", [dir.path, String(seed), dtype, out, tokens.map(String.init).joined(separator: ",")])
        let theirs = try Oracle.readFloats(out)
        XCTAssertEqual(theirs.count, count * config.vocabSize)
        return (dir, tokens, theirs)
    }

    /// Every position's logits as one prefill and token by token (the decode path).
    func logits(_ model: any LanguageModel, _ tokens: [Int32]) throws -> (prefill: [Float], decode: [Float]) {
        let pool = ThreadPool(threads: 2)
        let prefill = try model.forward(tokens, state: model.makeState(contextLength: tokens.count, pool: pool), logits: .all)
        let state = model.makeState(contextLength: tokens.count, pool: pool)
        var decode: [Float] = []
        for t in tokens { decode += try model.forward([t], state: state, logits: .last) }
        return (prefill, decode)
    }

    func compare(_ preset: SyntheticModel.Preset, dtype: String, tokens count: Int, seed: UInt64, architecture: String) throws {
        let (dir, tokens, theirs) = try transformersFolder(preset, dtype: dtype, tokens: count, seed: seed)
        defer { try? FileManager.default.removeItem(at: dir) }
        let model = try ModelLoader.load(path: dir.path)
        XCTAssertEqual(model.architecture.name, architecture)
        let (prefill, decode) = try logits(model, tokens)
        let vocab = model.config.vocabSize
        var worst = (0.0, 0.0)
        for p in 0..<count {
            let r = (p * vocab)..<((p + 1) * vocab)
            let e1 = relativeL2(prefill[r], theirs[r]), e2 = relativeL2(decode[r], theirs[r])
            XCTAssertLessThanOrEqual(e1, 1e-4, "prefill position \(p)")
            XCTAssertLessThanOrEqual(e2, 1e-4, "decode position \(p)")
            worst = (max(worst.0, e1), max(worst.1, e2))
        }
        print("transformers oracle \(preset.rawValue) \(dtype): worst relative L2 prefill \(worst.0), decode \(worst.1) over \(count) positions")
    }

    func testTinyQwen2F32() throws { try compare(.tinyQwen2, dtype: "float32", tokens: 48, seed: 1, architecture: "qwen2") }
    func testTinyQwen3F32() throws { try compare(.tinyQwen3, dtype: "float32", tokens: 48, seed: 2, architecture: "qwen3") }
    func testTinyQwen2BF16() throws { try compare(.tinyQwen2, dtype: "bfloat16", tokens: 40, seed: 3, architecture: "qwen2") }
    func testTinyQwen3F16() throws { try compare(.tinyQwen3, dtype: "float16", tokens: 40, seed: 4, architecture: "qwen3") }

    /// A make-model folder of `preset` (with its tokenizer), opened.
    func made(_ preset: SyntheticModel.Preset, seed: UInt64) throws -> (URL, any LanguageModel, any Tokenizer) {
        let dir = try Oracle.temporaryDirectory("made-\(preset.rawValue)")
        try ModelMaker.make(preset: preset, seed: seed, dtype: .f32, to: dir.appendingPathComponent("hf"))
        let model = try ModelPipeline.open(path: dir.appendingPathComponent("hf").path)
        return (dir, model, try ModelPipeline.tokenizer(for: model, path: nil))
    }

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
        guard let bin = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !bin.isEmpty else {
            throw XCTSkip("QB_LLAMA_CPP_BIN is not set: no llama.cpp binaries to compare greedy text with")
        }
        let simple = URL(fileURLWithPath: bin).appendingPathComponent("llama-simple")
        guard FileManager.default.isExecutableFile(atPath: simple.path) else {
            throw XCTSkip("\(simple.path) is not an executable")
        }
        for preset in [SyntheticModel.Preset.tinyQwen2, .tinyQwen3] {
            let (dir, model, tokenizer) = try made(preset, seed: 9)
            defer { try? FileManager.default.removeItem(at: dir) }
            let pool = ThreadPool(threads: 2)
            let url = dir.appendingPathComponent("m.gguf")
            try ModelExporter.export(model, tokenizer: tokenizer, spec: QuantSpec("f32"), to: url, pool: pool)
            let gguf = try ModelLoader.load(path: url.path)
            let ggufTokenizer = try ModelPipeline.tokenizer(for: gguf, path: nil)
            let prompt = "the cat sat on the mat"
            let n = 16
            var ids = ggufTokenizer.encode(prompt, addSpecialTokens: true, parseSpecialTokens: false)
            let state = gguf.makeState(contextLength: ids.count + n, pool: pool, kvType: .f32)
            var logits = try gguf.forward(ids, state: state)
            var generated: [Int32] = []
            for _ in 0..<n {
                let next = Int32(logits.indices.max { logits[$0] < logits[$1] } ?? 0)
                generated.append(next)
                logits = try gguf.forward([next], state: state)
            }
            ids += generated
            let ours = ggufTokenizer.decode(generated)

            let p = Process()
            p.executableURL = simple
            p.arguments = ["-m", url.path, "-n", String(n), prompt]
            let out = Pipe()
            p.standardOutput = out
            p.standardError = Pipe()
            try p.run()
            let data = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0)
            let theirs = String(decoding: data, as: UTF8.self)
            XCTAssertTrue(theirs.contains(ours), "\(preset.rawValue): llama.cpp wrote \(theirs.debugDescription), we \(ours.debugDescription)")
        }
    }
}
