import Foundation
import QBKernels
import QBModel
import QBSupport
import XCTest
import QBTestSupport

/// Our f32 forward pass against Hugging Face transformers' LlamaForCausalLM on the same
/// safetensors: relative L2 error of the logits at every position ≤ 1e-4.
final class TransformersLogitsTests: XCTestCase {
    static let limit = 1e-4

    /// Logits of every position, the whole sequence as one prefill and token by token (the
    /// decode path).
    struct Ours: Equatable {
        var prefill: [Float]
        var decode: [Float]
    }

    func ours(_ model: any LanguageModel, _ tokens: [Int32]) throws -> Ours {
        let pool = ThreadPool(threads: 2)
        let prefill = try model.forward(tokens, state: model.makeState(contextLength: tokens.count, pool: pool), logits: .all)
        let state = model.makeState(contextLength: tokens.count, pool: pool)
        var decode: [Float] = []
        for t in tokens { decode += try model.forward([t], state: state, logits: .last) }
        return Ours(prefill: prefill, decode: decode)
    }

    /// The oracle's logits and what it said about itself (torch's version, CPU capability, threads).
    func oracle(_ dir: URL, _ tokens: [Int32], out name: String) throws -> (logits: [Float], said: String) {
        let out = dir.appendingPathComponent(name).path
        let said = try Oracle.script("hf_logits.py", [dir.path, out, tokens.map(String.init).joined(separator: ",")])
        return (try Oracle.readFloats(out), said.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// The worst relative L2 error over positions of `a` against `b` (rows of `vocab`), and
    /// the positions above the limit.
    func errors(_ a: [Float], _ b: [Float], vocab: Int) -> (worst: Double, over: [Int]) {
        var worst = 0.0, over: [Int] = []
        for p in 0..<(b.count / vocab) {
            let r = (p * vocab)..<((p + 1) * vocab)
            let e = relativeL2(a[r], b[r])
            worst = max(worst, e)
            if !(e <= Self.limit) { over.append(p) }
        }
        return (worst, over)
    }

    func compare(preset: SyntheticModel.Preset, dtype: DType, tokens count: Int, seed: UInt64) throws {
        try Oracle.require(modules: ["torch", "transformers", "numpy"])
        let dir = try Oracle.temporaryDirectory("hf-\(preset.rawValue)-\(dtype.rawValue)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = preset.config
        try SyntheticModel.write(config: config, seed: seed, dtype: dtype, to: dir, bos: nil, eos: [])
        var rng = SplitMix64(seed: seed &+ 99)
        let tokens = (0..<count).map { _ in Int32(rng.next() % UInt64(config.vocabSize)) }
        let vocab = config.vocabSize
        let theirs = try oracle(dir, tokens, out: "logits.f32")
        XCTAssertEqual(theirs.logits.count, count * vocab)
        guard theirs.logits.count == count * vocab else { return }

        let model = try ModelLoader.load(path: dir.path)
        let first = try ours(model, tokens)
        let prefill = errors(first.prefill, theirs.logits, vocab: vocab)
        let decode = errors(first.decode, theirs.logits, vocab: vocab)
        let what = "transformers oracle \(preset.rawValue) \(dtype.rawValue) (\(theirs.said))"
        print("\(what): worst relative L2 prefill \(prefill.worst), decode \(decode.worst) over \(count) positions")
        if prefill.over.isEmpty && decode.over.isEmpty { return }

        // A disagreement: before judging, tell which side moved. Once (a CI run under load,
        // 2026-11-29) both our paths stood 1.5e-4 from the oracle at positions 47-79 where
        // every other run put them 1e-6 from it; neither side was ever seen to move again.
        // So both run once more on the same files: if ours repeat bitwise and the oracle does
        // not, and ours agree with its second run, the oracle's first run was the outlier.
        // Anything else fails, with what each run said.
        let again = try oracle(dir, tokens, out: "logits-again.f32")
        let second = try ours(model, tokens)
        let oursRepeat = second == first, oracleRepeats = again.logits == theirs.logits
        let vsAgain = (errors(first.prefill, again.logits, vocab: vocab), errors(first.decode, again.logits, vocab: vocab))
        let oracleDrift = again.logits.count == theirs.logits.count ? errors(again.logits, theirs.logits, vocab: vocab).worst : .nan
        let diagnosis = """
            \(what): prefill over \(Self.limit) at positions \(prefill.over), decode at \(decode.over); \
            ours again bitwise the same: \(oursRepeat); the oracle again (\(again.said)) bitwise the same: \(oracleRepeats), \
            its two runs apart by worst relative L2 \(oracleDrift); ours against its second run: prefill \(vsAgain.0.worst), decode \(vsAgain.1.worst)
            """
        print(diagnosis)
        if oursRepeat && !oracleRepeats && vsAgain.0.over.isEmpty && vsAgain.1.over.isEmpty {
            print("\(what): the oracle's first run was the outlier; ours agree with its second run")
            return
        }
        XCTFail(diagnosis)
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
