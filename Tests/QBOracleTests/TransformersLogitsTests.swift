import Foundation
import QBKernels
import QBModel
import QBSupport
import XCTest
import QBTestSupport

/// Our f32 forward pass against Hugging Face transformers' LlamaForCausalLM on the same
/// safetensors: relative L2 error of the logits at every position ≤ 1e-4.
final class TransformersLogitsTests: XCTestCase {
    func compare(preset: SyntheticModel.Preset, dtype: DType, tokens count: Int, seed: UInt64) throws {
        try Oracle.require(modules: ["torch", "transformers", "numpy"])
        let dir = try Oracle.temporaryDirectory("hf-\(preset.rawValue)-\(dtype.rawValue)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = preset.config
        try SyntheticModel.write(config: config, seed: seed, dtype: dtype, to: dir, bos: nil, eos: [])
        var rng = SplitMix64(seed: seed &+ 99)
        let tokens = (0..<count).map { _ in Int32(rng.next() % UInt64(config.vocabSize)) }
        let out = dir.appendingPathComponent("logits.f32").path
        _ = try Oracle.script("hf_logits.py", [dir.path, out, tokens.map(String.init).joined(separator: ",")])
        let theirs = try Oracle.readFloats(out)
        let vocab = config.vocabSize
        XCTAssertEqual(theirs.count, count * vocab)

        let model = try ModelLoader.load(path: dir.path)
        let pool = ThreadPool(threads: 2)
        // The whole sequence as one prefill, and token by token (the decode path).
        let prefill = try model.forward(tokens, state: model.makeState(contextLength: count, pool: pool), logits: .all)
        let state = model.makeState(contextLength: count, pool: pool)
        var decode: [Float] = []
        for t in tokens { decode += try model.forward([t], state: state, logits: .last) }

        var worst = (0.0, 0.0)
        for p in 0..<count {
            let r = (p * vocab)..<((p + 1) * vocab)
            let e1 = relativeL2(prefill[r], theirs[r]), e2 = relativeL2(decode[r], theirs[r])
            XCTAssertLessThanOrEqual(e1, 1e-4, "prefill position \(p)")
            XCTAssertLessThanOrEqual(e2, 1e-4, "decode position \(p)")
            worst = (max(worst.0, e1), max(worst.1, e2))
        }
        print("transformers oracle \(preset.rawValue) \(dtype.rawValue): worst relative L2 prefill \(worst.0), decode \(worst.1) over \(count) positions")
    }

    func testTinyF32() throws { try compare(preset: .tiny, dtype: .f32, tokens: 80, seed: 1) }
    func testTinyBF16() throws { try compare(preset: .tiny, dtype: .bf16, tokens: 40, seed: 2) }
    func testTinyF16() throws { try compare(preset: .tiny, dtype: .f16, tokens: 40, seed: 3) }

    /// The Llama 3.2 1B shape (5 GB of f32 weights): run when QB_ORACLE_1B=1 (CI sets it).
    func testLlama32_1BShapeF32() throws {
        guard ProcessInfo.processInfo.environment["QB_ORACLE_1B"] == "1" else {
            throw XCTSkip("set QB_ORACLE_1B=1 to compare the llama-3.2-1b shape (writes 5 GB, takes minutes)")
        }
        try compare(preset: .llama32_1b, dtype: .f32, tokens: 12, seed: 7)
    }
}
