import Foundation
import QBFormats
import QBKernels
import QBRunner
import QBSupport
import XCTest
@testable import QBModel

/// Malformed GGUF headers end in typed errors naming the file and the field or tensor.
final class GGUFBadInputTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-gguf-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    /// A little GGUF writer with knobs for every field, so each can be broken on purpose.
    struct Builder {
        var magic: UInt32 = GGUFFile.magic
        var version: UInt32 = 3
        var tensorCount: UInt64?
        var kvCount: UInt64?
        var kvs: [(String, UInt32, Data)] = [("general.architecture", 8, Builder.string("llama"))]
        var tensors: [(name: String, dims: [UInt64], type: UInt32, offset: UInt64)] = [("t", [32, 2], 0, 0)]
        var dataBytes = 256

        static func string(_ s: String, length: UInt64? = nil) -> Data {
            var d = Data()
            d.append(le: length ?? UInt64(s.utf8.count))
            d.append(contentsOf: Array(s.utf8))
            return d
        }

        func build() -> Data {
            var d = Data()
            d.append(le: magic)
            d.append(le: version)
            d.append(le: tensorCount ?? UInt64(tensors.count))
            d.append(le: kvCount ?? UInt64(kvs.count))
            for (k, t, v) in kvs {
                d.append(Builder.string(k))
                d.append(le: t)
                d.append(v)
            }
            for t in tensors {
                d.append(Builder.string(t.name))
                d.append(le: UInt32(t.dims.count))
                for x in t.dims { d.append(le: x) }
                d.append(le: t.type)
                d.append(le: t.offset)
            }
            d.append(Data(count: (32 - d.count % 32) % 32))
            d.append(Data(count: dataBytes))
            return d
        }
    }

    func check(_ b: Builder, file: StaticString = #filePath, line: UInt = #line, _ matches: (ModelError) -> Bool) throws {
        let url = dir.appendingPathComponent("m-\(UUID().uuidString).gguf")
        try b.build().write(to: url)
        do {
            _ = try ModelLoader.load(path: url.path)
            XCTFail("loaded a malformed file", file: file, line: line)
        } catch let e as ModelError {
            XCTAssertTrue(matches(e), "unexpected error \(e)", file: file, line: line)
            XCTAssertTrue(e.description.contains(url.path), "names the file: \(e)", file: file, line: line)
        }
    }

    func testValidFileParses() throws {
        let url = dir.appendingPathComponent("ok.gguf")
        try Builder().build().write(to: url)
        let f = try GGUFFile(path: url.path)
        XCTAssertEqual(f.tensors.count, 1)
        XCTAssertEqual(f.metadata["general.architecture"], .string("llama"))
    }

    func testHeaderErrors() throws {
        var b = Builder(); b.version = 7
        try check(b) { if case .unsupportedVersion(_, 7) = $0 { return true } else { return false } }
        b = Builder(); b.tensorCount = 1 << 40
        try check(b) { if case .invalidField(_, "tensor_count", _) = $0 { return true } else { return false } }
        b = Builder(); b.kvCount = UInt64.max
        try check(b) { if case .invalidField(_, "metadata_kv_count", _) = $0 { return true } else { return false } }
        b = Builder(); b.kvCount = 40  // more keys than the file holds
        try check(b) { if case .truncated = $0 { return true }; if case .invalidField = $0 { return true }; return false }
    }

    func testMetadataErrors() throws {
        var b = Builder(); b.kvs.append(("x", 8, Builder.string("abc", length: 1 << 50)))
        try check(b) { if case .invalidField(_, "x", let r) = $0 { return r.contains("past the end") } else { return false } }
        b = Builder(); b.kvs.append(("y", 99, Data([1, 2, 3, 4])))
        try check(b) { if case .invalidField(_, "y", let r) = $0 { return r.contains("unknown value type") } else { return false } }
        var arr = Data(); arr.append(le: UInt32(4)); arr.append(le: UInt64(1) << 60)
        b = Builder(); b.kvs.append(("z", 9, arr))
        try check(b) { if case .invalidField(_, "z", let r) = $0 { return r.contains("array count") } else { return false } }
        var nested = Data(); nested.append(le: UInt32(9))
        nested.append(le: UInt64(1)); nested.append(le: UInt32(9)); nested.append(le: UInt64(1)); nested.append(le: UInt32(9)); nested.append(le: UInt64(1))
        b = Builder(); b.kvs.append(("n", 9, nested))
        try check(b) { if case .invalidField(_, "n", _) = $0 { return true } else { return false } }
        b = Builder(); b.kvs = [("general.architecture", 8, Builder.string("gpt-neox"))]
        try check(b) { if case .invalidField(_, "general.architecture", _) = $0 { return true } else { return false } }
    }

    func testTensorErrors() throws {
        var b = Builder(); b.tensors[0].type = 77
        try check(b) { if case .unsupportedDType(_, "t", _) = $0 { return true } else { return false } }
        b = Builder(); b.tensors[0].offset = 1 << 40
        try check(b) { if case .invalidTensor(_, "t", let r) = $0 { return r.contains("past the end") } else { return false } }
        b = Builder(); b.tensors[0].offset = 4
        try check(b) { if case .invalidTensor(_, "t", let r) = $0 { return r.contains("aligned") } else { return false } }
        b = Builder(); b.tensors.append(("u", [32], 0, 128)); b.tensors[0].dims = [32, 2]
        b.tensors.append(("v", [32], 0, 0))
        try check(b) { if case .invalidTensor(_, _, let r) = $0 { return r.contains("overlaps") } else { return false } }
        b = Builder(); b.tensors[0].dims = [1 << 30, 1 << 30, 1 << 30]
        try check(b) { if case .invalidTensor(_, "t", _) = $0 { return true } else { return false } }
        b = Builder(); b.tensors[0].dims = [1, 2, 3, 4, 5]
        try check(b) { if case .invalidTensor(_, "t", let r) = $0 { return r.contains("dimensions") } else { return false } }
        b = Builder(); b.tensors[0] = ("t", [48, 2], 2, 0)  // Q4_0 rows must be whole blocks of 32
        try check(b) { if case .invalidTensor(_, "t", let r) = $0 { return r.contains("block") } else { return false } }
        b = Builder(); b.tensors.append(("t", [32], 0, 128))
        try check(b) { if case .invalidTensor(_, "t", let r) = $0 { return r.contains("twice") } else { return false } }
    }

    func testModelLevelErrors() throws {
        // A llama file without its tensors names the first one it misses.
        var b = Builder()
        b.kvs += [("llama.embedding_length", 4, le(UInt32(32))), ("llama.attention.head_count", 4, le(UInt32(4))),
                  ("llama.block_count", 4, le(UInt32(1))), ("llama.feed_forward_length", 4, le(UInt32(64)))]
        b.tensors = [("token_embd.weight", [32, 10], 0, 0)]
        b.dataBytes = 2048
        try check(b) { if case .missingTensor(_, "blk.0.attn_norm.weight") = $0 { return true } else { return false } }
        b.kvs[1] = ("llama.embedding_length", 4, le(UInt32(0)))
        try check(b) { if case .invalidField(_, "llama.embedding_length", _) = $0 { return true } else { return false } }
        b.kvs[1] = ("llama.embedding_length", 8, Builder.string("wide"))
        try check(b) { if case .invalidField(_, "llama.embedding_length", _) = $0 { return true } else { return false } }
    }

    func le(_ v: UInt32) -> Data { var d = Data(); d.append(le: v); return d }

    /// Random corruptions of a valid file never crash the reader.
    func testRandomCorruptionNeverCrashes() throws {
        let good = Builder().build()
        var rng = SplitMix64(seed: 77)
        for i in 0..<400 {
            var d = good
            for _ in 0..<(1 + Int(rng.next() % 4)) {
                let at = Int(rng.next() % UInt64(min(d.count, 160)))
                d[at] = UInt8(truncatingIfNeeded: rng.next())
            }
            if i % 7 == 0 { d = d.prefix(Int(rng.next() % UInt64(d.count))) }
            let url = dir.appendingPathComponent("fuzz.gguf")
            try d.write(to: url)
            _ = try? ModelLoader.load(path: url.path)
        }
    }
}

