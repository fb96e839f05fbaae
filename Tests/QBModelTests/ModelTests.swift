import Foundation
import QBFormats
import QBKernels
import XCTest
import QBTestSupport
@testable import QBModel

/// The forward pass's own invariants, on synthetic models and the real stories260K.
final class ModelTests: XCTestCase {
    func fixture(_ path: String) throws -> String { try Fixtures.path(path) }

    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func tiny(seed: UInt64, dtype: DType = .f32, name: String = "m") throws -> URL {
        let d = dir.appendingPathComponent(name)
        try SyntheticModel.write(config: SyntheticModel.Preset.tiny.config, seed: seed, dtype: dtype, to: d, bos: 1000, eos: [1001])
        return d
    }

    func testSyntheticModelsAreDeterministic() throws {
        let a = try tiny(seed: 5, name: "a"), b = try tiny(seed: 5, name: "b"), c = try tiny(seed: 6, name: "c")
        let fa = try Data(contentsOf: a.appendingPathComponent("model.safetensors"))
        XCTAssertEqual(fa, try Data(contentsOf: b.appendingPathComponent("model.safetensors")))
        XCTAssertNotEqual(fa, try Data(contentsOf: c.appendingPathComponent("model.safetensors")))
        XCTAssertEqual(try Data(contentsOf: a.appendingPathComponent("config.json")),
                       try Data(contentsOf: b.appendingPathComponent("config.json")))
        let m = try ModelLoader.load(path: a.path)
        XCTAssertEqual(m.stopTokens, [1001])
        XCTAssertEqual(m.bosToken, 1000)
        XCTAssertEqual(m.rope.style, .halves)
    }

    /// Bitwise the same logits at 1-4 threads, prefill and decode. Decode at 3 and 4 threads
    /// has fewer KV heads than threads (2), so each KV head's query heads are split between
    /// threads (`TransformerSteps.groupParts`); so is the Gemma 3 layout's.
    func testSameLogitsAtAnyThreadCount() throws {
        for preset in [SyntheticModel.Preset.tiny, .tinyGemma3] {
            let d = dir.appendingPathComponent(preset.rawValue)
            try SyntheticModel.write(config: preset.config, seed: 1, dtype: .f32, to: d, bos: 1000, eos: [1001])
            let m = try ModelLoader.load(path: d.path)
            let tokens: [Int32] = [3, 17, 400, 999, 5, 6, 7, 8, 9, 10]
            var outs: [[Float]] = []
            for threads in [1, 2, 3, 4] {
                let s = m.makeState(contextLength: 32, pool: ThreadPool(threads: threads))
                var all = try m.forward(tokens, state: s, logits: .all)
                for t: Int32 in [11, 12, 13] { all += try m.forward([t], state: s, logits: .last) }
                outs.append(all)
            }
            for i in 1..<outs.count { XCTAssertEqual(outs[0], outs[i], "\(preset.rawValue), \([1, 2, 3, 4][i]) threads") }
        }
    }

    func testGroupPartsSplitOnlyIdleThreadsWork() {
        // (group, items, threads) -> parts
        for (g, items, threads, parts) in [
            (4, 1, 2, 2), (4, 1, 4, 4), (4, 1, 8, 4), (4, 2, 2, 1), (4, 8, 2, 1), (8, 1, 3, 2), (3, 1, 2, 1), (6, 1, 2, 2),
            (1, 1, 2, 1), (17, 1, 2, 1), (16, 1, 2, 2), (4, 1, 1, 1), (2, 2, 3, 2), (4, 0, 2, 1),
        ] {
            XCTAssertEqual(TransformerSteps.groupParts(group: g, items: items, threads: threads), parts, "group \(g), \(items) items, \(threads) threads")
        }
    }

