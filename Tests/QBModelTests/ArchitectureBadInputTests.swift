import QBFormats
import Foundation
import XCTest
import QBKernels
@testable import QBModel

/// Qwen2 and Qwen3 files that contradict their config, and architectures the engine does
/// not run: typed errors naming the file and the field or tensor, never a crash.
final class ArchitectureBadInputTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-arch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    /// A Hugging Face folder of `preset` whose tensor declarations went through `edit`.
    func folder(
        _ preset: SyntheticModel.Preset, config edit: (inout TransformerConfig) -> Void = { _ in },
        tensors: ([SafetensorsWriter.Declaration]) -> [SafetensorsWriter.Declaration] = { $0 }
    ) throws -> URL {
        let d = dir.appendingPathComponent("\(preset.rawValue)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
        var c = preset.config
        c.numHiddenLayers = 1
        let decls = tensors(try SyntheticModel.declarations(c, dtype: .f32))
        edit(&c)
        let encoder = JSONEncoder()
        try encoder.encode(c).write(to: d.appendingPathComponent("config.json"))
        try SafetensorsWriter.write(path: d.appendingPathComponent("model.safetensors").path, declarations: decls) { _, _, chunk in
            for i in chunk.indices { chunk[i] = 0.5 }
        }
        return d
    }

    func expectError(_ path: String, file: StaticString = #filePath, line: UInt = #line, _ check: (ModelError) -> Bool) {
        do {
            _ = try ModelLoader.load(path: path)
            XCTFail("loaded a malformed model", file: file, line: line)
        } catch let e as ModelError {
            XCTAssertTrue(check(e), "unexpected error: \(e)", file: file, line: line)
            XCTAssertTrue(e.description.contains(URL(fileURLWithPath: path).lastPathComponent), "error names the file: \(e)", file: file, line: line)
        } catch {
            XCTFail("not a ModelError: \(error)", file: file, line: line)
        }
    }

    func testWellFormedQwenFoldersLoad() throws {
        for p in [SyntheticModel.Preset.tinyQwen2, .tinyQwen3] {
            let m = try ModelLoader.load(path: try folder(p).path)
            XCTAssertEqual(m.architecture.name, p == .tinyQwen2 ? "qwen2" : "qwen3")
            XCTAssertEqual(m.rope.style, .halves)
        }
    }

    /// The real-shape presets declare exactly the released models' parameter counts
    /// (transformers reports 494,032,768 for Qwen2.5-0.5B; Qwen3-0.6B is 596,049,920).
    func testRealShapePresetsMatchTheReleasedModels() throws {
        for (preset, params) in [(SyntheticModel.Preset.qwen25_05b, 494_032_768), (.qwen3_06b, 596_049_920)] {
            try preset.config.validate(path: preset.rawValue)
            let n = try SyntheticModel.declarations(preset.config, dtype: .bf16).reduce(0) { $0 + $1.shape.reduce(1, *) }
            XCTAssertEqual(n, params, preset.rawValue)
        }
    }

    func testUnknownArchitectureNamesItselfAndTheSupportedList() throws {
        let d = try folder(.tinyQwen2) { $0.modelType = "gemma3" }
        expectError(d.path) {
            guard case .invalidField(let p, "model_type", let reason) = $0 else { return false }
            return p.hasSuffix("config.json") && reason.contains("gemma3") && reason.contains("llama, qwen2, qwen3")
        }
        var w = GGUFWriter()
        // gemma3 is supported now; gemma2 (softcapping, no per-head norms) is not.
        w.add("general.architecture", .string("gemma2"))
        let g = dir.appendingPathComponent("g.gguf")
        try w.write(to: g)
        expectError(g.path) {
            guard case .invalidField(_, "general.architecture", let reason) = $0 else { return false }
            return reason.contains("gemma3") && reason.contains("qwen3")
        }
    }

    func testHeadCountsThatDoNotDivide() throws {
        let d = try folder(.tinyQwen3) { $0.numKeyValueHeads = 3 }
        expectError(d.path) { if case .invalidField(let p, "num_key_value_heads", _) = $0 { return p.hasSuffix("config.json") } else { return false } }
        let e = try folder(.tinyQwen2) { $0.numAttentionHeads = 5 }
        expectError(e.path) { if case .invalidField(_, "hidden_size", _) = $0 { return true } else { return false } }
    }

    func testBiasOfTheWrongLength() throws {
        let name = "model.layers.0.self_attn.k_proj.bias"
        let d = try folder(.tinyQwen2, tensors: { decls in
            decls.map { $0.name == name ? .init(name: name, dtype: .f32, shape: [$0.shape[0] + 2]) : $0 }
        })
        expectError(d.path) {
            if case .shapeMismatch(let p, name, _, _) = $0 { return p.hasSuffix("model.safetensors") } else { return false }
        }
        let e = try folder(.tinyQwen2, tensors: { $0.filter { $0.name != "model.layers.0.self_attn.v_proj.bias" } })
        expectError(e.path) { if case .missingTensor(_, "model.layers.0.self_attn.v_proj.bias") = $0 { return true } else { return false } }
    }

    func testQwen3WithoutQueryOrKeyNorms() throws {
        for missing in ["model.layers.0.self_attn.q_norm.weight", "model.layers.0.self_attn.k_norm.weight"] {
            let d = try folder(.tinyQwen3, tensors: { $0.filter { $0.name != missing } })
            expectError(d.path) { if case .missingTensor(_, missing) = $0 { return true } else { return false } }
        }
        let wrong = try folder(.tinyQwen3, tensors: { decls in
            decls.map { $0.name.hasSuffix("q_norm.weight") ? .init(name: $0.name, dtype: .f32, shape: [16]) : $0 }
        })
        expectError(wrong.path) { if case .shapeMismatch(_, let t, _, _) = $0 { return t.hasSuffix("q_norm.weight") } else { return false } }
    }

    func testUnsupportedQwenOptions() throws {
        let d = try folder(.tinyQwen2) { $0.useSlidingWindow = true }
        expectError(d.path) { if case .invalidField(_, "use_sliding_window", _) = $0 { return true } else { return false } }
        let e = try folder(.tinyQwen3) { $0.attentionBias = true }
        expectError(e.path) { if case .invalidField(_, "attention_bias", _) = $0 { return true } else { return false } }
    }

    // MARK: - Gemma 3

    func testWellFormedGemmaFolderLoads() throws {
        let m = try ModelLoader.load(path: try folder(.tinyGemma3).path)
        XCTAssertEqual(m.architecture.name, "gemma3")
        // Hugging Face stores w; the model holds the factor 1 + w.
        XCTAssertEqual(m.weights.layers[0].postAttentionNorm?.array.first, 1.5)
        XCTAssertEqual(m.weights.finalNorm.array.first, 1.5)
    }

    /// The gemma3-270m preset declares the released model's parameter count (transformers
    /// reports 268,098,176 for google/gemma-3-270m).
    func testGemma270mPresetMatchesTheReleasedModel() throws {
        let c = SyntheticModel.Preset.gemma3_270m.config
        try c.validate(path: "gemma3-270m")
        let n = try SyntheticModel.declarations(c, dtype: .bf16).reduce(0) { $0 + $1.shape.reduce(1, *) }
        XCTAssertEqual(n, 268_098_176)
        XCTAssertEqual((0..<18).filter { !c.isSlidingLayer($0) }, [5, 11, 17])
    }

    func testGemmaConfigContradictionsNameTheField() throws {
        let cases: [(String, (inout TransformerConfig) -> Void)] = [
            ("sliding_window", { $0.slidingWindow = 4096; $0.maxPositionEmbeddings = 1024 }),
            ("sliding_window", { $0.slidingWindow = 0 }),
            ("num_key_value_heads", { $0.numKeyValueHeads = 3 }),
            ("final_logit_softcapping", { $0.finalLogitSoftcapping = 30 }),
            ("attn_logit_softcapping", { $0.attnLogitSoftcapping = 50 }),
            ("hidden_activation", { $0.hiddenActivation = "silu" }),
            ("layer_types", { $0.layerTypes = ["sliding_attention", "local"] }),
            ("rope_scaling", { $0.ropeScaling = try? JSONDecoder().decode(RopeScalingConfig.self, from: Data(#"{"rope_type":"linear","factor":8}"#.utf8)) }),
            ("rope_parameters.full_attention.rope_type", {
                $0.ropeParameters = try? JSONDecoder().decode(
                    RopeScalingConfig.self, from: Data(#"{"full_attention":{"rope_type":"yarn","rope_theta":1e6}}"#.utf8))
            }),
        ]
        for (field, edit) in cases {
            let d = try folder(.tinyGemma3, config: edit)
            expectError(d.path) {
                guard case .invalidField(let p, let f, _) = $0 else { return false }
                return p.hasSuffix("config.json") && f.hasPrefix(field)
            }
        }
    }

    func testGemmaMissingNormsNameTheTensor() throws {
        for dropped in ["post_feedforward_layernorm", "self_attn.q_norm", "pre_feedforward_layernorm"] {
            let d = try folder(.tinyGemma3, tensors: { $0.filter { !$0.name.contains(dropped) } })
            expectError(d.path) {
                guard case .missingTensor(_, let t) = $0 else { return false }
                return t.contains(dropped)
            }
        }
    }

    /// GGUF: a missing post-norm, a window beyond the context, softcapping: typed errors
    /// naming the GGUF key or tensor.
    func testGemmaGGUFContradictionsNameTheKey() throws {
        let model = try ModelLoader.load(path: try folder(.tinyGemma3).path)
        let good = dir.appendingPathComponent("good.gguf")
        try GGUFExport.write(model, spec: nil, name: "t", extra: [], to: good, pool: ThreadPool(threads: 1))
        let file = try GGUFFile(path: good.path)
        func rewrite(_ name: String, metadata edit: (inout [(String, GGUFValue)]) -> Void, dropTensor: String? = nil) throws -> URL {
            var w = GGUFWriter()
            var meta = file.keys.map { ($0, file.metadata[$0]!) }
            edit(&meta)
            for (k, v) in meta { w.add(k, v) }
            for t in file.tensors where t.name != dropTensor {
                let bytes = try file.file.bytes(at: t.range.lowerBound, count: t.range.count, item: t.name)
                w.tensors.append(.init(name: t.name, dims: t.dims, type: Int32(bitPattern: t.type)) { buf in
                    buf.copyMemory(from: bytes)
                })
            }
            let u = dir.appendingPathComponent(name)
            try w.write(to: u)
            return u
        }
        let missing = try rewrite("missing.gguf", metadata: { _ in }, dropTensor: "blk.0.post_ffw_norm.weight")
        expectError(missing.path) {
            guard case .missingTensor(_, let t) = $0 else { return false }
            return t == "blk.0.post_ffw_norm.weight"
        }
        for (key, value) in [("gemma3.attention.sliding_window", GGUFValue.uint32(1 << 20)), ("gemma3.final_logit_softcapping", .float32(30))] {
            let u = try rewrite("bad.gguf", metadata: { m in m.removeAll { $0.0 == key }; m.append((key, value)) })
            expectError(u.path) {
                guard case .invalidField(_, let f, _) = $0 else { return false }
                return f == key
            }
        }
    }
}
