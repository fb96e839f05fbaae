import QBSupport
import Foundation
import XCTest
import QBTestSupport
import QBKernels
import QBModel
import QBRunner
import QBText

/// What the architecture oracle tests (Qwen, Gemma) share: transformers-built folders of a
/// preset, every position's logits by prefill and by decode, and make-model folders.
extension XCTestCase {
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
        var ranges: [String] = []
        var rangeWorst = (0.0, 0.0)
        for p in 0..<count {
            let r = (p * vocab)..<((p + 1) * vocab)
            let e1 = relativeL2(prefill[r], theirs[r]), e2 = relativeL2(decode[r], theirs[r])
            XCTAssertLessThanOrEqual(e1, 1e-4, "prefill position \(p)")
            XCTAssertLessThanOrEqual(e2, 1e-4, "decode position \(p)")
            worst = (max(worst.0, e1), max(worst.1, e2))
            rangeWorst = (max(rangeWorst.0, e1), max(rangeWorst.1, e2))
            // The worst per 16 positions, to show errors do not grow past a sliding window.
            if p % 16 == 15 || p == count - 1 {
                ranges.append("\(p / 16 * 16)-\(p): \(rangeWorst.0) / \(rangeWorst.1)")
                rangeWorst = (0, 0)
            }
        }
        print("transformers oracle \(preset.rawValue) \(dtype): worst relative L2 prefill \(worst.0), decode \(worst.1) over \(count) positions; per range (prefill / decode) \(ranges.joined(separator: "; "))")
    }

    /// A make-model folder of `preset` (with its tokenizer), opened.
    func made(_ preset: SyntheticModel.Preset, seed: UInt64) throws -> (URL, any LanguageModel, any Tokenizer) {
        let dir = try Oracle.temporaryDirectory("made-\(preset.rawValue)")
        try ModelMaker.make(preset: preset, seed: seed, dtype: .f32, to: dir.appendingPathComponent("hf"))
        let model = try ModelPipeline.open(path: dir.appendingPathComponent("hf").path)
        return (dir, model, try ModelPipeline.tokenizer(for: model, path: nil))
    }

    /// llama.cpp's `llama-simple` on the f32 GGUF `quantize` writes of each preset: the same
    /// greedy text as ours. Skips unless QB_LLAMA_CPP_BIN names a folder holding llama-simple.
    func assertLlamaCppGreedyTextMatches(_ presets: [SyntheticModel.Preset]) throws {
        guard let bin = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !bin.isEmpty else {
            throw XCTSkip("QB_LLAMA_CPP_BIN is not set: no llama.cpp binaries to compare greedy text with")
        }
        let simple = URL(fileURLWithPath: bin).appendingPathComponent("llama-simple")
        guard FileManager.default.isExecutableFile(atPath: simple.path) else {
            throw XCTSkip("\(simple.path) is not an executable")
        }
        for preset in presets {
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

            let r = try runLlamaCppTool(simple, ["-m", url.path, "-n", String(n), prompt])
            XCTAssertEqual(r.status, 0)
            let theirs = r.stdout
            XCTAssertTrue(theirs.contains(ours), "\(preset.rawValue): llama.cpp wrote \(theirs.debugDescription), we \(ours.debugDescription)")
        }
    }
}
