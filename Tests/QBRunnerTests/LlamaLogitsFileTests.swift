import Foundation
import XCTest
@testable import QBRunner

/// The reader of `llama-perplexity --kl-divergence-base` files on files written here: the
/// layout perplexity.cpp writes, and one clear error for a foreign or truncated file.
final class LlamaLogitsFileTests: XCTestCase {
    /// A file of n_ctx 8, n_vocab 3, one chunk: 3 scored rows of 2·2 + 4 uint16.
    func bytes(rows: Int = 3) -> Data {
        var d = Data("_logits_".utf8)
        func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        put(UInt32(8)); put(Int32(3)); put(Int32(1))
        for t in 0..<8 { put(Int32(t % 3)) }
        for _ in 0..<rows {
            withUnsafeBytes(of: Float(0.5).bitPattern.littleEndian) { d.append(contentsOf: $0) }
            withUnsafeBytes(of: Float(-3).bitPattern.littleEndian) { d.append(contentsOf: $0) }
            put(UInt16(0)); put(UInt16(2)); put(UInt16(4)); put(UInt16(0))
        }
        return d
    }

    func write(_ d: Data) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("qb-logits-\(UUID().uuidString)")
        try d.write(to: url)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }

    func testReadsTheLayoutPerplexityCppWrites() throws {
        let f = try LlamaLogitsFile(path: try write(bytes()))
        XCTAssertEqual([f.context, f.vocab, f.chunks, f.rowsPerChunk, f.rowWidth], [8, 3, 1, 3, 8])
        XCTAssertEqual(f.tokens, [0, 1, 2, 0, 1, 2, 0, 1])
        f.withRow(chunk: 0, row: 2) { scale, minLogProb, q in
            XCTAssertEqual(scale, 0.5)
            XCTAssertEqual(minLogProb, -3)
            XCTAssertEqual(Array(q), [0, 2, 4])
        }
    }

    func testForeignAndTruncatedFilesAreOneClearError() throws {
        for (data, expected) in [
            (Data("GGUF and more bytes than twenty".utf8), "_logits_"),
            (bytes(rows: 2), "truncated"),
            (bytes(rows: 4), "more than"),
            (Data(), "_logits_"),
        ] {
            let path = try write(data)
            XCTAssertThrowsError(try LlamaLogitsFile(path: path)) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains(path) && text.contains(expected), text)
            }
        }
    }

    /// The statistics on known rows: identical distributions give KL 0 and the same top.
    func testIdenticalDistributionsGiveZeroKL() {
        var k = LlamaKLDivergence()
        let logits: [Float] = [0, 1, 2]
        // log-probs of [0, 1, 2] with min_logit = 0: scale = 2/65535, q = (logit − 0)/scale.
        let lse = Float(log(exp(0.0) + exp(1.0) + exp(2.0)))
        let scale: Float = 2 / 65535
        let q: [UInt16] = [0, 32768, 65535]
        logits.withUnsafeBufferPointer { l in
            q.withUnsafeBufferPointer { b in k.add(logits: l, scale: scale, minLogProb: -lse, base: b, token: 2) }
        }
        XCTAssertEqual(k.count, 1)
        XCTAssertEqual(k.sameTop, 1)
        XCTAssertEqual(k.meanKL.value, 0, accuracy: 1e-4)
    }
}