extension Data {
    mutating func append<T: FixedWidthInteger>(le v: T) {
        Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) }
    }
}

/// #18.5 / #22.5: metadata arrays cost at most about their bytes in the file, held compactly
/// (the A1/A2 cases of #22: 20 million int32 took 950 MB, 10 million empty strings 424 MB).
final class GGUFAmplificationTests: XCTestCase {
    func testMetadataArraysCostAboutTheirBytesInTheFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-gguf-amp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let n = 4_000_000
        let cases: [(String, GGUFValue, bytesInFile: Int)] = [
            ("ints", .array(.int32, (0..<n).map { .int32(Int32($0)) }), n * 4),
            ("empties", .array(.string, Array(repeating: .string(""), count: n)), n * 8),
            ("bools", .array(.bool, (0..<n).map { .bool($0 % 3 == 0) }), n),
        ]
        for (name, value, bytesInFile) in cases {
            var w = GGUFWriter()
            w.add("general.architecture", .string("llama"))
            w.add("hostile.\(name)", value)
            let url = dir.appendingPathComponent(name + ".gguf")
            try w.write(to: url)
            let before = try XCTUnwrap(MemoryStats.current().allocatedBytes, "tcmalloc's counters")
            let file = try GGUFFile(path: url.path)
            let held = try XCTUnwrap(MemoryStats.current().allocatedBytes) - before
            print("\(name): \(bytesInFile) bytes in the file, \(held) bytes held once read")
            XCTAssertLessThan(held, bytesInFile, "\(name) costs more in memory than in the file")
            // Read back element by element, as written.
            XCTAssertEqual(file.metadata["hostile.\(name)"], value, name)
            let a = try XCTUnwrap(file.metadata["hostile.\(name)"]?.array)
            XCTAssertEqual(a.count, n)
            XCTAssertEqual(a[n - 1], value.array?[n - 1])
        }
        // Real vocabulary arrays, and the strings in them, come back as written.
        var w = GGUFWriter()
        let tokens: [GGUFValue] = (0..<150_000).map { .string($0 % 7 == 0 ? "" : "tok\($0)▁é") }
        w.add("tokenizer.ggml.scores", .array(.float32, (0..<150_000).map { .float32(Float($0) * -0.5) }))
        w.add("tokenizer.ggml.tokens", .array(.string, tokens))
        let url = dir.appendingPathComponent("vocab.gguf")
        try w.write(to: url)
        let file = try GGUFFile(path: url.path)
        XCTAssertEqual(file.metadata["tokenizer.ggml.tokens"]?.array.map(Array.init), tokens)
        XCTAssertEqual(file.metadata["tokenizer.ggml.scores"]?.array?[3].double, -1.5)
    }

    func testStringArraysThatRunPastTheFileAreRefused() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-gguf-amp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var w = GGUFWriter()
        w.add("general.architecture", .string("llama"))
        w.add("hostile.strings", .array(.string, [.string("abc"), .string("defgh")]))
        let url = dir.appendingPathComponent("s.gguf")
        try w.write(to: url)
        var bytes = try Data(contentsOf: url)
        // The second string's length (after key, type, element type, count, "abc"): claim 2^62.
        guard let at = bytes.range(of: Data("abc".utf8))?.upperBound else { return XCTFail("layout") }
        bytes.replaceSubrange(at..<(at + 8), with: withUnsafeBytes(of: UInt64(1 << 62).littleEndian) { Data($0) })
        try bytes.write(to: url)
        XCTAssertThrowsError(try GGUFFile(path: url.path)) { error in
            XCTAssertTrue("\(error)".contains("hostile.strings"), "\(error)")
            XCTAssertTrue("\(error)".contains("runs past the end"), "\(error)")
        }
    }
}
