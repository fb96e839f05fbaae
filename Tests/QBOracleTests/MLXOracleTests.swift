import Foundation
import QBKernels
import QBModel
import QBSupport
import XCTest
import QBTestSupport

/// Our MLX-format quantizer and dequantizer against `mlx.core.quantize`/`dequantize`.
final class MLXOracleTests: XCTestCase {
    func testQuantizeAndDequantizeMatchMLX() throws {
        try Oracle.require(modules: ["mlx.core", "numpy"])
        let rows = 16, cols = 256
        var rng = SplitMix64(seed: 11)
        let values = (0..<(rows * cols)).map { _ in Float(rng.nextUnit() * 2 - 1) * (rng.nextUnit() < 0.05 ? 4 : 1) }
        for (bits, group) in [(4, 32), (4, 64), (4, 128), (8, 32), (8, 64), (8, 128)] {
            let dir = try Oracle.temporaryDirectory("mlx-\(bits)-\(group)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let input = dir.appendingPathComponent("w.f32")
            try values.withUnsafeBufferPointer { try Data(buffer: $0).write(to: input) }
            _ = try Oracle.script("mlx_quant.py", [input.path, "\(rows)", "\(cols)", "\(bits)", "\(group)", dir.path])
            let theirScales = try Oracle.readFloats(dir.appendingPathComponent("scales.f32").path)
            let theirBiases = try Oracle.readFloats(dir.appendingPathComponent("biases.f32").path)
            let theirDeq = try Oracle.readFloats(dir.appendingPathComponent("deq.f32").path)
            let qData = try Data(contentsOf: dir.appendingPathComponent("q.u32"))
            let theirQ = qData.withUnsafeBytes { Array($0.bindMemory(to: UInt32.self)) }

            let ours = try Quantizer.quantize(values, rows: rows, cols: cols, to: .mlx(.init(bits: bits, groupSize: group, scaleType: .f32)), pool: ThreadPool(threads: 2))
            let groups = rows * cols / group
            let ourScales = Array(UnsafeBufferPointer(start: ours.scales!.assumingMemoryBound(to: Float.self), count: groups))
            let ourBiases = Array(UnsafeBufferPointer(start: ours.biases!.assumingMemoryBound(to: Float.self), count: groups))
            XCTAssertEqual(ourScales, theirScales, "scales \(bits) bits, group \(group)")
            XCTAssertEqual(ourBiases, theirBiases, "biases \(bits) bits, group \(group)")

            // Quantized levels equal but for rounding ties (a value exactly halfway between two levels).
            let ourQ = Array(UnsafeBufferPointer(start: ours.base.assumingMemoryBound(to: UInt32.self), count: theirQ.count))
            let per = 32 / bits, mask = UInt32((1 << bits) - 1)
            var mismatches = 0
            for i in 0..<(rows * cols) {
                let a = (ourQ[i / per] >> UInt32(bits * (i % per))) & mask, b = (theirQ[i / per] >> UInt32(bits * (i % per))) & mask
                if a != b {
                    let g = i / group
                    let x = (values[i] - theirBiases[g]) / theirScales[g]
                    XCTAssertLessThan(abs(abs(x - x.rounded(.down)) - 0.5), 1e-3, "level \(i) differs off a tie")
                    mismatches += 1
                }
            }
            XCTAssertLessThan(mismatches, 3, "\(bits) bits, group \(group): \(mismatches) ties")

            // Our dequantization of MLX's own arrays equals mx.dequantize.
            let m = theirQ.withUnsafeBufferPointer { q in
                theirScales.withUnsafeBufferPointer { s in
                    theirBiases.withUnsafeBufferPointer { b in
                        Matrix(format: .mlx(.init(bits: bits, groupSize: group, scaleType: .f32)), rows: rows, cols: cols,
                               base: UnsafeRawPointer(q.baseAddress!), scales: UnsafeRawPointer(s.baseAddress!),
                               biases: UnsafeRawPointer(b.baseAddress!), owner: nil).toFloats()
                    }
                }
            }
            for i in 0..<m.count { XCTAssertEqual(m[i], theirDeq[i], accuracy: abs(theirDeq[i]) * 1e-6 + 1e-7, "dequantized \(i)") }
        }
    }
}