    func testChunkedPrefillMatchesOneChunkAndDecode() throws {
        let m = try ModelLoader.load(path: try tiny(seed: 2).path)
        let tokens: [Int32] = (0..<37).map { Int32(($0 * 131) % 1024) }
        let pool = ThreadPool(threads: 2)
        let whole = try m.forward(tokens, state: m.makeState(contextLength: 64, pool: pool, maxBatch: 64), logits: .all)
        let chunked = try m.forward(tokens, state: m.makeState(contextLength: 64, pool: pool, maxBatch: 8), logits: .all)
        let s = m.makeState(contextLength: 64, pool: pool)
        var stepwise: [Float] = []
        for t in tokens { stepwise += try m.forward([t], state: s, logits: .last) }
        let last = try m.forward(tokens, state: m.makeState(contextLength: 64, pool: pool, maxBatch: 8), logits: .last)
        XCTAssertEqual(last.count, 1024)
        for (name, other) in [("chunked", chunked), ("decode", stepwise), ("last", Array(whole.suffix(1024)))] {
            var num = 0.0, den = 0.0
            for (a, b) in zip(other, name == "last" ? last : whole) { num += Double(a - b) * Double(a - b); den += Double(b) * Double(b) }
            XCTAssertLessThan((num / den).squareRoot(), 1e-5, name)
        }
    }

    func testNarrowWeightsRunAtF32() throws {
        // bf16 weights widened exactly: the same model written as f32 from bf16-rounded
        // values would give identical products; here we check bf16 tracks f32 closely.
        let f = try ModelLoader.load(path: try tiny(seed: 4, dtype: .f32, name: "f").path)
        let b = try ModelLoader.load(path: try tiny(seed: 4, dtype: .bf16, name: "b").path)
        let pool = ThreadPool(threads: 2)
        let tokens: [Int32] = [1, 2, 3, 4, 5]
        let lf = try f.forward(tokens, state: f.makeState(contextLength: 8, pool: pool))
        let lb = try b.forward(tokens, state: b.makeState(contextLength: 8, pool: pool))
        var num = 0.0, den = 0.0
        for (x, y) in zip(lb, lf) { num += Double(x - y) * Double(x - y); den += Double(y) * Double(y) }
        XCTAssertLessThan((num / den).squareRoot(), 0.05)
        XCTAssertGreaterThan((num / den).squareRoot(), 0, "bf16 rounding must show")
    }

    func testShardedFolderGivesTheSameLogits() throws {
        let single = try tiny(seed: 8, name: "single")
        let sharded = dir.appendingPathComponent("sharded")
        try FileManager.default.createDirectory(at: sharded, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: single.appendingPathComponent("config.json"), to: sharded.appendingPathComponent("config.json"))
        let source = try SafetensorsFile(path: single.appendingPathComponent("model.safetensors").path)
        let names = source.entries.keys.sorted()
        var map: [String: String] = [:]
        for (i, part) in [names.filter { $0.contains("layers.0") }, names.filter { !$0.contains("layers.0") }].enumerated() {
            let shard = "model-0000\(i + 1)-of-00002.safetensors"
            let decls = part.map { SafetensorsWriter.Declaration(name: $0, dtype: .f32, shape: source.entries[$0]!.shape) }
            try SafetensorsWriter.write(path: sharded.appendingPathComponent(shard).path, declarations: decls) { d, start, chunk in
                let base = (source.file.base + source.entries[d.name]!.range.lowerBound).assumingMemoryBound(to: Float.self)
                for i in 0..<chunk.count { chunk[i] = base[start + i] }
            }
            for n in part { map[n] = shard }
        }
        try JSONSerialization.data(withJSONObject: ["metadata": [:], "weight_map": map])
            .write(to: sharded.appendingPathComponent("model.safetensors.index.json"))
        let a = try ModelLoader.load(path: single.path), b = try ModelLoader.load(path: sharded.path)
        let pool = ThreadPool(threads: 2)
        let tokens: [Int32] = [9, 8, 7]
        XCTAssertEqual(try a.forward(tokens, state: a.makeState(contextLength: 4, pool: pool), logits: .all),
                       try b.forward(tokens, state: b.makeState(contextLength: 4, pool: pool), logits: .all))

        // An index naming a shard that does not hold the tensor is an error naming both.
        map[names[0]] = "model-00001-of-00002.safetensors"
        map[names.first { $0.contains("layers.1") }!] = "model-00001-of-00002.safetensors"
        try JSONSerialization.data(withJSONObject: ["weight_map": map]).write(to: sharded.appendingPathComponent("model.safetensors.index.json"))
        XCTAssertThrowsError(try ModelLoader.load(path: sharded.path)) { e in
            guard case .missingTensor(let path, _)? = e as? ModelError else { return XCTFail("\(e)") }
            XCTAssertTrue(path.hasSuffix("model-00001-of-00002.safetensors"))
        }
    }

