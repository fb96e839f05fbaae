import Foundation
import XCTest
import QBKernels
import QBModel
import QBText
@testable import QBRunner

/// `eval` on the trained stories260K: the quality order f32, then 8-bit, then 4-bit holds
/// beyond the statistical error, and the perplexity is in line with the model's published
/// validation loss. Skipped (with the reason) when the shared fixtures are missing.
final class EvalTests: XCTestCase {
    /// llama2.c's doc/stories260K.md: "achieves validation loss of 1.2968".
    static let publishedValidationLoss = 1.2968

    func testStories260KQualityOrderAndPerplexity() throws {
        let fixtures = RunnerFixtures.shared
        let bin = fixtures.appendingPathComponent("stories260k/stories260K.bin").path
        let tok = fixtures.appendingPathComponent("stories260k/tok512.bin").path
        // Five TinyStories training stories, each followed by <|endoftext|>.
        let text = fixtures.appendingPathComponent("eval-text/tinystories_sample_cs336.txt").path
        for f in [bin, tok, text] where !FileManager.default.fileExists(atPath: f) {
            throw XCTSkip("fixture \(f) is missing")
        }
        let model = try ModelLoader.load(path: bin)
        let tokenizer = try TokenizerLoader.load(for: model, path: tok)
        var evaluation = QuantEvaluation(quants: ["q4_0", "f32", "q8_0", "mlx-q8-g32", "mlx-q4-g64"], separator: "<|endoftext|>")
        evaluation.repetitions = 1
        evaluation.warmup = 0
        evaluation.promptTokens = 32
        evaluation.generateTokens = 8
        let run = try evaluation.run(model: model, tokenizer: tokenizer, textPath: text, pool: ThreadPool(threads: 2), modelHash: "test")
        let r = run.result
        func s(_ name: String) throws -> EvalSetting { try XCTUnwrap(r.settings.first { $0.name == name }, name) }

        // The windows: one document per story, BOS first, every text id scored once.
        XCTAssertEqual(r.reference, "f32", "the setting with the most bits per weight")
        XCTAssertEqual(r.text.documents, 5)
        XCTAssertEqual(r.window.context, 512)
        XCTAssertEqual(r.window.bos, 1)
        XCTAssertGreaterThan(r.window.predictedTokens, 1500)
        XCTAssertEqual(r.settings.map(\.name), ["q4_0", "f32", "q8_0", "mlx-q8-g32", "mlx-q4-g64"], "in the order asked for")

        // Sizes and the mix of fallbacks: the FFN width 172 fits no 32-wide block.
        let f32 = try s("f32"), q8 = try s("q8_0"), q4 = try s("q4_0")
        XCTAssertEqual(f32.bitsPerWeight, 32, accuracy: 1e-9)
        XCTAssertLessThan(q4.weightBytes, q8.weightBytes)
        XCTAssertLessThan(q8.weightBytes, f32.weightBytes)
        XCTAssertNotNil(q4.formats["Q4_0"])
        XCTAssertNotNil(q4.formats["F16"], "the 172-wide down projections fall back: \(q4.formats)")
        XCTAssertNotNil(try s("mlx-q4-g64").formats["F32"], "MLX keeps unfitting matrices as stored")

        // Quality order beyond the statistical error (two standard errors each side).
        XCTAssertEqual(f32.meanKL, 0)
        XCTAssertEqual(f32.top1Agreement, 1)
        for e in [q8, try s("mlx-q8-g32")] {
            XCTAssertGreaterThan(e.meanKL - 2 * e.klStandardError, 0, "\(e.name) differs from f32 beyond error")
            for f in [q4, try s("mlx-q4-g64")] {
                XCTAssertLessThan(e.meanKL + 2 * e.klStandardError, f.meanKL - 2 * f.klStandardError, "\(e.name) vs \(f.name)")
                XCTAssertGreaterThan(e.top1Agreement, f.top1Agreement)
                let d = try XCTUnwrap(run.pairedDifference(e.name, f.name))
                XCTAssertGreaterThan(d.mean - 2 * d.standardError, 0, "\(f.name) has a higher NLL than \(e.name) beyond error")
                XCTAssertLessThan(e.perplexity, f.perplexity)
            }
        }

        // Perplexity in line with the published validation loss: the text is from the
        // training split, so close to it or below.
        let loss = Self.publishedValidationLoss
        XCTAssertLessThan(f32.meanNLL - 2 * f32.nllStandardError, loss, "not worse than the published loss beyond error")
        XCTAssertGreaterThan(f32.meanNLL, loss - 0.3, "not implausibly far below it")
        XCTAssertEqual(f32.perplexity, exp(f32.meanNLL), accuracy: 1e-9)
        print(String(format: "stories260K f32: mean NLL %.4f ± %.4f nats/token over %d ids (published validation loss %.4f)",
                     f32.meanNLL, f32.nllStandardError, f32.tokens, loss))

        // The report and the chart.
        XCTAssertTrue(r.markdown.contains("| q8_0 |"))
        let svg = SpeedQualityChart.svg(r)
        XCTAssertTrue(svg.hasPrefix("<svg"))
        XCTAssertTrue(svg.contains(">q4_0<"))
        XCTAssertTrue(svg.contains("f32 (= 0)"))
    }

    func testWindowsScoreEveryIdOnce() throws {
        let t = try SyntheticTokenizerFixture.tokenizer()
        let text = String(repeating: "the cat sat on the mat. ", count: 40)
        let w = PerplexityWindows(text: text, tokenizer: t, context: 16)
        let ids = t.encode(text.trimmingCharacters(in: .whitespacesAndNewlines), addSpecialTokens: false, parseSpecialTokens: false)
        XCTAssertEqual(w.predictedTokens, ids.count)
        XCTAssertEqual(w.windows.flatMap(\.targets), ids)
        XCTAssertTrue(w.windows.allSatisfy { $0.input.first == t.bosTokenID && $0.input.count <= 16 && $0.targets == Array($0.input.dropFirst()) })
        XCTAssertEqual(PerplexityWindows(text: text, tokenizer: t, context: 16, maxTokens: 20).predictedTokens, 20)
        let docs = PerplexityWindows(text: "one two|two three|", tokenizer: t, context: 64, separator: "|")
        XCTAssertEqual(docs.documents, 2)
        XCTAssertEqual(docs.windows.count, 2, "a window never spans two documents")
    }
}

/// The tiny model's tokenizer, for tests that need one without a model.
enum SyntheticTokenizerFixture {
    static func tokenizer() throws -> any Tokenizer {
        let model = try ModelLoader.load(path: RunnerFixtures.tinyModelPath())
        return try TokenizerLoader.load(for: model, path: nil)
    }
}
