import XCTest
import QBTestSupport
@testable import QBKernels
import CQBKernels

/// Interleaved Q4_0 decode on 16-row tiles (`qb_matvec_tiles.c`), from four-row and from
/// sixteen-row groups, against its definition (`Reference.q4TileMatvec`), bit for bit, on
/// fresh random inputs (seeded per test, the seed printed), on every kernel set; and batched
/// decode rows against single rows.
final class DecodeTileTests: XCTestCase, SeededKernelTestCase {
    lazy var rng = SeededGenerator(for: name)

    func randoms(_ n: Int, scale: Float = 1) -> [Float] { (0..<n).map { _ in Float.random(in: -scale...scale, using: &rng) } }

    /// A Q4_0 matrix of random values in groups of `group` rows (4 or 16), or in the layout
    /// the active kernel set chooses.
    func q40(rows: Int, cols: Int, group: Int32? = nil) throws -> Matrix {
        let pool = ThreadPool(threads: 1)
        let plain = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(.q4_0), pool: pool)
        guard let m = plain.interleavedForDecode(pool: pool, groupRows: group) else {
            throw XCTSkip("Q4_0 \(rows)x\(cols) has no interleaved layout")
        }
        if let group { XCTAssertEqual(m.unitRows, Int(group)) }
        return m
    }

    /// `n` activation rows quantized as decode quantizes them, with their offsets (in
    /// storage freed when the test ends), and as the reference reads them.
    struct Activations {
        let blocks: [UnsafePointer<qb_q8a>?]
        let offsets: [UnsafePointer<Int32>?]
        let reference: [Reference.ActivationBlocks]
    }

    func activations(_ n: Int, cols: Int) -> Activations {
        let nb = cols / 32
        var blocks: [UnsafePointer<qb_q8a>?] = [], offsets: [UnsafePointer<Int32>?] = []
        var reference: [Reference.ActivationBlocks] = []
        for _ in 0..<n {
            // Scales across three decades, as activations between layers differ.
            let x = randoms(cols, scale: [0.1, 3, 40][Int.random(in: 0..<3, using: &rng)])
            let a = UnsafeMutablePointer<qb_q8a>.allocate(capacity: nb)
            let o = UnsafeMutablePointer<Int32>.allocate(capacity: nb)
            addTeardownBlock { a.deallocate(); o.deallocate() }
            qb_quantize_q8a(x, a, Int64(cols))
            qb_q8a_offsets(a, Int64(nb), 32, -8, o)
            let all = UnsafeBufferPointer(start: a, count: nb)
            let quants = all.flatMap { block in withUnsafeBytes(of: block.qs) { Array($0.bindMemory(to: Int8.self)) } }
            blocks.append(UnsafePointer(a))
            offsets.append(UnsafePointer(o))
            reference.append(Reference.ActivationBlocks(scales: all.map(\.d), quants: quants))
        }
        return Activations(blocks: blocks, offsets: offsets, reference: reference)
    }

    /// The kernel of `w`'s layout over row groups `ranges` (calls of any extent: whole tiles,
    /// partial tiles, a single group), all activation rows at once.
    func tiles(_ w: Matrix, _ a: Activations, ranges: [Range<Int>]) -> [[Float]] {
        let n = a.blocks.count
        let outs = (0..<n).map { _ in FloatBuffer(count: w.rows) }
        for i in 0..<n { outs[i].pointer.update(repeating: .nan, count: w.rows) }
        let ys: [UnsafeMutablePointer<Float>?] = outs.map(\.pointer)
        for r in ranges {
            let (g0, g1) = (Int64(r.lowerBound), Int64(r.upperBound))
            if w.layout == .interleaved16 {
                qb_matvec_q4_0_x16(w.base, a.blocks, a.offsets, ys, Int64(n), g0, g1, Int64(w.cols))
            } else {
                qb_matvec_q4_0_tiles(w.base, a.blocks, a.offsets, ys, Int64(n), g0, g1, Int64(w.cols))
            }
        }
        return outs.map(\.array)
    }

    func testTilesMatchTheirDefinitionBitwise() throws {
        try onEveryKernelSet {
            // 72 rows: 18 groups, four full tiles and a partial one of two groups. 96 and
            // 32 columns: odd block counts (the vector loop takes two blocks at a time).
            for (rows, cols) in [(72, 512), (16, 2048), (4, 64), (20, 96), (8, 32)] {
                let w = try q40(rows: rows, cols: cols, group: 4)
                let groups = rows / 4
                for n in [1, 3, 7, 8, 14] {
                    let a = activations(n, cols: cols)
                    let expected = a.reference.map { Reference.q4TileMatvec(w, $0) }
                    let split = groups > 5 ? [0..<5, 5..<6, 6..<groups] : [0..<groups]
                    for ranges in [[0..<groups], split] {
                        let got = tiles(w, a, ranges: ranges)
                        for i in 0..<n {
                            XCTAssertEqual(got[i], expected[i], "\(rows)x\(cols), \(n) rows, row \(i), calls \(ranges)")
                        }
                    }
                }
            }
        }
    }

    /// Sixteen-row groups: the kernel equals the definition and the four-row tiles bit for
    /// bit (any group range, odd group counts, 1-14 activation rows, odd block counts, with
    /// and without its own prefetches), holds the same stored blocks and values as the plain
    /// rows, and prefill from it is bitwise prefill from them.
    func testSixteenRowGroupsMatchTheFourRowTilesBitwise() throws {
        try onEveryKernelSet {
            for (rows, cols) in [(80, 512), (16, 2048), (32, 96), (16, 32)] {
                let pool = ThreadPool(threads: 1)
                let plain = try Quantizer.quantize(randoms(rows * cols, scale: 2), rows: rows, cols: cols, to: .ggml(.q4_0), pool: pool)
                let w16 = try XCTUnwrap(plain.interleavedForDecode(pool: pool, groupRows: 16))
                let w4 = try XCTUnwrap(plain.interleavedForDecode(pool: pool, groupRows: 4))
                XCTAssertEqual(w16.layout, .interleaved16)
                assertHoldsPlainRows(w16, plain, ranges: [0..<rows, 3..<(rows - 5)], "\(rows)x\(cols)")
                let groups = rows / 16
                // Two to four rows take the AVX-512 kernel's pairs of groups (80 rows: two pairs
                // and a last group alone).
                for n in [1, 2, 3, 4, 7, 8, 14] {
                    let x = activations(n, cols: cols)
                    let expected = x.reference.map { Reference.q4TileMatvec(plain, $0) }
                    let four = tiles(w4, x, ranges: [0..<(rows / 4)])
                    // With the kernel's own prefetches and with the hardware's alone (one
                    // row; batches always prefetch), the CPU's choice restored after.
                    for prefetch in [Int32(1), 0] {
                        let chosen = qb_set_stream_prefetch(prefetch)
                        defer { qb_set_stream_prefetch(chosen) }
                        for ranges in groups > 2 ? [[0..<groups], [0..<1, 1..<2, 2..<groups]] : [[0..<groups]] {
                            let got = tiles(w16, x, ranges: ranges)
                            for i in 0..<n {
                                let at = "\(rows)x\(cols), \(n) rows, row \(i), calls \(ranges), prefetch \(prefetch)"
                                XCTAssertEqual(got[i], expected[i], at)
                                XCTAssertEqual(got[i], four[i], "\(at): the four-row tiles")
                            }
                        }
                    }
                }
                let count = 5, xs = randoms(count * cols)
                var y16 = [Float](repeating: .nan, count: count * rows), y = y16
                Linear.matmul(w16, xs, &y16, count: count, pool: ThreadPool(threads: 2))
                Linear.matmul(plain, xs, &y, count: count, pool: ThreadPool(threads: 2))
                XCTAssertEqual(y16, y, "\(rows)x\(cols): prefill")
            }
        }
    }

    /// The definition is a product of the quantized values: within float rounding of the
    /// Double reference over the same quantized activations.
    func testDefinitionMatchesTheReferenceProduct() throws {
        let rows = 32, cols = 1024
        let w = try q40(rows: rows, cols: cols)
        let x = randoms(cols, scale: 2)
        var a = [qb_q8a](repeating: qb_q8a(), count: cols / 32)
        qb_quantize_q8a(x, &a, Int64(cols))
        let quants = a.flatMap { block in withUnsafeBytes(of: block.qs) { Array($0.bindMemory(to: Int8.self)) } }
        let got = Reference.q4TileMatvec(w, Reference.ActivationBlocks(scales: a.map(\.d), quants: quants))
        let expected = Reference.matvec(w, x)
        let scale = max(expected.map { abs($0) }.max() ?? 1, 1e-6)
        XCTAssertLessThan(zip(got, expected).map { abs($0 - $1) }.max()! / scale, 2e-5)
    }

    /// Batched decode rows: row b of every output equals `matvec` of row b alone, bit for
    /// bit, for any batch size and thread count, over a fused mix of formats and layouts.
    func testBatchRowsEqualSingleRows() throws {
        try onEveryKernelSet {
            let cols = 512
            let q80 = try Quantizer.quantize(randoms(32 * cols), rows: 32, cols: cols, to: .ggml(.q8_0), pool: ThreadPool(threads: 1))
            let q50 = try Quantizer.quantize(randoms(12 * cols), rows: 12, cols: cols, to: .ggml(.q5_0), pool: ThreadPool(threads: 1))
            let q41 = try Quantizer.quantize(randoms(8 * cols), rows: 8, cols: cols, to: .ggml(.q4_1), pool: ThreadPool(threads: 1))
            let q51 = try Quantizer.quantize(randoms(12 * cols), rows: 12, cols: cols, to: .ggml(.q5_1), pool: ThreadPool(threads: 1))
            // Q4_K in sixteen-row groups: three groups of two super-blocks.
            let q4k = try Quantizer.quantize(randoms(48 * cols), rows: 48, cols: cols, to: .ggml(.q4_K), pool: ThreadPool(threads: 1))
            let q4k16 = try XCTUnwrap(q4k.interleavedForDecode(pool: ThreadPool(threads: 1)))
            XCTAssertEqual(q4k16.layout, .interleaved16)
            let ws: [Matrix] = [
                try q40(rows: 72, cols: cols), try q40(rows: 8, cols: cols), try q40(rows: 48, cols: cols, group: 16),
                q80.interleavedForDecode(pool: ThreadPool(threads: 1)) ?? q80,
                q50.interleavedForDecode(pool: ThreadPool(threads: 1)) ?? q50,
                q41.interleavedForDecode(pool: ThreadPool(threads: 1)) ?? q41,
                q51.interleavedForDecode(pool: ThreadPool(threads: 1)) ?? q51,
                try Quantizer.quantize(randoms(24 * cols), rows: 24, cols: cols, to: .ggml(.q4_K), pool: ThreadPool(threads: 1)),
                q4k16,
            ]
            for count in [1, 2, 3, 8, 13] {
                let x = randoms(count * cols, scale: 3)
                let alone: [[[Float]]] = (0..<count).map { b in
                    let outs = ws.map { FloatBuffer(count: $0.rows) }
                    Array(x[(b * cols)..<((b + 1) * cols)]).withUnsafeBufferPointer { xp in
                        Linear.matvec(ws, xp.baseAddress!, outs.map(\.pointer), pool: ThreadPool(threads: 1))
                    }
                    return outs.map(\.array)
                }
                for threads in [1, 2, 3] {
                    let outs = ws.map { FloatBuffer(count: count * $0.rows) }
                    Linear.matvecRows(ws, x, outs.map(\.pointer), count: count, pool: ThreadPool(threads: threads))
                    for (i, w) in ws.enumerated() {
                        for b in 0..<count {
                            XCTAssertEqual(
                                Array(outs[i].array[(b * w.rows)..<((b + 1) * w.rows)]), alone[b][i],
                                "matrix \(i), row \(b) of \(count), \(threads) threads")
                        }
                    }
                }
            }
        }
    }
}
