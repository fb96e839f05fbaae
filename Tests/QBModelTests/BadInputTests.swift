import Foundation
import QBFormats
import QBKernels
import XCTest
@testable import QBModel

/// Malformed model files end in a typed error that names the file and the field or tensor,
/// never in a crash.
final class BadInputTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    // MARK: llama2.c

    /// A well-formed legacy llama2.c file of the given header, with `extra` bytes appended.
    func llama2c(_ h: [Int32], floats: Int? = nil, extra: Int = 0) throws -> String {
        let (dim, hidden, layers, heads, kv, vocab, seq) = (Int(h[0]), Int(h[1]), Int(h[2]), Int(h[3]), Int(h[4]), abs(Int(h[5])), Int(h[6]))
        let hd = heads > 0 ? dim / heads : 0
        let n = floats ?? (vocab * dim + layers * (2 * dim + dim * dim * 2 + 2 * kv * hd * dim + 3 * dim * hidden) + dim + seq * hd)
        var d = Data()
        for v in h { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        d.append(Data(count: max(0, n) * 4 + extra))
        let url = dir.appendingPathComponent("m\(UUID().uuidString).bin")
        try d.write(to: url)
        return url.path
    }

    func expectError(_ path: String, file: StaticString = #filePath, line: UInt = #line, _ check: (ModelError) -> Bool) {
        do {
            _ = try ModelLoader.load(path: path)
            XCTFail("loaded a malformed model", file: file, line: line)
        } catch let e as ModelError {
            XCTAssertTrue(check(e), "unexpected error: \(e)", file: file, line: line)
            XCTAssertTrue(e.description.contains(path) || e.description.contains(URL(fileURLWithPath: path).lastPathComponent),
                          "error names the file: \(e)", file: file, line: line)
        } catch {
            XCTFail("untyped error \(error)", file: file, line: line)
        }
    }

    func testValidSmallLlama2cLoads() throws {
        let m = try ModelLoader.load(path: try llama2c([16, 24, 2, 4, 2, 32, 8]))
        XCTAssertEqual(m.config.kvHeads, 2)
        XCTAssertTrue(m.config.tied)
    }

    func testLlama2cTruncated() throws {
        let p = try llama2c([16, 24, 2, 4, 2, 32, 8], floats: 100)
        expectError(p) { if case .truncated(_, "tok_embeddings", _, _) = $0 { return true } else { return false } }
        let header = dir.appendingPathComponent("short.bin")
        try Data([1, 2, 3]).write(to: header)
        expectError(header.path) { if case .truncated = $0 { return true } else { return false } }
        let empty = dir.appendingPathComponent("empty.bin")
        try Data().write(to: empty)
        expectError(empty.path) { if case .truncated = $0 { return true } else { return false } }
    }

    func testLlama2cBadDimensions() throws {
        let cases: [([Int32], String)] = [
            ([0, 24, 2, 4, 2, 32, 8], "dim"),
            ([16, 24, -2, 4, 2, 32, 8], "n_layers"),
            ([18, 24, 2, 4, 2, 32, 8], "dim"),           // 18 not divisible by 4 heads
            ([16, 24, 2, 4, 3, 32, 8], "n_kv_heads"),    // 4 heads not a multiple of 3
            ([16, 24, 2, 4, 2, 1 << 30, 8], "vocab_size"),
            ([16, 24, 2, 4, 2, 32, 0], "seq_len"),
            ([16, 0x7fff_ffff, 2, 4, 2, 32, 8], "hidden_dim"),
        ]
        for (h, field) in cases {
            let p = try llama2c(h, floats: 16)
            expectError(p) { if case .invalidField(_, let f, _) = $0 { return f.contains(field) } else { return false } }
        }
    }

    func testLlama2cTrailingDataAndVersion() throws {
        let p = try llama2c([16, 24, 2, 4, 2, 32, 8], extra: 12)
        expectError(p) { if case .invalidField(_, "file size", _) = $0 { return true } else { return false } }
        var d = Data()
        for v: UInt32 in [0x616b_3432, 2] { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        d.append(Data(count: 300))
        let v2 = dir.appendingPathComponent("v2.bin")
        try d.write(to: v2)
        expectError(v2.path) { if case .unsupportedVersion(_, 2) = $0 { return true } else { return false } }
    }

    // MARK: safetensors

    func safetensors(header: String, data: Int, lengthOverride: UInt64? = nil) throws -> String {
        var d = Data()
        withUnsafeBytes(of: (lengthOverride ?? UInt64(header.utf8.count)).littleEndian) { d.append(contentsOf: $0) }
        d.append(Data(header.utf8))
        d.append(Data(count: data))
        let url = dir.appendingPathComponent("model.safetensors")
        try d.write(to: url)
        return url.path
    }

    func expectSafetensorsError(_ path: String, file: StaticString = #filePath, line: UInt = #line, _ check: (ModelError) -> Bool) {
        do {
            _ = try SafetensorsFile(path: path)
            XCTFail("parsed a malformed file", file: file, line: line)
        } catch let e as ModelError {
            XCTAssertTrue(check(e), "unexpected error: \(e)", file: file, line: line)
            XCTAssertTrue(e.description.contains(path), "names the file: \(e)", file: file, line: line)
        } catch { XCTFail("untyped error \(error)", file: file, line: line) }
    }

    func testSafetensorsHeaderErrors() throws {
        expectSafetensorsError(try safetensors(header: "{}", data: 0, lengthOverride: 1 << 60)) {
            if case .invalidField(_, "header length", _) = $0 { return true } else { return false }
        }
        expectSafetensorsError(try safetensors(header: "{}", data: 0, lengthOverride: 4096)) {
            if case .truncated = $0 { return true } else { return false }
        }
        expectSafetensorsError(try safetensors(header: "{not json", data: 0)) {
            if case .invalidField(_, "JSON header", _) = $0 { return true } else { return false }
        }
        expectSafetensorsError(try safetensors(header: "[1,2]", data: 0)) {
            if case .invalidField(_, "JSON header", _) = $0 { return true } else { return false }
        }
    }

    func testSafetensorsTensorErrors() throws {
        let cases: [(String, Int, (ModelError) -> Bool)] = [
            (#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#, 8, {
                if case .invalidTensor(_, "a", let r) = $0 { return r.contains("past the end") } else { return false } }),
            (#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,12]}}"#, 16, {
                if case .invalidTensor(_, "a", let r) = $0 { return r.contains("needs") } else { return false } }),
            (#"{"a":{"dtype":"Q9","shape":[4],"data_offsets":[0,16]}}"#, 16, {
                if case .unsupportedDType(_, "a", "Q9") = $0 { return true } else { return false } }),
            (#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}}"#, 16, {
                if case .invalidTensor(_, _, let r) = $0 { return r.contains("overlaps") } else { return false } }),
            (#"{"a":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}}"#, 16, {
                if case .invalidTensor(_, "a", _) = $0 { return true } else { return false } }),
            (#"{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,16]}}"#, 16, {
                if case .invalidTensor(_, "a", _) = $0 { return true } else { return false } }),
            (#"{"a":{"dtype":"F32","shape":[4],"data_offsets":[16,0]}}"#, 16, {
                if case .invalidTensor(_, "a", _) = $0 { return true } else { return false } }),
            (#"{"a":5}"#, 16, { if case .invalidTensor(_, "a", _) = $0 { return true } else { return false } }),
        ]
        for (header, data, check) in cases {
            expectSafetensorsError(try safetensors(header: header, data: data), check)
        }
    }

    // MARK: Hugging Face folders

    func tinyFolder(dtype: DType = .f32) throws -> URL {
        let d = dir.appendingPathComponent("hf-\(UUID().uuidString)")
        var c = SyntheticModel.Preset.tiny.config
        c.numHiddenLayers = 1
        try SyntheticModel.write(config: c, seed: 1, dtype: dtype, to: d, bos: nil, eos: [])
        return d
    }

    func editConfig(_ d: URL, _ edit: (inout [String: Any]) -> Void) throws {
        let url = d.appendingPathComponent("config.json")
        var obj = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as! [String: Any]
        edit(&obj)
        try JSONSerialization.data(withJSONObject: obj).write(to: url)
    }

    func testHuggingFaceConfigErrors() throws {
        let edits: [((inout [String: Any]) -> Void, String)] = [
            ({ $0.removeValue(forKey: "hidden_size") }, "hidden_size"),
            ({ $0["hidden_size"] = "wide" }, "hidden_size"),
            ({ $0["num_key_value_heads"] = 3 }, "num_key_value_heads"),
            ({ $0["vocab_size"] = 0 }, "vocab_size"),
            ({ $0["rope_scaling"] = ["rope_type": "yarn", "factor": 4] }, "rope_scaling"),
            ({ $0["hidden_act"] = "gelu" }, "hidden_act"),
        ]
        for (edit, field) in edits {
            let d = try tinyFolder()
            try editConfig(d, edit)
            expectError(d.path) { if case .invalidField(let p, let f, _) = $0 { return f.contains(field) && p.hasSuffix("config.json") } else { return false } }
        }
        let d = try tinyFolder()
        try Data("{oops".utf8).write(to: d.appendingPathComponent("config.json"))
        expectError(d.path) { if case .invalidField = $0 { return true } else { return false } }
    }

    func testHuggingFaceShapeMismatchAndMissingTensor() throws {
        let d = try tinyFolder()
        try editConfig(d, { $0["intermediate_size"] = 256 })
        expectError(d.path) { if case .shapeMismatch(_, let t, _, _) = $0 { return t.contains("mlp") } else { return false } }
        let e = try tinyFolder()
        try editConfig(e, { $0["num_hidden_layers"] = 2 })
        expectError(e.path) { if case .missingTensor(_, let t) = $0 { return t.hasPrefix("model.layers.1.") } else { return false } }
        expectError(dir.appendingPathComponent("nowhere").path) { if case .notFound = $0 { return true } else { return false } }
    }

    func testSafetensorsUnsupportedWeightDType() throws {
        let st = dir.appendingPathComponent("model.safetensors")
        _ = try safetensors(header: #"{"w":{"dtype":"I32","shape":[2,2],"data_offsets":[0,16]}}"#, data: 16)
        let f = try SafetensorsFile(path: st.path)
        XCTAssertThrowsError(try f.matrix("w", rows: 2, cols: 2)) {
            XCTAssertEqual($0 as? ModelError, .unsupportedDType(path: st.path, tensor: "w", dtype: "I32"))
        }
        XCTAssertThrowsError(try f.matrix("v", rows: 2, cols: 2)) {
            XCTAssertEqual($0 as? ModelError, .missingTensor(path: st.path, tensor: "v"))
        }
    }

    func testForwardRejectsBadTokensAndFullContext() throws {
        let m = try ModelLoader.load(path: try tinyFolder().path)
        let pool = ThreadPool(threads: 1)
        let s = m.makeState(contextLength: 4, pool: pool)
        XCTAssertThrowsError(try m.forward([5, 99999], state: s)) {
            XCTAssertEqual($0 as? ModelError, .invalidToken(id: 99999, vocabularySize: 1024))
        }
        XCTAssertThrowsError(try m.forward([-1], state: s))
        XCTAssertEqual(s.cache.length, 0, "a rejected call leaves the cache as it was")
        _ = try m.forward([1, 2, 3], state: s)
        XCTAssertThrowsError(try m.forward([4, 5], state: s)) {
            XCTAssertEqual($0 as? ModelError, .contextFull(needed: 5, capacity: 4))
        }
        XCTAssertEqual(s.cache.length, 3)
    }
}