    func testStories260KLegacyAndVersion1AreTheSameModel() throws {
        let legacy = try ModelLoader.load(path: try fixture("stories260k/stories260K.bin"))
        let v1 = try ModelLoader.load(path: try fixture("stories260k/stories260K_v1.bin"))
        XCTAssertEqual(legacy.config, v1.config)
        XCTAssertEqual(legacy.config.hiddenSize, 64)
        XCTAssertEqual(legacy.config.intermediateSize, 172)
        XCTAssertEqual(legacy.config.kvHeads, 4)
        XCTAssertEqual(legacy.rope.style, .interleaved)
        let pool = ThreadPool(threads: 1)
        let tokens: [Int32] = [1, 403, 407, 261]
        XCTAssertEqual(try legacy.forward(tokens, state: legacy.makeState(contextLength: 8, pool: pool), logits: .all),
                       try v1.forward(tokens, state: v1.makeState(contextLength: 8, pool: pool), logits: .all))
    }
}

extension ModelTests {
    func testCancellationLeavesTheCompletedChunksInTheCache() throws {
        let m = try ModelLoader.load(path: try tiny(seed: 9).path)
        let s = m.makeState(contextLength: 64, pool: ThreadPool(threads: 1), maxBatch: 8)
        var checks = 0
        // Layers are checked once per chunk-layer: 2 layers x 2 chunks pass, then cancel.
        XCTAssertThrowsError(try m.forward(Array(repeating: 5, count: 20), state: s, logits: .last) {
            checks += 1
            return checks > 4
        }) { XCTAssertEqual($0 as? ForwardCancelled, ForwardCancelled(processed: 16)) }
        XCTAssertEqual(s.cache.length, 16)
        // The cache is usable at once: continuing gives what an uninterrupted run gives.
        let resumed = try m.forward(Array(repeating: 5, count: 4), state: s, logits: .last)
        let fresh = try m.forward(Array(repeating: 5, count: 20), state: m.makeState(contextLength: 64, pool: ThreadPool(threads: 1), maxBatch: 8))
        XCTAssertEqual(resumed, fresh)
    }
}

extension ModelTests {
    /// Narrow caches keep attention close to the f32 cache's: f16 within f16 rounding,
    /// q8_0 within 8-bit rounding; a q8_0 request on a head size not divisible by 32
    /// falls back to f16.
    func testNarrowKVCachesTrackTheF32Cache() throws {
        let m = try ModelLoader.load(path: try tiny(seed: 12).path)
        let pool = ThreadPool(threads: 2)
        let tokens: [Int32] = (0..<40).map { Int32(($0 * 37) % 1024) }
        func run(_ type: KVCacheType, stepwise: Bool) throws -> [Float] {
            let s = m.makeState(contextLength: 48, pool: pool, kvType: type)
            XCTAssertEqual(s.cache.type, type)
            if !stepwise { return try m.forward(tokens, state: s, logits: .all) }
            var out: [Float] = []
            for t in tokens { out += try m.forward([t], state: s, logits: .last) }
            return out
        }
        func rel(_ a: [Float], _ b: [Float]) -> Double {
            var n = 0.0, d = 0.0
            for (x, y) in zip(a, b) { n += Double(x - y) * Double(x - y); d += Double(y) * Double(y) }
            return (n / d).squareRoot()
        }
        for stepwise in [false, true] {
            let f32 = try run(.f32, stepwise: stepwise)
            let f16 = rel(try run(.f16, stepwise: stepwise), f32), q8 = rel(try run(.q8_0, stepwise: stepwise), f32)
            XCTAssertGreaterThan(f16, 0)
            XCTAssertLessThan(f16, 2e-3)
            XCTAssertLessThan(q8, 2e-2)
            XCTAssertGreaterThan(q8, f16)
        }
        XCTAssertEqual(m.makeState(contextLength: 8, pool: pool, kvType: .f16).cache.byteCount * 2,
                       m.makeState(contextLength: 8, pool: pool, kvType: .f32).cache.byteCount)
        let stories = try? ModelLoader.load(path: try fixture("stories260k/stories260K.bin"))
        if let s = stories { XCTAssertEqual(s.makeState(contextLength: 8, pool: pool, kvType: .q8_0).cache.type, .f16) }
    }
}
