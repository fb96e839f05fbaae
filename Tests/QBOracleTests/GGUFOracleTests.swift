import Foundation
import XCTest
import QBTestSupport
import QBFormats
import QBKernels
import QBModel

/// Our GGUF reader and dequantizers against the PyPI `gguf` package on a file it wrote.
final class GGUFOracleTests: XCTestCase {
    /// Types whose value is one product of stored numbers must match exactly; types with a
    /// multiply-add (an offset or min) within 2^-20 of the block's largest magnitude.
    static let exact: Set<String> = ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q5_0", "Q3_K", "Q6_K", "IQ4_NL", "IQ4_XS"]

    func testDequantizationMatchesGGUFPackage() throws {
        try Oracle.require(modules: ["gguf", "numpy"])
        let dir = try Oracle.temporaryDirectory("gguf-quants")
        defer { try? FileManager.default.removeItem(at: dir) }
        _ = try Oracle.script("gguf_quant_fixture.py", [dir.path])
        let file = try GGUFFile(path: dir.appendingPathComponent("quants.gguf").path)
        XCTAssertEqual(file.metadata["general.architecture"], .string("llama"))
        XCTAssertEqual(file.metadata["test.note"], .string("quantized by the gguf package"))
        XCTAssertEqual(file.metadata["test.ints"]?.array?.compactMap(\.int), [1, 2, 3])
        var seen: [String] = []
        for t in file.tensors {
            let m = try file.matrix(t.name, rows: t.dims[1], cols: t.dims[0])
            let ours = m.toFloats()
            let theirs = try Oracle.readFloats(dir.appendingPathComponent(t.name + ".f32").path)
            XCTAssertEqual(ours.count, theirs.count, t.name)
            let block = t.format.map { f -> Int in if case .ggml(let g) = f { return g.blockSize } else { return 1 } } ?? 1
            var worst: Float = 0
            for b in stride(from: 0, to: theirs.count, by: max(block, 32)) {
                let r = b..<min(b + max(block, 32), theirs.count)
                let scale = theirs[r].map { abs($0) }.max() ?? 0
                for i in r {
                    let e = abs(ours[i] - theirs[i])
                    if Self.exact.contains(t.typeName) {
                        XCTAssertEqual(ours[i], theirs[i], "\(t.name)[\(i)]")
                        if ours[i] != theirs[i] { break }
                    } else {
                        XCTAssertLessThanOrEqual(e, scale * 0x1p-20, "\(t.name)[\(i)]")
                    }
                    worst = max(worst, scale > 0 ? e / scale : 0)
                }
            }
            seen.append(t.typeName)
            print("gguf oracle \(t.typeName): worst error / block max = \(worst)")
        }
        XCTAssertEqual(Set(seen), ["F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "IQ4_NL", "IQ4_XS"])
    }
}
