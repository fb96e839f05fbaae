import Foundation
import XCTest
import QBTestSupport
import QBFormats
import CQBKernels
import QBKernels
import QBModel
import QBRunner
import QBText

/// Quantized models end to end: each format against a reference that uses the same
/// dequantized weights, GGUF and MLX files against the models they were written from, our
/// GGUF files read by the `gguf` package, and quality order on the trained stories260K.
final class QuantizedModelTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws { dir = try Oracle.temporaryDirectory("quantized") }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    let pool = ThreadPool(threads: 2)
    let tokens: [Int32] = [5, 900, 17, 256, 1000, 3, 44, 512, 77, 600, 12, 13]
    /// Longer than `Linear.shortChunkRows` on every kernel set, so its prefill runs on the
    /// int8 tiles (`tokens`' on the decode kernels: `testShortPromptPrefillIsDecode`).
    let longTokens: [Int32] = (0..<40).map { Int32((37 * $0 + 5) % 1000) }

    func tiny() throws -> any LanguageModel {
        let d = dir.appendingPathComponent("tiny")
        try ModelMaker.make(preset: .tiny, seed: 21, dtype: .f32, to: d)
        return try ModelLoader.load(path: d.path)
    }

    func logits(_ m: any LanguageModel, stepwise: Bool = false, prompt: [Int32]? = nil) throws -> [Float] {
        let ids = prompt ?? tokens
        let s = m.makeState(contextLength: ids.count, pool: pool)
        if !stepwise { return try m.forward(ids, state: s, logits: .all) }
        var out: [Float] = []
        for t in ids { out += try m.forward([t], state: s, logits: .last) }
        return out
    }

    /// A prompt of up to `Linear.shortChunkRows` positions goes through the batched decode
    /// kernels, each row's arithmetic that of decode: its prefill's logits are bitwise those
    /// of decoding it one position at a time, for every format on the tiles, in the layouts
    /// models load in (the decode layouts).
    func testShortPromptPrefillIsDecode() throws {
        let base = try tiny()
        XCTAssertGreaterThan(longTokens.count, Linear.shortChunkRows, "the long prompt takes the tiles")
        for name in ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "mlx-q4-g64", "mlx-q8-g64"] {
            let q = try base.quantized(QuantSpec(name), pool: pool).interleavedForDecode(pool: pool)
            for count in Set([2, 5, min(12, Linear.shortChunkRows)]) where count <= Linear.shortChunkRows {
                let prompt = Array(tokens.prefix(count))
                XCTAssertEqual(try logits(q, prompt: prompt), try logits(q, stepwise: true, prompt: prompt), "\(name), \(count) positions")
            }
        }
    }

    func relativeL2(_ a: [Float], _ b: [Float]) -> Double {
        var num = 0.0, den = 0.0
        for (x, y) in zip(a, b) { num += Double(x - y) * Double(x - y); den += Double(y) * Double(y) }
        return (num / den).squareRoot()
    }

    static let specs = ["f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "q4_k", "mlx-q4-g32", "mlx-q4-g64", "mlx-q4-g128", "mlx-q8-g64"]

    /// Prefill of formats off the int8 tiles (f16, bf16; on the portable set the 5- and 8-bit
    /// ones) dequantizes weights and keeps activations in f32: it equals an f32 model holding
    /// the dequantized weights. Prefill on the tiles (the long prompt) quantizes activations
    /// like decode; a short prompt's prefill tracks decode. Decode quantizes activations to
    /// int8 per 32 values (as llama.cpp does); on this random-weight model that moves the
    /// logits by about 1.7% (relative L2) whatever the weight format, f16/bf16 excepted (f32
    /// path).
    func testEveryFormatMatchesItsDequantizedReference() throws {
        let base = try tiny()
        for name in Self.specs {
            let q = try base.quantized(QuantSpec(name), pool: pool)
            let reference = try q.quantized(QuantSpec("f32"), pool: pool)
            let prefill = relativeL2(try logits(q, prompt: longTokens), try logits(reference, prompt: longTokens))
            let decode = relativeL2(try logits(q, stepwise: true), try logits(reference, stepwise: true))
            XCTAssertLessThan(decode, name.hasPrefix("f") || name.hasPrefix("b") ? 1e-6 : 3e-2, "\(name) decode")
            let matrices = q.weights.layers.flatMap { $0.matrices.map(\.1) }
            let int8 = matrices.filter(Linear.prefillQuantizesActivations).count
            if int8 == matrices.count {
                // Int8 activations as decode's: a short prompt's prefill tracks decode, not f32.
                let own = relativeL2(try logits(q), try logits(q, stepwise: true))
                XCTAssertLessThan(own, 1e-4, "\(name) prefill vs decode")
                XCTAssertLessThan(prefill, 3e-2, "\(name) prefill")
            } else if int8 == 0 {
                XCTAssertLessThan(prefill, 1e-5, "\(name) prefill")
            } else {
                XCTAssertLessThan(prefill, 3e-2, "\(name) prefill")
            }
            print("quantized \(name): relative L2 vs dequantized reference: prefill \(prefill), decode \(decode)")
        }
    }

    /// The interleaved decode layouts compute the same model: prefill on the tiles bitwise
    /// equal (the same tiles), decode equal up to summation order; GGUF written from the four-row
    /// (or Q4_0's sixteen-row) layout equals GGUF written from the plain layout.
    func testInterleavedDecodeLayoutIsTheSameModel() throws {
        let base = try tiny()
        for name in ["q8_0", "q4_0", "q4_1", "q5_0", "q5_1"] {
            let q = try base.quantized(QuantSpec(name), pool: pool)
            let packed = try q.interleavedForDecode(pool: pool)
            // Q4_0 takes sixteen-row groups on the AVX-512 and AVX2 kernel sets (its rows allowing).
            let wq = q.weights.layers[0].wq
            let sixteen = name == "q4_0" && qb_repack_group_rows(wq.format.ggmlID, Int64(wq.rows)) == 16
            XCTAssertEqual(packed.weights.layers[0].wq.layout, sixteen ? .interleaved16 : .interleaved4, name)
            XCTAssertEqual(try logits(packed, prompt: longTokens), try logits(q, prompt: longTokens), "\(name) prefill")
            XCTAssertLessThan(relativeL2(try logits(packed, stepwise: true), try logits(q, stepwise: true)), 1e-5, "\(name) decode")
            let a = dir.appendingPathComponent("plain-\(name).gguf"), b = dir.appendingPathComponent("packed-\(name).gguf")
            try GGUFExport.write(q, spec: nil, name: "tiny", extra: [], to: a, pool: pool)
            try GGUFExport.write(packed, spec: nil, name: "tiny", extra: [], to: b, pool: pool)
            XCTAssertEqual(try Data(contentsOf: a), try Data(contentsOf: b), "\(name) GGUF bytes")
        }
        // MLX takes sixteen-row groups, its scales and biases moved in beside the values.
        for name in ["mlx-q4-g32", "mlx-q4-g64", "mlx-q4-g128", "mlx-q8-g64"] {
            let q = try base.quantized(QuantSpec(name), pool: pool)
            let packed = try q.interleavedForDecode(pool: pool)
            XCTAssertEqual(packed.weights.layers[0].wq.layout, .interleaved16, name)
            XCTAssertEqual(try logits(packed, prompt: longTokens), try logits(q, prompt: longTokens), "\(name) prefill")
            XCTAssertLessThan(relativeL2(try logits(packed, stepwise: true), try logits(q, stepwise: true)), 1e-5, "\(name) decode")
        }
    }

    func testGGUFExportMatchesTheModelItWasWrittenFrom() throws {
        let base = try tiny()
        for name in ["f32", "f16", "q8_0", "q4_0", "q4_k"] {
            let url = dir.appendingPathComponent("tiny-\(name).gguf")
            try ModelExporter.export(base, tokenizer: try TokenizerLoader.load(for: base, path: nil), spec: QuantSpec(name), to: url, pool: pool)
            let g = try ModelLoader.load(path: url.path)
            XCTAssertEqual(g.rope.style, .interleaved)
            XCTAssertEqual(g.stopTokens.sorted(), base.stopTokens.sorted())
            XCTAssertEqual(g.bosToken, base.bosToken)
            let expected = try logits(name == "f32" ? base : base.quantized(QuantSpec(name), pool: pool))
            let e = relativeL2(try logits(g), expected)
            XCTAssertLessThan(e, 1e-5, name)
            print("gguf \(name): relative L2 vs source model \(e)")
        }
    }

    func testGGUFWeReadBackThroughTheGGUFPackage() throws {
        try Oracle.require(modules: ["gguf", "numpy"])
        let base = try tiny()
        let url = dir.appendingPathComponent("tiny-q4_0.gguf")
        try ModelExporter.export(base, tokenizer: try TokenizerLoader.load(for: base, path: nil), spec: QuantSpec("q4_0"), to: url, pool: pool)
        let json = try Oracle.script("gguf_dump.py", [url.path])
        let obj = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        let theirs = obj["metadata"] as! [String: Any]
        let ours = try GGUFFile(path: url.path)
        XCTAssertEqual(Set(theirs.keys), Set(ours.keys))
        for key in ours.keys {
            let a = ours.metadata[key]!, b = theirs[key]!
            switch a {
            case .string(let s): XCTAssertEqual(s, b as? String, key)
            case .array(let values):
                let bs = b as! [Any]
                XCTAssertEqual(values.count, bs.count, key)
                for (x, y) in zip(values, bs) {
                    if let s = x.string { XCTAssertEqual(s, y as? String, key) } else { XCTAssertEqual(x.double, (y as? NSNumber)?.doubleValue, key) }
                }
            case .bool(let v): XCTAssertEqual(v, b as? Bool, key)
            default: XCTAssertEqual(a.double!, (b as! NSNumber).doubleValue, accuracy: abs(a.double!) * 1e-7, key)
            }
        }
        let tensors = obj["tensors"] as! [[String: Any]]
        XCTAssertEqual(tensors.count, ours.tensors.count)
        for t in tensors {
            let o = ours.tensor(t["name"] as! String)!
            XCTAssertEqual(t["type"] as? Int, Int(o.type))
            XCTAssertEqual(t["shape"] as? [Int], o.dims)
            var sum: UInt64 = 0
            let raw = UnsafeRawBufferPointer(start: ours.file.base + o.range.lowerBound, count: o.range.count)
            for (i, b) in raw.enumerated() { sum &+= (UInt64(b) &+ 1) &* (UInt64(i) &* 0x9E37_79B9_7F4A_7C15 &+ 1) }
            XCTAssertEqual(t["checksum"] as? String, String(sum), o.name)
        }
    }

    func testMLXExportRoundTrips() throws {
        let base = try tiny()
        for name in ["mlx-q4-g64", "mlx-q8-g32"] {
            let out = dir.appendingPathComponent(name)
            try ModelExporter.export(base, tokenizer: nil, spec: QuantSpec(name), to: out, pool: pool)
            let m = try ModelLoader.load(path: out.path)
            XCTAssertEqual(m.source.format, .mlx)
            XCTAssertNotNil(try? TokenizerLoader.load(for: m, path: nil), "tokenizer copied")
            let e = relativeL2(try logits(m), try logits(base.quantized(QuantSpec(name), pool: pool)))
            XCTAssertLessThan(e, 1e-5, name)
        }
    }

    /// stories260K as GGUF (f32, with its SentencePiece vocabulary) is the same model.
    func testStories260KThroughGGUF() throws {
        let fixtures = try TestModels.storiesDirectory()
        let bin = fixtures.appendingPathComponent("stories260K.bin").path
        let model = try ModelLoader.load(path: bin)
        let tok = try Llama2cTokenizer(path: fixtures.appendingPathComponent("tok512.bin").path, vocabularySize: 512)
        let url = dir.appendingPathComponent("stories.gguf")
        try ModelExporter.export(model, tokenizer: tok, spec: QuantSpec("f32"), to: url, pool: pool)
        let g = try ModelLoader.load(path: url.path)
        let ids: [Int32] = tok.encode("Once upon a time, there was a little girl")
        let a = try model.forward(ids, state: model.makeState(contextLength: 32, pool: pool), logits: .all)
        let b = try g.forward(ids, state: g.makeState(contextLength: 32, pool: pool), logits: .all)
        XCTAssertEqual(a, b, "same weights, same RoPE layout: bitwise equal")
        let file = try GGUFFile(path: url.path)
        XCTAssertEqual(file.metadata["tokenizer.ggml.model"], .string("llama"))
        XCTAssertEqual(file.metadata["tokenizer.ggml.tokens"]?.array?.count, 512)
    }

    /// On the trained model, every 8-bit setting stays closer to f32 than every 4-bit one.
    func testStories260KQualityOrder() throws {
        let fixtures = Fixtures.shared
        let bin = try Fixtures.path("stories260k/stories260K.bin")
        let textPath = try Fixtures.path("eval-text/tinystories_sample_cs336.txt")
        let model = try ModelLoader.load(path: bin)
        let tok = try Llama2cTokenizer(path: fixtures.appendingPathComponent("stories260k/tok512.bin").path, vocabularySize: 512)
        let ids = Array(tok.encode(try String(contentsOfFile: textPath, encoding: .utf8)).prefix(512))
        func run(_ m: any LanguageModel) throws -> [Float] {
            try m.forward(ids, state: m.makeState(contextLength: ids.count, pool: pool), logits: .all)
        }
        let reference = try run(model)
        var kl: [String: QualityMetrics.Comparison] = [:]
        for name in ["f16", "q8_0", "mlx-q8-g64", "q4_0", "q4_k", "mlx-q4-g32", "mlx-q4-g64"] {
            kl[name] = QualityMetrics.compare(reference: reference, candidate: try run(model.quantized(QuantSpec(name), pool: pool)), vocab: 512)
            print(String(format: "stories260K %@: mean KL %.6f ± %.6f nats, top-1 agreement %.3f", name, kl[name]!.meanKL, kl[name]!.klStandardError, kl[name]!.top1Agreement))
        }
        let eight = ["q8_0", "mlx-q8-g64"].map { kl[$0]! }, four = ["q4_0", "q4_k", "mlx-q4-g32", "mlx-q4-g64"].map { kl[$0]! }
        for e in eight {
            for f in four {
                // Beyond the statistical error: the gap exceeds both standard errors together.
                XCTAssertLessThan(e.meanKL + 2 * e.klStandardError, f.meanKL - 2 * f.klStandardError)
            }
        }
        XCTAssertLessThan(kl["f16"]!.meanKL, kl["q8_0"]!.meanKL)
    }
}
