#if canImport(Glibc)
import Glibc
#endif
import XCTest
import QBTestSupport
@testable import QBKernels
import CQBKernels

/// The quantized kernels against their references on fresh random inputs (seeded per test, the seed printed).
final class QuantKernelTests: XCTestCase, SeededKernelTestCase {
    lazy var rng = SeededGenerator(for: name)

    func randoms(_ n: Int, scale: Float = 1) -> [Float] { (0..<n).map { _ in Float.random(in: -scale...scale, using: &rng) } }

    func relativeError(_ a: [Float], _ b: [Float]) -> Float {
        let scale = max(b.map { abs($0) }.max() ?? 1, 1e-6)
        return zip(a, b).map { abs($0 - $1) }.max()! / scale
    }

    static let producible: [WeightFormat] = [
        .ggml(.q8_0), .ggml(.q4_0), .ggml(.q4_1), .ggml(.q5_0), .ggml(.q5_1), .ggml(.q4_K),
        .mlx(.init(bits: 4, groupSize: 32, scaleType: .f32)), .mlx(.init(bits: 4, groupSize: 64, scaleType: .f32)),
        .mlx(.init(bits: 4, groupSize: 128, scaleType: .f32)), .mlx(.init(bits: 8, groupSize: 32, scaleType: .f32)),
        .mlx(.init(bits: 8, groupSize: 64, scaleType: .f32)), .mlx(.init(bits: 8, groupSize: 128, scaleType: .f32)),
        .dense(.f16), .dense(.bf16),
    ]

    /// Random but valid blocks of a GGML type (every f16 scale a small normal number; random
    /// bits would make NaNs), so every bit pattern of the quants and scales is exercised.
    func randomBlocks(_ t: GGMLType, rows: Int, cols: Int) -> Matrix {
        let bytes = rows * cols / t.blockSize * t.blockBytes
        let buf = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        addTeardownBlock { buf.deallocate() }
        for i in 0..<bytes { buf.storeBytes(of: UInt8.random(in: 0...255, using: &rng), toByteOffset: i, as: UInt8.self) }
        let halfOffsets: [Int]
        switch t {
        case .q6_K: halfOffsets = [208]
        case .q3_K: halfOffsets = [108]
        case .q2_K: halfOffsets = [80, 82]
        case .q5_0, .iq4_nl, .iq4_xs: halfOffsets = [0]
        default: halfOffsets = [0, 2]
        }
        for b in 0..<(bytes / t.blockBytes) {
            for o in halfOffsets {
                let v = Float16(Float.random(in: 0.001...0.01, using: &rng) * (Bool.random(using: &rng) ? 1 : -1))
                buf.storeBytes(of: v.bitPattern, toByteOffset: b * t.blockBytes + o, as: UInt16.self)
            }
        }
        return Matrix(format: .ggml(t), rows: rows, cols: cols, base: UnsafeRawPointer(buf), owner: nil)
    }

    func matvec(_ w: Matrix, _ x: [Float], threads: Int) -> [Float] {
        var y = [Float](repeating: .nan, count: w.rows)
        Linear.matvec(w, x, &y, pool: ThreadPool(threads: threads))
        return y
    }

    func testQuantizedMatvecMatchesReference() throws {
        try onEveryKernelSet {
            let rows = 37, cols = 512
            for format in Self.producible {
                let w = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: format, pool: ThreadPool(threads: 2))
                let x = randoms(cols, scale: 3)
                let expected = Reference.matvec(w, x)
                let y1 = matvec(w, x, threads: 1), y2 = matvec(w, x, threads: 2)
                XCTAssertLessThan(relativeError(y1, expected), 2e-5, format.name)
                XCTAssertEqual(y1, y2, "\(format.name): same result at any thread count")
            }
        }
    }

    /// Types with no quantizer here (they come from llama.cpp files): random but valid
    /// blocks, so every bit pattern of the quants and scales is exercised.
    func testUnproducibleTypesMatchReference() {
        onEveryKernelSet {
            for (t, cols) in [GGMLType.q2_K, .q3_K, .q5_K, .q6_K, .iq4_nl, .iq4_xs, .q4_K, .q5_0, .q5_1].map({ ($0, 512) })
                + [(.q6_K, 17408), (.q4_K, 17408), (.q3_K, 17408), (.q2_K, 2816)]
            {
                let rows = 9
                let w = randomBlocks(t, rows: rows, cols: cols)
                let x = randoms(cols)
                XCTAssertLessThan(relativeError(matvec(w, x, threads: 2), Reference.matvec(w, x)), 2e-5, t.name)
            }
        }
    }

    /// Matrices that read one input (Q, K, V; gate, up) share one quantization of it and one
    /// parallel section: each output equals its own product's, bitwise, at any thread count,
    /// whatever the mix of formats and layouts.
    func testFusedMatvecEqualsSeparateProducts() throws {
        try onEveryKernelSet {
            let cols = 512
            let q40 = try Quantizer.quantize(randoms(64 * cols), rows: 64, cols: cols, to: .ggml(.q4_0), pool: ThreadPool(threads: 1))
            let ws: [Matrix] = [
                q40.interleavedForDecode(pool: ThreadPool(threads: 1))!,
                randomBlocks(.q4_K, rows: 48, cols: cols),
                randomBlocks(.q6_K, rows: 20, cols: cols),
                try Quantizer.quantize(randoms(36 * cols), rows: 36, cols: cols, to: .ggml(.q8_0), pool: ThreadPool(threads: 1)),
                try Quantizer.quantize(
                    randoms(40 * cols), rows: 40, cols: cols, to: .mlx(.init(bits: 4, groupSize: 64, scaleType: .f32)),
                    pool: ThreadPool(threads: 1)),
            ]
            let x = randoms(cols, scale: 3)
            let separate = ws.map { matvec($0, x, threads: 1) }
            for threads in [1, 2, 3] {
                let outs = ws.map { FloatBuffer(count: $0.rows) }
                Linear.matvec(ws, x, outs.map(\.pointer), pool: ThreadPool(threads: threads))
                for i in ws.indices { XCTAssertEqual(outs[i].array, separate[i], "matrix \(i) at \(threads) threads") }
            }
        }
    }

    /// The huge-page copy decode streams from holds the same bytes, 2 MiB aligned; matrices
    /// smaller than a huge page are not copied.
    func testResidentCopyIsTheSameMatrix() throws {
        XCTAssertNil(randomBlocks(.q4_K, rows: 8, cols: 512).residentCopy(pool: ThreadPool(threads: 1)))
        let w = randomBlocks(.q4_K, rows: 1024, cols: 4096)
        guard let copy = w.residentCopy(pool: ThreadPool(threads: 2)) else { return XCTFail("no copy") }
        XCTAssertNotEqual(copy.base, w.base)
        XCTAssertEqual(Int(bitPattern: copy.base) % (2 << 20), 0)
        XCTAssertEqual(copy.toFloats(), w.toFloats())
        let x = randoms(4096)
        XCTAssertEqual(matvec(copy, x, threads: 2), matvec(w, x, threads: 2))

        // MLX values end where their tensor ends (here at an inaccessible page): the copy
        // takes the values alone, its scales and biases stay where they are.
        let m = try Quantizer.quantize(
            randoms(1024 * 2048), rows: 1024, cols: 2048, to: .mlx(.init(bits: 8, groupSize: 64, scaleType: .f32)),
            pool: ThreadPool(threads: 2))
        let n = m.rows * m.rowBytes, page = 4096
        guard let map = mmap(nil, n + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), map != MAP_FAILED else {
            return XCTFail("mmap")
        }
        addTeardownBlock { munmap(map, n + page) }
        XCTAssertEqual(mprotect(map + n, page, PROT_NONE), 0)
        map.copyMemory(from: m.base, byteCount: n)
        let fenced = Matrix(format: m.format, rows: m.rows, cols: m.cols, base: map, scales: m.scales, biases: m.biases, owner: m.owner)
        guard let mcopy = fenced.residentCopy(pool: ThreadPool(threads: 2)) else { return XCTFail("no MLX copy") }
        XCTAssertEqual(mcopy.toFloats(), m.toFloats())
    }

    /// Batched decode of the super-block formats in plain rows: each activation row's outputs
    /// bit for bit those of `matvec` alone, for batches that take Q6_K's four-row passes
    /// whole and in part, at any thread count.
    func testKQuantBatchRowsEqualSingleRows() {
        onEveryKernelSet {
            let rows = 20, cols = 512
            for t in [GGMLType.q2_K, .q3_K, .q4_K, .q5_K, .q6_K, .iq4_xs] {
                let w = randomBlocks(t, rows: rows, cols: cols)
                for count in [2, 5, 7] {
                    let x = randoms(count * cols, scale: 4)
                    for threads in [1, 2] {
                        var batched = [Float](repeating: .nan, count: count * rows)
                        Linear.matvecRows(w, x, &batched, count: count, pool: ThreadPool(threads: threads))
                        for b in 0..<count {
                            XCTAssertEqual(
                                Array(batched[(b * rows)..<((b + 1) * rows)]),
                                matvec(w, Array(x[(b * cols)..<((b + 1) * cols)]), threads: 1),
                                "\(t.name): row \(b) of \(count), \(threads) threads")
                        }
                    }
                }
            }
        }
    }

    /// Decode of the super-block formats (Q2_K to Q6_K, IQ4_XS) against activations
    /// quantized per 256 (q8k): the AVX2 and AVX-512 rows equal the portable C rows, and the
    /// activations are what the reference quantizer makes.
    func testKQuantRowsMatchPortableRows() {
        onEveryKernelSet {
            for t in [GGMLType.q2_K, .q3_K, .q4_K, .q5_K, .q6_K, .iq4_xs] {
                for cols in [256, 2048, 17408] {
                    let rows = 5
                    let w = randomBlocks(t, rows: rows, cols: cols)
                    let x = randoms(cols, scale: 4)
                    var xk = [qb_q8k](repeating: qb_q8k(), count: cols / 256)
                    qb_quantize_q8k(x, &xk, Int64(cols))
                    let widened = xk.flatMap { b in withUnsafeBytes(of: b.qs) { $0.map { Float(Int8(bitPattern: $0)) * b.d } } }
                    XCTAssertEqual(widened, Reference.quantizeActivations(x, block: 256), "\(t.name) activations")
                    let fast = matvec(w, x, threads: 2)
                    let portable = (0..<rows).map { r in
                        qb_dot_kquant_portable(t.rawValue, w.base + r * w.format.rowBytes(cols: cols), xk, Int64(cols))
                    }
                    XCTAssertLessThan(relativeError(fast, portable), 1e-5, "\(t.name) \(cols)")
                }
            }
        }
    }

    /// The four-row interleaved decode layout: same values (dequantized and as stored
    /// blocks), products equal to the reference at any thread count, prefill unchanged.
    func testInterleavedLayoutMatchesPlainRows() throws {
        try onEveryKernelSet {
            let rows = 36, cols = 320
            var cases: [(String, Matrix)] = []
            for t in [GGMLType.q4_0, .q4_1, .q5_0, .q5_1, .q8_0] {
                let plain = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(t), pool: ThreadPool(threads: 2))
                if t == .q8_0 {
                    // GGML's quantizer never writes -128; files may. |w| must stay exact for it.
                    let raw = UnsafeMutableRawPointer(mutating: plain.base)
                    for b in stride(from: 0, to: rows * cols / 32, by: 3) { raw.storeBytes(of: -128, toByteOffset: b * 34 + 2 + b % 32, as: Int8.self) }
                }
                cases.append((t.name, plain))
            }
            // Minimums of either sign, every pattern of the fifth bits.
            for t in [GGMLType.q4_1, .q5_1] { cases.append(("\(t.name) random blocks", randomBlocks(t, rows: rows, cols: cols))) }
            for (name, plain) in cases {
                guard let packed = plain.interleavedForDecode(pool: ThreadPool(threads: 2)) else { return XCTFail("\(name) not interleaved") }
                XCTAssertEqual(packed.layout, .interleaved4)
                assertHoldsPlainRows(packed, plain, name)
                for scale: Float in [0.01, 3, 100] {
                    let x = randoms(cols, scale: scale)
                    let expected = Reference.matvec(plain, x)
                    let y1 = matvec(packed, x, threads: 1), y2 = matvec(packed, x, threads: 2)
                    XCTAssertLessThan(relativeError(y1, expected), 2e-5, name)
                    XCTAssertEqual(y1, y2, "\(name): same result at any thread count")
                }
                let count = 3, x = randoms(count * cols)
                var y = [Float](repeating: .nan, count: count * rows)
                Linear.matmul(packed, x, &y, count: count, pool: ThreadPool(threads: 2))
                XCTAssertLessThan(relativeError(y, Reference.matmul(plain, x, count: count)), 1e-5, name)
            }
            let odd = try Quantizer.quantize(randoms(6 * 64), rows: 6, cols: 64, to: .ggml(.q4_0), pool: ThreadPool(threads: 1))
            XCTAssertNil(odd.interleavedForDecode(pool: ThreadPool(threads: 1)), "rows not a multiple of 4 stay plain")
            let k = try Quantizer.quantize(randoms(4 * 256), rows: 4, cols: 256, to: .ggml(.q4_K), pool: ThreadPool(threads: 1))
            XCTAssertNil(k.interleavedForDecode(pool: ThreadPool(threads: 1)), "Q4_K rows not a multiple of 16 stay plain")
            XCTAssertEqual(
                randomBlocks(.q6_K, rows: 16, cols: 256).interleavedForDecode(pool: ThreadPool(threads: 1))?.layout,
                KernelSet.active == .portable ? nil : .interleaved16, "Q6_K: sixteen-row groups on the AVX-512 and AVX2 sets")
        }
    }

    /// The one-row decode streams the prefetch switch governs (Q8_0 in four-row groups, Q4_K,
    /// Q6_K and 4-bit MLX in sixteen-row ones; sixteen-row Q4_0 in `DecodeTileTests`):
    /// bitwise the same with the kernels' own prefetches and without (the avx2 set's Q4_K and
    /// Q6_K then with far L2 hints only), on every kernel set,
    /// and within float rounding of the reference; the CPU's choice restored after.
    func testOneRowStreamsAreTheSameWithAndWithoutPrefetches() throws {
        try onEveryKernelSet {
            let pool = ThreadPool(threads: 1)
            var cases: [(String, Matrix)] = [
                ("Q8_0", try Quantizer.quantize(randoms(36 * 320), rows: 36, cols: 320, to: .ggml(.q8_0), pool: pool)),
                ("Q4_K", randomBlocks(.q4_K, rows: 48, cols: 768)),
                ("MLX 4-bit g64", narrowed(try Quantizer.quantize(
                    randoms(48 * 512), rows: 48, cols: 512, to: .mlx(.init(bits: 4, groupSize: 64, scaleType: .f32)), pool: pool), to: .bf16)),
            ]
            // Q6_K's sixteen-row groups, which the vector sets repack into (the portable set reads
            // them but does not repack).
            if KernelSet.active != .portable { cases.append(("Q6_K", randomBlocks(.q6_K, rows: 48, cols: 768))) }
            for (name, plain) in cases {
                let packed = try XCTUnwrap(plain.interleavedForDecode(pool: pool), name)
                let x = randoms(plain.cols, scale: 3)
                var got: [[Float]] = []
                for prefetch in [Int32(1), 0] {
                    let chosen = qb_set_stream_prefetch(prefetch)
                    defer { qb_set_stream_prefetch(chosen) }
                    got.append(matvec(packed, x, threads: 1))
                }
                XCTAssertEqual(got[0], got[1], "\(name): bitwise the same either way")
                XCTAssertLessThan(relativeError(got[1], Reference.matvec(plain, x)), 2e-5, "\(name): without prefetches")
            }
        }
    }

    /// The four-row layout's decode, alone and batched, at the values' extremes: every value
    /// the format's largest (Q5's fifth bits all set; Q8_0's -128) against activations that
    /// all quantize to +127, to -127, or alternate by block, where a 16-bit partial sum
    /// carried a step too far would wrap (a Q5 block's 32 products are 31 x 127 each, a pair
    /// of Q8_0's 2 x 128 x 127).
    func testInterleavedLayoutAtTheExtremes() throws {
        try onEveryKernelSet {
            let rows = 16, cols = 256, count = 3
            let x: [Float] = (0..<count).flatMap { r in
                (0..<cols).map { c -> Float in r == 0 ? 1 : r == 1 ? -1 : (c / 32) % 2 == 0 ? 1 : -1 }
            }
            for t in [GGMLType.q4_0, .q4_1, .q5_0, .q5_1, .q8_0] {
                let plain = randomBlocks(t, rows: rows, cols: cols)
                let raw = UnsafeMutableRawPointer(mutating: plain.base)
                let scalesBytes = t == .q4_1 || t == .q5_1 ? 4 : 2
                let extreme: UInt8 = t == .q8_0 ? 0x80 : 0xFF
                for b in 0..<(rows * cols / 32) {
                    for i in scalesBytes..<t.blockBytes { raw.storeBytes(of: extreme, toByteOffset: b * t.blockBytes + i, as: UInt8.self) }
                }
                let packed = try XCTUnwrap(plain.interleavedForDecode(pool: ThreadPool(threads: 1)))
                let out = FloatBuffer(count: count * rows)
                Linear.matvecRows([packed], x, [out.pointer], count: count, pool: ThreadPool(threads: 1))
                for r in 0..<count {
                    let xr = Array(x[(r * cols)..<((r + 1) * cols)])
                    let alone = matvec(packed, xr, threads: 1)
                    XCTAssertEqual(Array(out.array[(r * rows)..<((r + 1) * rows)]), alone, "\(t.name), activation row \(r): batched as alone")
                    XCTAssertLessThan(relativeError(alone, Reference.matvec(plain, xr)), 2e-5, "\(t.name), activation row \(r)")
                }
            }
        }
    }

    /// Q4_K's sixteen-row decode layout on random blocks (every bit of the 6-bit scales and
    /// minimums, every nibble): the same stored blocks and values back, products equal to the
    /// portable row kernel's at any thread count and alone or batched, prefill bitwise the
    /// plain layout's.
    func testQ4KSixteenRowLayoutMatchesPlainRows() throws {
        try onEveryKernelSet {
            let rows = 48, cols = 768
            let plain = randomBlocks(.q4_K, rows: rows, cols: cols)
            guard let packed = plain.interleavedForDecode(pool: ThreadPool(threads: 2)) else { return XCTFail("Q4_K not interleaved") }
            XCTAssertEqual(packed.layout, .interleaved16)
            assertHoldsPlainRows(packed, plain, ranges: [0..<rows, 5..<37], "Q4_K")
            for scale: Float in [0.01, 4, 100] {
                let x = randoms(cols, scale: scale)
                var xk = [qb_q8k](repeating: qb_q8k(), count: cols / 256)
                qb_quantize_q8k(x, &xk, Int64(cols))
                let portable = (0..<rows).map { r in qb_dot_kquant_portable(GGMLType.q4_K.rawValue, plain.base + r * plain.rowBytes, xk, Int64(cols)) }
                let y1 = matvec(packed, x, threads: 1), y2 = matvec(packed, x, threads: 2)
                XCTAssertLessThan(relativeError(y1, portable), 1e-5, "scale \(scale)")
                XCTAssertEqual(y1, y2, "same result at any thread count")
            }
            // Nine rows: a batch of eight and a remainder of one; eleven: eight and three.
            for count in [9, 11] {
                let x = randoms(count * cols)
                var batched = [Float](repeating: .nan, count: count * rows)
                Linear.matvecRows(packed, x, &batched, count: count, pool: ThreadPool(threads: 2))
                for b in 0..<count {
                    let alone = matvec(packed, Array(x[(b * cols)..<((b + 1) * cols)]), threads: 2)
                    XCTAssertEqual(Array(batched[(b * rows)..<((b + 1) * rows)]), alone, "\(count) rows batched, row \(b)")
                }
            }
            var y = [Float](repeating: .nan, count: 5 * rows), yp = y
            let x5 = randoms(5 * cols)
            Linear.matmul(plain, x5, &y, count: 5, pool: ThreadPool(threads: 2))
            Linear.matmul(packed, x5, &yp, count: 5, pool: ThreadPool(threads: 2))
            XCTAssertEqual(yp, y, "prefill")
            XCTAssertNil(randomBlocks(.q4_K, rows: 40, cols: 256).interleavedForDecode(pool: ThreadPool(threads: 1)), "rows % 16")
        }
    }

    /// Q6_K's sixteen-row decode layout (the AVX-512 and AVX2 sets repack into it; every set
    /// reads it)
    /// on random blocks (every bit of the values and the signed scales) and on blocks at the
    /// extremes (every value 0 or 63, every scale -128 or 127; activations quantized up to
    /// +-127):
    /// the same stored blocks and values back, products within 1e-5 of the portable row
    /// kernel's, the same at any thread count and alone or batched (nine rows: a batch of
    /// eight and one), prefill bitwise the plain layout's.
    func testQ6KSixteenRowLayoutMatchesPlainRows() throws {
        try onEveryKernelSet {
            let pool = ThreadPool(threads: 2)
            let matrices = [("random", randomBlocks(.q6_K, rows: 48, cols: 768)), ("extremes", q6KExtremes(rows: 32, cols: 512))]
            for (name, plain) in matrices {
                let packed = try XCTUnwrap(plain.interleavedForDecode(pool: pool, groupRows: 16), name)
                XCTAssertEqual(packed.layout, .interleaved16, name)
                assertHoldsPlainRows(packed, plain, ranges: [0..<plain.rows, 5..<27], name)
                let rows = plain.rows, cols = plain.cols
                for scale: Float in [0.01, 4, 100] {
                    let x = randoms(cols, scale: scale)
                    var xk = [qb_q8k](repeating: qb_q8k(), count: cols / 256)
                    qb_quantize_q8k(x, &xk, Int64(cols))
                    let portable = (0..<rows).map { r in
                        qb_dot_kquant_portable(GGMLType.q6_K.rawValue, plain.base + r * plain.rowBytes, xk, Int64(cols))
                    }
                    let y1 = matvec(packed, x, threads: 1), y2 = matvec(packed, x, threads: 2)
                    XCTAssertLessThan(relativeError(y1, portable), 1e-5, "\(name), scale \(scale)")
                    XCTAssertEqual(y1, y2, "\(name): same result at any thread count")
                }
                let count = 9, x = randoms(count * cols, scale: 4)
                var batched = [Float](repeating: .nan, count: count * rows)
                Linear.matvecRows(packed, x, &batched, count: count, pool: pool)
                for b in 0..<count {
                    let alone = matvec(packed, Array(x[(b * cols)..<((b + 1) * cols)]), threads: 2)
                    XCTAssertEqual(Array(batched[(b * rows)..<((b + 1) * rows)]), alone, "\(name): batched row \(b)")
                }
                var y = [Float](repeating: .nan, count: 5 * rows), yp = y
                let x5 = randoms(5 * cols)
                Linear.matmul(plain, x5, &y, count: 5, pool: pool)
                Linear.matmul(packed, x5, &yp, count: 5, pool: pool)
                XCTAssertEqual(yp, y, "\(name): prefill")
            }
            XCTAssertNil(randomBlocks(.q6_K, rows: 40, cols: 256).interleavedForDecode(pool: pool, groupRows: 16), "rows % 16")
        }
    }

    /// Q6_K blocks with d = 1 and, per block, every value 0 or 63 and every scale -128 or 127.
    func q6KExtremes(rows: Int, cols: Int) -> Matrix {
        let w = randomBlocks(.q6_K, rows: rows, cols: cols)
        let raw = UnsafeMutableRawPointer(mutating: w.base)
        for b in 0..<(rows * cols / 256) {
            let blk = raw + b * 210
            let values: UInt8 = Bool.random(using: &rng) ? 0xFF : 0, scale: UInt8 = Bool.random(using: &rng) ? 0x80 : 0x7F
            for i in 0..<192 { blk.storeBytes(of: values, toByteOffset: i, as: UInt8.self) }
            for i in 192..<208 { blk.storeBytes(of: scale, toByteOffset: i, as: UInt8.self) }
            blk.storeBytes(of: Float16(1).bitPattern, toByteOffset: 208, as: UInt16.self)
        }
        return w
    }

    /// The same packed MLX values with scales and biases narrowed from f32 to `dtype` (as MLX
    /// files store them).
    func narrowed(_ m: Matrix, to dtype: DType) -> Matrix {
        guard case .mlx(let q) = m.format, dtype != .f32 else { return m }
        let n = m.rows * m.cols / q.groupSize
        let s = UnsafeMutablePointer<UInt16>.allocate(capacity: 2 * n)
        let f = m.scales!.assumingMemoryBound(to: Float.self), b = m.biases!.assumingMemoryBound(to: Float.self)
        let convert = dtype == .f16 ? qb_f32_to_f16 : qb_f32_to_bf16
        convert(f, s, Int64(n))
        convert(b, s + n, Int64(n))
        addTeardownBlock { s.deallocate() }
        return Matrix(
            format: .mlx(.init(bits: q.bits, groupSize: q.groupSize, scaleType: dtype)), rows: m.rows, cols: m.cols, base: m.base,
            scales: UnsafeRawPointer(s), biases: UnsafeRawPointer(s + n), owner: m.owner)
    }

    /// MLX's sixteen-row decode layout, 4 and 8 bits, every group size and scale type: the same
    /// values back, products within float rounding of the plain row kernel's (the integer sums
    /// are exact in both) at any thread count and alone or batched, prefill bitwise the plain
    /// layout's. The quantizer puts a 0 and a 15 (255) in every group.
    func testMLXSixteenRowLayoutMatchesPlainRows() throws {
        try onEveryKernelSet {
            let rows = 48, cols = 512
            for (bits, group) in [4, 8].flatMap({ b in [32, 64, 128].map { (b, $0) } }) {
                let f32 = try Quantizer.quantize(
                    randoms(rows * cols), rows: rows, cols: cols, to: .mlx(.init(bits: bits, groupSize: group, scaleType: .f32)),
                    pool: ThreadPool(threads: 2))
                for dtype in [DType.f32, .f16, .bf16] {
                    let plain = narrowed(f32, to: dtype), name = "\(bits)-bit g\(group) \(dtype)"
                    guard let packed = plain.interleavedForDecode(pool: ThreadPool(threads: 2)) else { return XCTFail("\(name) not interleaved") }
                    XCTAssertEqual(packed.layout, .interleaved16, name)
                    XCTAssertEqual(packed.byteCount, plain.byteCount, name)
                    XCTAssertEqual(packed.toFloats(), plain.toFloats(), "\(name): dequantized values")
                    for scale: Float in [0.01, 4, 100] {
                        let x = randoms(cols, scale: scale)
                        let y1 = matvec(packed, x, threads: 1), y2 = matvec(packed, x, threads: 2)
                        XCTAssertLessThan(relativeError(y1, matvec(plain, x, threads: 1)), 1e-5, "\(name) scale \(scale)")
                        XCTAssertEqual(y1, y2, "\(name): same result at any thread count")
                    }
                    // Seven rows: a pass of four and one of three (AVX-512).
                    let count = 7, x = randoms(count * cols)
                    var batched = [Float](repeating: .nan, count: count * rows)
                    Linear.matvecRows(packed, x, &batched, count: count, pool: ThreadPool(threads: 2))
                    for b in 0..<count {
                        XCTAssertEqual(
                            Array(batched[(b * rows)..<((b + 1) * rows)]), matvec(packed, Array(x[(b * cols)..<((b + 1) * cols)]), threads: 2),
                            "\(name): batched row \(b)")
                    }
                    var y = [Float](repeating: .nan, count: 5 * rows), yp = y
                    let x5 = randoms(5 * cols)
                    Linear.matmul(plain, x5, &y, count: 5, pool: ThreadPool(threads: 2))
                    Linear.matmul(packed, x5, &yp, count: 5, pool: ThreadPool(threads: 2))
                    XCTAssertEqual(yp, y, "\(name): prefill")
                }
            }
            let odd = try Quantizer.quantize(
                randoms(40 * 256), rows: 40, cols: 256, to: .mlx(.init(bits: 4, groupSize: 64, scaleType: .f32)), pool: ThreadPool(threads: 1))
            XCTAssertNil(odd.interleavedForDecode(pool: ThreadPool(threads: 1)), "rows % 16")
        }
    }

    /// Prefill of quantized weights runs on int8 dot products over 16-row tiles: equal to the
    /// reference with activations quantized per 32 values (Q4_K per 256 with shifts on the avx2
    /// set, whose tiles are per super-block), for every layout and scale type
    /// (5- and 8-bit formats on the AVX2 and AVX-512 sets), with activation counts that leave remainders of
    /// the 8- and 4-row passes, and the same at any thread count.
    func testIntPrefillMatchesReferenceWithQuantizedActivations() throws {
        try onEveryKernelSet {
            let rows = 48, cols = 512
            var cases: [(String, Matrix)] = []
            let q40 = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(.q4_0), pool: ThreadPool(threads: 2))
            cases.append(("Q4_0", q40))
            cases.append(("Q4_0 interleaved", q40.interleavedForDecode(pool: ThreadPool(threads: 1))!))
            let q4k = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(.q4_K), pool: ThreadPool(threads: 2))
            cases.append(("Q4_K", q4k))
            cases.append(("Q4_K interleaved", q4k.interleavedForDecode(pool: ThreadPool(threads: 1))!))
            for group in [32, 64, 128] {
                let m = try Quantizer.quantize(
                    randoms(rows * cols), rows: rows, cols: cols, to: .mlx(.init(bits: 4, groupSize: group, scaleType: .f32)),
                    pool: ThreadPool(threads: 2))
                cases.append(("MLX g\(group) f32", m))
                for narrow in [DType.f16, .bf16] { cases.append(("MLX g\(group) \(narrow)", narrowed(m, to: narrow))) }
            }
            cases.append(("Q6_K", randomBlocks(.q6_K, rows: rows, cols: cols)))
            // Q3_K's values (0..7, offset -4) on Q6_K's tiles, Q2_K's (0..3) with their minimums;
            // 768 columns for an odd number of super-blocks.
            for t in [GGMLType.q3_K, .q2_K] {
                cases.append(("\(t.name) random blocks", randomBlocks(t, rows: rows, cols: cols)))
                cases.append(("\(t.name) random blocks, 768 columns", randomBlocks(t, rows: rows, cols: 768)))
            }
            let q41 = randomBlocks(.q4_1, rows: rows, cols: cols)
            cases.append(("Q4_1", q41))
            cases.append(("Q4_1 interleaved", q41.interleavedForDecode(pool: ThreadPool(threads: 1))!))
            XCTAssertEqual(IntTiles.wideValues, KernelSet.active != .portable, "AVX2 and AVX-512 take 5- and 8-bit values")
            if IntTiles.wideValues {
                // 8-bit values take the int8 path: VNNI accumulates in 32 bits, AVX2 in nibble halves.
                let q80 = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(.q8_0), pool: ThreadPool(threads: 2))
                let raw = UnsafeMutableRawPointer(mutating: q80.base)
                for b in stride(from: 0, to: rows * cols / 32, by: 5) { raw.storeBytes(of: -128, toByteOffset: b * 34 + 2 + b % 32, as: Int8.self) }
                cases.append(("Q8_0 with -128", q80))
                cases.append(("Q8_0 interleaved", q80.interleavedForDecode(pool: ThreadPool(threads: 1))!))
                cases.append(("MLX 8-bit g64", try Quantizer.quantize(
                    randoms(rows * cols), rows: rows, cols: cols, to: .mlx(.init(bits: 8, groupSize: 64, scaleType: .f32)),
                    pool: ThreadPool(threads: 2))))
                // 5-bit values (0..31) likewise: quantized rows, and random blocks for every
                // pattern of the fifth bits; 640 columns as Gemma 3 270M's Q5_0 matrices have,
                // 96 (an odd number of blocks) for the packing that takes one block at a time.
                for t in [GGMLType.q5_0, .q5_1] {
                    cases.append(("\(t)", try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(t), pool: ThreadPool(threads: 2))))
                    for width in [cols, 640, 96] { cases.append(("\(t) random blocks, \(width) columns", randomBlocks(t, rows: rows, cols: width))) }
                }
                for t in [GGMLType.q5_0, .q5_1] {
                    cases.append(("\(t) interleaved, 640 columns", randomBlocks(t, rows: rows, cols: 640).interleavedForDecode(pool: ThreadPool(threads: 1))!))
                }
                // Q5_K: every pattern of the fifth bits, 8 sub-blocks per super-block.
                cases.append(("Q5_K random blocks", randomBlocks(.q5_K, rows: rows, cols: cols)))
                cases.append(("Q5_K random blocks, 768 columns", randomBlocks(.q5_K, rows: rows, cols: 768)))
                // IQ4_XS: its table's values as 8-bit ones (kvalue + 128), every nibble and scale.
                cases.append(("IQ4_XS random blocks", randomBlocks(.iq4_xs, rows: rows, cols: cols)))
                cases.append(("IQ4_XS random blocks, 768 columns", randomBlocks(.iq4_xs, rows: rows, cols: 768)))
                // IQ4_NL: the same values with a scale per 32; 96 columns for the packing's odd block.
                for width in [cols, 640, 96] { cases.append(("IQ4_NL random blocks, \(width) columns", randomBlocks(.iq4_nl, rows: rows, cols: width))) }
            } else {
                for t in [GGMLType.q5_0, .q5_1, .q5_K, .iq4_nl, .iq4_xs] { XCTAssertFalse(IntTiles.fits(randomBlocks(t, rows: rows, cols: cols)), "\(t) on the portable set") }
            }
            for (name, w) in cases {
                XCTAssertTrue(IntTiles.fits(w), name)
                let cols = w.cols
                for count in [2, 5, 15, 29] {
                    let x = randoms(count * cols, scale: 2)
                    let expected = (0..<count).flatMap {
                        Reference.prefillMatvec(w, Array(x[($0 * cols)..<(($0 + 1) * cols)]))
                    }
                    var y1 = [Float](repeating: .nan, count: count * rows), y2 = y1
                    Linear.matmul(w, x, &y1, count: count, pool: ThreadPool(threads: 1))
                    Linear.matmul(w, x, &y2, count: count, pool: ThreadPool(threads: 2))
                    XCTAssertLessThan(relativeError(y1, expected), 2e-5, "\(name) x \(count)")
                    XCTAssertEqual(y1, y2, "\(name) x \(count): same at any thread count")
                }
            }
        }
    }

    /// Q6_K's and Q3_K's tile products with activations per 32 values (`qb_gemm_tiles6`,
    /// `qb_gemm_tiles_q3k`, with the offsets the set's tiles take) on every set, the avx2 set's
    /// signed tiles included: equal to the reference with activations per 32.
    func testSixteenValueTilesWithActivationsPer32MatchReference() throws {
        try onEveryKernelSet {
            let rows = 32, cols = 768, count = 7, nb = cols / 32
            for t in [GGMLType.q6_K, .q3_K] {
                let w = randomBlocks(t, rows: rows, cols: cols)
                let x = randoms(count * cols, scale: 2)
                let offset = IntTiles.offset(w)
                let perRow = offset.map { nb * 32 / Int($0.width) } ?? 0
                var xq = [qb_q8a](repeating: qb_q8a(), count: count * nb)
                var offs = [Int32](repeating: 0, count: max(1, count * perRow))
                x.withUnsafeBufferPointer { xp in
                    xq.withUnsafeMutableBufferPointer { q in
                        for c in 0..<count {
                            qb_quantize_q8a(xp.baseAddress! + c * cols, q.baseAddress! + c * nb, Int64(cols))
                            if let o = offset { qb_q8a_offsets(q.baseAddress! + c * nb, Int64(nb), o.width, o.k, &offs[c * perRow]) }
                        }
                    }
                }
                let tileBytes = nb * Int(qb_gemm_tile6_block_bytes(t.rawValue))
                var tiles = [UInt8](repeating: 0, count: 2 * tileBytes)
                tiles.withUnsafeMutableBufferPointer { p in
                    for k in 0..<2 { IntTiles.pack(w, rows: 16 * k, into: p.baseAddress! + k * tileBytes) }
                }
                var y = [Float](repeating: .nan, count: count * rows)
                offs.withUnsafeBufferPointer { o in
                    let op = offset == nil ? nil : o.baseAddress
                    if t == .q6_K { qb_gemm_tiles6(tiles, 2, xq, op, Int64(count), Int64(cols), &y, Int64(rows)) }
                    else { qb_gemm_tiles_q3k(tiles, 2, xq, op, Int64(count), Int64(cols), &y, Int64(rows)) }
                }
                let expected = (0..<count).flatMap { Reference.matvec(w, Array(x[($0 * cols)..<(($0 + 1) * cols)]), activationBlock: 32) }
                XCTAssertLessThan(relativeError(y, expected), 2e-5, "\(t.name), activations per 32")
            }
        }
    }

    /// An activation row's prefill outputs do not depend on how many rows share the product:
    /// a column block's last rows (a remainder of the four-row groups, or Q6_K's odd row) give
    /// bitwise the outputs they give inside a group. The first rows of one 20-row input, at
    /// counts whose last column block leaves every remainder; each value width, with offsets
    /// (symmetric formats) and without, on every kernel set.
    func testIntPrefillRowsDoNotDependOnTheCount() throws {
        try onEveryKernelSet {
            let rows = 32, cols = 512, most = 20
            var cases: [(String, Matrix)] = [
                ("Q4_0", try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(.q4_0), pool: ThreadPool(threads: 1))),
                ("Q4_K", try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(.q4_K), pool: ThreadPool(threads: 1))),
                ("Q6_K", randomBlocks(.q6_K, rows: rows, cols: cols)),
                ("Q3_K", randomBlocks(.q3_K, rows: rows, cols: cols)),
                ("Q2_K", randomBlocks(.q2_K, rows: rows, cols: cols)),
            ]
            if IntTiles.wideValues {
                for t in [GGMLType.q5_0, .q5_1, .q8_0] { cases.append(("\(t)", randomBlocks(t, rows: rows, cols: cols))) }
                cases.append(("MLX 8-bit g64", try Quantizer.quantize(
                    randoms(rows * cols), rows: rows, cols: cols, to: .mlx(.init(bits: 8, groupSize: 64, scaleType: .f32)),
                    pool: ThreadPool(threads: 1))))
            }
            let x = randoms(most * cols, scale: 2)
            for (name, w) in cases {
                XCTAssertTrue(IntTiles.fits(w), name)
                var all = [Float](repeating: .nan, count: most * rows)
                Linear.matmul(w, x, &all, count: most, pool: ThreadPool(threads: 1))
                for count in [2, 3, 5, 6, 7, 17, 18, 19] {
                    var y = [Float](repeating: .nan, count: count * rows)
                    Linear.matmul(w, x, &y, count: count, pool: ThreadPool(threads: 1))
                    XCTAssertEqual(y, Array(all[..<(count * rows)]), "\(name): \(count) rows against the first \(count) of \(most)")
                }
            }
        }
    }

    /// Blocks of a GGML type whose scales are 1 (Q5_1's minimum a small integer), so every
    /// f32 step of a product with integer activations is exact; about half the blocks hold
    /// the format's largest unsigned tile value everywhere (Q4_0 15, Q5 31, Q8_0 255 as
    /// stored 127, or stored -128), the others random quants.
    func extremeBlocks(_ t: GGMLType, rows: Int, cols: Int) -> Matrix {
        let w = randomBlocks(t, rows: rows, cols: cols)
        let raw = UnsafeMutableRawPointer(mutating: w.base)
        let one = Float16(1).bitPattern
        let quants = t == .q5_1 ? 4 : 2  // past the f16 scale (and Q5_1's minimum)
        for b in 0..<(rows * cols / t.blockSize) {
            let blk = raw + b * t.blockBytes
            blk.storeBytes(of: one, as: UInt16.self)
            if t == .q5_1 { blk.storeBytes(of: Float16(Float(Int.random(in: -40...40, using: &rng))).bitPattern, toByteOffset: 2, as: UInt16.self) }
            guard Bool.random(using: &rng) else { continue }
            let fill: UInt8 = t != .q8_0 ? 0xFF : Bool.random(using: &rng) ? 0x7F : 0x80
            for i in quants..<t.blockBytes { blk.storeBytes(of: fill, toByteOffset: i, as: UInt8.self) }
        }
        return w
    }

    /// Q4_K blocks with d and dmin 1 and every scale byte 0x21 (sub-blocks 0-3 scale and
    /// minimum 33, 4-7 scale 1 and minimum 2: two super-blocks' sums stay below 2^24, so every
    /// f32 step is exact), half the super-blocks with every value 15.
    func extremeQ4K(rows: Int, cols: Int) -> Matrix {
        let w = randomBlocks(.q4_K, rows: rows, cols: cols)
        let raw = UnsafeMutableRawPointer(mutating: w.base)
        for b in 0..<(rows * cols / 256) {
            let blk = raw + b * GGMLType.q4_K.blockBytes
            for o in [0, 2] { blk.storeBytes(of: Float16(1).bitPattern, toByteOffset: o, as: UInt16.self) }
            for i in 4..<16 { blk.storeBytes(of: UInt8(0x21), toByteOffset: i, as: UInt8.self) }
            guard Bool.random(using: &rng) else { continue }
            for i in 16..<144 { blk.storeBytes(of: UInt8(0xFF), toByteOffset: i, as: UInt8.self) }
        }
        return w
    }

    /// MLX 8-bit rows with scales 1 and small integer biases, half the 32-value blocks all 255.
    func extremeMLX8(rows: Int, cols: Int, group: Int) -> Matrix {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: rows * cols)
        let groups = rows * cols / group
        let sb = UnsafeMutablePointer<Float>.allocate(capacity: 2 * groups)
        addTeardownBlock { bytes.deallocate(); sb.deallocate() }
        for b in 0..<(rows * cols / 32) {
            let full = Bool.random(using: &rng)
            for j in 0..<32 { bytes[32 * b + j] = full ? 255 : UInt8.random(in: 0...255, using: &rng) }
        }
        for g in 0..<groups {
            sb[g] = 1
            sb[groups + g] = Float(Int.random(in: -200...0, using: &rng))
        }
        return Matrix(
            format: .mlx(.init(bits: 8, groupSize: group, scaleType: .f32)), rows: rows, cols: cols, base: UnsafeRawPointer(bytes),
            scales: UnsafeRawPointer(sb), biases: UnsafeRawPointer(sb + groups), owner: nil)
    }

    /// The int8 prefill's integer sums at their extremes: each format's largest values
    /// against activation blocks all +127 or all -127 (or random with one ±127), where
    /// 16-bit partial sums would saturate. Every activation block's step is 1 and every
    /// weight scale 1, so quantizing the activations changes nothing and every f32 step is
    /// exact: the products equal the reference bitwise, whatever the summation order, and a
    /// saturated or dropped partial sum shows as a different integer.
    func testIntPrefillIsExactAtTheValuesExtremes() throws {
        try onEveryKernelSet {
            let rows = 32
            // 12 blocks keep the largest sums (12 x 255 x 127 x 32) below 2^24.
            for cols in [384, 96] {
                var cases: [(String, Matrix)] = [GGMLType.q4_0, .q5_0, .q5_1, .q8_0].map { ("\($0) \(cols)", extremeBlocks($0, rows: rows, cols: cols)) }
                // The four-row decode layout, as a model's matrices reach prefill (its own packer).
                for t in [GGMLType.q4_0, .q5_0, .q5_1, .q8_0] {
                    cases.append(("\(t) interleaved \(cols)", extremeBlocks(t, rows: rows, cols: cols).interleavedForDecode(pool: ThreadPool(threads: 1))!))
                }
                cases.append(("MLX 8-bit g32 \(cols)", extremeMLX8(rows: rows, cols: cols, group: 32)))
                if cols == 384 {  // two super-blocks (of 256 columns)
                    let q4k = extremeQ4K(rows: rows, cols: 512)
                    cases.append(("Q4_K 512", q4k))
                    cases.append(("Q4_K interleaved 512", q4k.interleavedForDecode(pool: ThreadPool(threads: 1))!))
                }
                if cols % 64 == 0 { cases.append(("MLX 8-bit g64 \(cols)", extremeMLX8(rows: rows, cols: cols, group: 64))) }
                for (name, w) in cases {
                    XCTAssertEqual(IntTiles.fits(w), KernelSet.active != .portable || [.ggml(.q4_0), .ggml(.q4_K)].contains(w.format), name)
                    assertExactAtExtremes(w, name: name)
                }
            }
        }
    }

    /// The avx512 set's two ways of meeting Q4_K's sub-block scales (`qb_set_q4k_dpwssd`: a
    /// vpdpwssd per 16 values' sum, or a vpmulld per 32) give the same bits, and the
    /// reference's at the values' extremes, in every shape (48 rows: a pair of tiles and an
    /// odd one; 9 rows: 8 + 1 and 4 + 4 + 1); the other sets ignore the setting.
    func testQ4KScaleProductsAgree() throws {
        try onEveryKernelSet {
            let chosen = qb_set_q4k_dpwssd(0)
            defer { qb_set_q4k_dpwssd(chosen) }
            let rows = 48, cols = 512, count = 9
            let w = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(.q4_K), pool: ThreadPool(threads: 2))
            let x = unevenActivations(count * cols)
            var outputs: [[Float]] = []
            for on: Int32 in [0, 1] {
                qb_set_q4k_dpwssd(on)
                var y = [Float](repeating: .nan, count: count * rows)
                Linear.matmul(w, x, &y, count: count, pool: ThreadPool(threads: 2))
                outputs.append(y)
                assertExactAtExtremes(extremeQ4K(rows: rows, cols: cols), name: "Q4_K, vpdpwssd \(on)")
            }
            XCTAssertEqual(outputs[0], outputs[1], "Q4_K prefill by vpmulld and by vpdpwssd on \(KernelSet.active)")
        }
    }

    /// As `testIntPrefillIsExactAtTheValuesExtremes`, the tiles with a scale per 16 values:
    /// Q6_K's (two steps per 16-bit sum on AVX2), Q3_K's and Q2_K's (four), each format's
    /// largest value in half the super-blocks. 768 columns (48 scales per row) keep the
    /// largest sums below 2^24.
    func testSixteenValueTilesAreExactAtTheValuesExtremes() throws {
        try onEveryKernelSet {
            for t in [GGMLType.q6_K, .q3_K, .q2_K] {
                for cols in [256, 768] {
                    let w = extremeSuperBlocks(t, rows: 32, cols: cols)
                    XCTAssertTrue(IntTiles.fits(w), "\(t)")
                    assertExactAtExtremes(w, name: "\(t) \(cols)")
                }
            }
        }
    }

    /// `w`'s products with 1, 4, 5, 8, 13 and 20 activation rows whose every 32-value block
    /// has the step 1 (all +127, all -127, or random with one ±127) equal the reference
    /// bitwise.
    func assertExactAtExtremes(_ w: Matrix, name: String) {
        let cols = w.cols, rows = w.rows
        for count in [1, 4, 5, 8, 13, 20] {
            var x = [Float](repeating: 0, count: count * cols)
            for b in 0..<(count * cols / 32) {
                let mode = Int.random(in: 0..<3, using: &rng)
                for j in 0..<32 {
                    x[32 * b + j] = mode == 0 ? 127 : mode == 1 ? -127 : Float(Int.random(in: -127...127, using: &rng))
                }
                if mode == 2 { x[32 * b + Int.random(in: 0..<32, using: &rng)] = Bool.random(using: &rng) ? 127 : -127 }
            }
            let expected = (0..<count).flatMap {
                Reference.prefillMatvec(w, Array(x[($0 * cols)..<(($0 + 1) * cols)]))
            }
            var y = [Float](repeating: .nan, count: count * rows)
            Linear.matmul(w, x, &y, count: count, pool: ThreadPool(threads: 2))
            XCTAssertEqual(y, expected, "\(name) x \(count)")
        }
    }

    /// Q6_K, Q3_K or Q2_K blocks with d (and Q2_K's dmin) 1 and every 16-value scale fixed
    /// (Q6_K 2, Q3_K 31, Q2_K 15 with minimum 15), so every f32 step of a product with
    /// integer activations is exact; half the super-blocks hold the largest value everywhere
    /// (quant bits all set: 63, 7, 3 as tiled), the others random quants.
    func extremeSuperBlocks(_ t: GGMLType, rows: Int, cols: Int) -> Matrix {
        let w = randomBlocks(t, rows: rows, cols: cols)
        let raw = UnsafeMutableRawPointer(mutating: w.base)
        let (quants, scales, scaleByte, halves): (Range<Int>, Range<Int>, UInt8, [Int]) =
            t == .q6_K ? (0..<192, 192..<208, 2, [208]) : t == .q3_K ? (0..<96, 96..<108, 0xFF, [108]) : (16..<80, 0..<16, 0xFF, [80, 82])
        for b in 0..<(rows * cols / t.blockSize) {
            let blk = raw + b * t.blockBytes
            for o in halves { blk.storeBytes(of: Float16(1).bitPattern, toByteOffset: o, as: UInt16.self) }
            for i in scales { blk.storeBytes(of: scaleByte, toByteOffset: i, as: UInt8.self) }
            guard Bool.random(using: &rng) else { continue }
            for i in quants { blk.storeBytes(of: UInt8(0xFF), toByteOffset: i, as: UInt8.self) }
        }
        return w
    }

    /// Q5_0/Q5_1 and IQ4_NL decode in vector code on the AVX2 and AVX-512 sets: each block's
    /// integer sum is exact and only the f32 summation order differs from the portable set's
    /// scalar loop (block counts 3 to 64, every bit pattern of the fifth bits and nibbles).
    func testQ5AndIQ4NLDecodeMatchPortableRows() {
        let before = KernelSet.active
        defer { KernelSet.use(before) }
        for t in [GGMLType.q5_0, .q5_1, .iq4_nl] {
            for cols in [96, 512, 640, 2048] {
                let w = randomBlocks(t, rows: 7, cols: cols), x = randoms(cols, scale: 3)
                KernelSet.use(.portable)
                let portable = matvec(w, x, threads: 1)
                XCTAssertLessThan(relativeError(portable, Reference.matvec(w, x)), 2e-5, "\(t) \(cols)")
                forEachKernelSet(name) { set in
                    XCTAssertLessThan(relativeError(matvec(w, x, threads: 2), portable), 1e-5, "\(t) \(cols) on \(set.name)")
                }
            }
        }
    }

    /// Values in [-1, 1]: each format's error stays within one step of its grid (formats
    /// anchored on one edge, like Q4_0 and MLX, can be a full step off at the other edge;
    /// those with a min and a step rounded to nearest stay within half a step), plus what
    /// rounding the stored scales adds (2^-11 of a value for an f16 scale or min).
    func testRoundTripErrorIsWithinAQuantizationStep() throws {
        try onEveryKernelSet {
            let cols = 256
            let x = randoms(4 * cols)
            let f16 = Float(1) / 2048
            let bounds: [(WeightFormat, Float)] = [
                // An f16 step's rounding moves the farthest value by up to 2^-11 of it: 127
                // steps of 1/127 (Q8_0), 8 of 1/8 (Q4_0), 16 of 1/16 (Q5_0).
                (.ggml(.q8_0), 0.5 / 127 + f16),
                (.ggml(.q4_0), 1.0 / 8 + f16),
                (.ggml(.q5_0), 1.0 / 16 + f16),
                // Half a step of 2/15 (2/31), the step's f16 rounding times up to 15 (31)
                // steps (2^-10) and the min's (2^-11).
                (.ggml(.q4_1), 1.0 / 15 + 3 * f16),
                (.ggml(.q5_1), 1.0 / 31 + 3 * f16),
                // llama.cpp's search (make_qkx2_quants) takes each 32 values' step between
                // range/16 and range/14, so the top value can be range/16 off where the grid
                // stops short of it; then the 6-bit scales are up to half of max/63 off per
                // step (the largest step 2/14, times up to 15 steps), the 6-bit mins half of
                // 1/63, and d and dmin are f16 (2/15, a step of the full range, was exceeded
                // by random draws: 0.1429).
                (.ggml(.q4_K), 2.0 / 16 + 15 * (2.0 / 14) / 126 + 1.0 / 126 + 2 * f16),
                (.mlx(.init(bits: 4, groupSize: 64, scaleType: .f32)), 2.0 / 15), (.mlx(.init(bits: 8, groupSize: 64, scaleType: .f32)), 2.0 / 255),
            ]
            for (format, step) in bounds {
                let w = try Quantizer.quantize(x, rows: 4, cols: cols, to: format, pool: ThreadPool(threads: 1))
                let back = w.toFloats()
                let worst = zip(back, x).map { abs($0 - $1) }.max()!
                XCTAssertLessThanOrEqual(worst, step * 1.02, format.name)
                XCTAssertGreaterThan(worst, 0, format.name)
            }
        }
    }

    func testPrefillPathDequantizesExactly() throws {
        try onEveryKernelSet {
            let rows = 70, cols = 256, count = 3
            for format in Self.producible {
                let w = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: format, pool: ThreadPool(threads: 2))
                let x = randoms(count * cols)
                var y = [Float](repeating: .nan, count: count * rows)
                Linear.matmul(w, x, &y, count: count, pool: ThreadPool(threads: 2))
                XCTAssertLessThan(relativeError(y, Reference.matmul(w, x, count: count)), 1e-5, format.name)
            }

        }
    }

    func testActivationQuantizationMatchesReference() throws {
        try onEveryKernelSet {
            let x = randoms(256, scale: 5)
            let w = try Quantizer.quantize([Float](repeating: 1, count: 256), rows: 1, cols: 256, to: .ggml(.q8_0), pool: ThreadPool(threads: 1))
            // With all-one weights the product is the sum of the quantized activations.
            let expected = Reference.quantizeActivations(x).reduce(0, +)
            // (All-one weights are stored as 127 steps of f16(1/127), not exactly 1.)
            XCTAssertEqual(matvec(w, x, threads: 1)[0], expected, accuracy: abs(expected) * 0x1p-10 + 1e-4)
            XCTAssertNotEqual(matvec(w, x, threads: 1)[0], x.reduce(0, +), "activations are quantized")
        }
    }

    /// The vector activation quantizers (AVX2, AVX-512) give the portable loops' blocks bit
    /// for bit, per 32 values (q8a), per 256 (q8k) and per 256 with shifts (q8s): the same amax, scale, sums and each
    /// value rounded to nearest even as lrintf does, ties included (a block whose amax is
    /// 127 has scale 1, so its halves are ties).
    func testActivationBlocksAreThePortableLoops() {
        let blocks = 64
        var x = randoms(32 * blocks, scale: 4)
        for j in 0..<32 { x[j] = Float(j) - 15.5 }  // ties, -15.5 ... 15.5
        x[31] = 127
        for j in 32..<64 { x[j] = 0 }  // an all-zero block: scale 0
        for j in 64..<96 { x[j] = Float.random(in: -1e-30...1e-30, using: &rng) }
        for j in 96..<128 { x[j] = Float.random(in: -3e4...3e4, using: &rng) }
        func quantize() -> [qb_q8a] {
            var out = [qb_q8a](repeating: qb_q8a(), count: blocks)
            qb_quantize_q8a(x, &out, Int64(x.count))
            return out
        }
        func quantizeK() -> [UInt8] {
            var out = [qb_q8k](repeating: qb_q8k(), count: x.count / 256)
            qb_quantize_q8k(x, &out, Int64(x.count))
            return out.withUnsafeBytes { Array($0) }
        }
        func quantizeS() -> [UInt8] {
            var out = [qb_q8s](repeating: qb_q8s(), count: x.count / 256)
            qb_quantize_q8s(x, &out, Int64(x.count))
            return out.withUnsafeBytes { Array($0) }
        }
        let before = KernelSet.active
        KernelSet.use(.portable)
        let expected = quantize(), expectedK = quantizeK(), expectedS = quantizeS()
        KernelSet.use(before)
        XCTAssertEqual(expected[0].qs.0, -16, "-15.5 rounds to even")
        XCTAssertEqual(expected[0].qs.1, -14, "-14.5 rounds to even")
        forEachKernelSet(name) { set in
            let got = quantize()
            for b in 0..<blocks {
                XCTAssertEqual(got[b].d.bitPattern, expected[b].d.bitPattern, "block \(b) scale on \(set.name)")
                XCTAssertEqual(got[b].s.bitPattern, expected[b].s.bitPattern, "block \(b) sum on \(set.name)")
                var g = got[b].qs, e = expected[b].qs
                let same = withUnsafeBytes(of: &g) { gb in withUnsafeBytes(of: &e) { eb in gb.elementsEqual(eb) } }
                XCTAssertTrue(same, "block \(b) values on \(set.name)")
            }
            XCTAssertEqual(quantizeK(), expectedK, "q8k blocks on \(set.name)")
            XCTAssertEqual(quantizeS(), expectedS, "q8s blocks on \(set.name)")
        }
    }

    /// Activations whose 32-value blocks differ in loudness, as a transformer's channels do:
    /// each block random within ±2^-u, u uniform in 0...6.
    func unevenActivations(_ n: Int) -> [Float] {
        (0..<(n / 32)).flatMap { _ in randoms(32, scale: Float(pow(2, -Double(Int.random(in: 0...6, using: &rng))))) }
    }

    /// q8s blocks (the vector sets' Q4_K prefill activations) against the reference's
    /// rounding, on every set: d x 2^shift[j] x qs is bitwise `quantizeActivationsShifted`, the
    /// sums are the shifted sums of qs, and every shift 0...3 occurs.
    func testShiftedActivationBlocksMatchReference() {
        var x = unevenActivations(256 * 24)
        for j in 256..<512 { x[j] = 0 }  // an all-zero super-block: d 0
        let expected = Reference.quantizeActivationsShifted(x)
        forEachKernelSet(name) { set in
            var q = [qb_q8s](repeating: qb_q8s(), count: x.count / 256)
            qb_quantize_q8s(x, &q, Int64(x.count))
            var shifts = Set<Int32>(), mismatches = 0
            for i in q.indices {
                var b = q[i]
                let sh = withUnsafeBytes(of: &b.shift) { Array($0.bindMemory(to: Int32.self)) }
                let sums = withUnsafeBytes(of: &b.sums) { Array($0.bindMemory(to: Int16.self)) }
                let qs = withUnsafeBytes(of: &b.qs) { Array($0.bindMemory(to: Int8.self)) }
                for j in 0..<8 {
                    shifts.insert(sh[j])
                    XCTAssertTrue((0...3).contains(sh[j]), "super-block \(i) shift \(j) on \(set.name)")
                    let sum = qs[(32 * j)..<(32 * j + 32)].reduce(0) { $0 + Int($1) }
                    XCTAssertEqual(Int(sums[j]), sum << Int(sh[j]), "super-block \(i) sum \(j) on \(set.name)")
                    for t in 0..<32 where Float(qs[32 * j + t]) * b.d * Float(1 << sh[j]) != expected[256 * i + 32 * j + t] {
                        mismatches += 1
                    }
                }
            }
            XCTAssertEqual(mismatches, 0, "values unlike the reference's on \(set.name)")
            XCTAssertEqual(shifts, [0, 1, 2, 3], "the shifts these activations take on \(set.name)")
        }
    }

    /// K-quant prefill with uneven activations, equal to the set's reference on every set; where
    /// the set takes them per 256 values with a power-of-two step per 32 (the vector sets'
    /// Q4_K), nearer the exact product than one step per 256 values would be (quiet blocks keep
    /// their bits: the price of per-256 activations measured on Gemma 3 was +0.39% perplexity),
    /// and the same bits on both vector sets (the same integers, rounded alike).
    func testSuperBlockPrefillKeepsQuietBlocks() throws {
        var q4kOutputs: [KernelSet: [Float]] = [:]
        defer {
            if let avx2 = q4kOutputs[.avx2], let avx512 = q4kOutputs[.avx512] {
                XCTAssertEqual(avx512, avx2, "Q4_K prefill on the avx512 set against the avx2 set's")
            }
        }
        try onEveryKernelSet {
            let rows = 32, cols = 768, count = 9
            let q4k = try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: .ggml(.q4_K), pool: ThreadPool(threads: 2))
            for (name, w) in [("Q4_K", q4k), ("Q6_K", randomBlocks(.q6_K, rows: rows, cols: cols)), ("Q3_K", randomBlocks(.q3_K, rows: rows, cols: cols))] {
                XCTAssertTrue(IntTiles.fits(w), name)
                let x = unevenActivations(count * cols)
                var y = [Float](repeating: .nan, count: count * rows)
                Linear.matmul(w, x, &y, count: count, pool: ThreadPool(threads: 2))
                let rowsOf = { (c: Int) in Array(x[(c * cols)..<((c + 1) * cols)]) }
                let expected = (0..<count).flatMap { Reference.prefillMatvec(w, rowsOf($0)) }
                XCTAssertLessThan(relativeError(y, expected), 2e-5, "\(name) against its reference")
                XCTAssertEqual(IntTiles.activationBlock(w) == 256, KernelSet.active != .portable && name == "Q4_K", "\(name): q8s")
                guard IntTiles.activationBlock(w) == 256 else { continue }
                q4kOutputs[KernelSet.active] = y
                let exact = Reference.matmul(w, x, count: count)
                let coarse = (0..<count).flatMap { Reference.matvec(w, rowsOf($0), activationBlock: 256) }
                let fine = (0..<count).flatMap { Reference.matvec(w, rowsOf($0), activationBlock: 32) }
                func rms(_ a: [Float]) -> Double { (zip(a, exact).map { Double($0 - $1) * Double($0 - $1) }.reduce(0, +) / Double(a.count)).squareRoot() }
                let (e, eCoarse, eFine) = (rms(y), rms(coarse), rms(fine))
                XCTAssertLessThan(e, 0.7 * eCoarse, "\(name): RMS error \(e) against one step per 256's \(eCoarse) (per 32: \(eFine))")
                print("\(name): RMS error against the exact product \(e), one step per 256 \(eCoarse), per 32 \(eFine)")
            }
        }
    }

    /// The symmetric formats' integer offsets (`qb_q8a_offsets`): k times the sum of each run
    /// of 16 or 32 quants, summed here in Swift from the blocks' bytes, on every set; blocks
    /// all +127 or all -127 give the largest sums.
    func testActivationOffsetsAreScaledRunSums() {
        let blocks = 37
        var x = randoms(32 * blocks, scale: 5)
        for j in 0..<32 { x[j] = 9 }
        for j in 32..<64 { x[j] = -9 }
        var a = [qb_q8a](repeating: qb_q8a(), count: blocks)
        qb_quantize_q8a(x, &a, Int64(x.count))
        forEachKernelSet(name) { set in
            for (width, k) in [(32, Int32(-8)), (32, -128), (16, -32)] {
                let runs = 32 / width
                var got = [Int32](repeating: .max, count: blocks * runs)
                qb_q8a_offsets(a, Int64(blocks), Int32(width), k, &got)
                for b in 0..<blocks {
                    var q = a[b].qs
                    let quants = withUnsafeBytes(of: &q) { Array($0.bindMemory(to: Int8.self)) }
                    for r in 0..<runs {
                        let sum = quants[(width * r)..<(width * (r + 1))].reduce(Int32(0)) { $0 + Int32($1) }
                        XCTAssertEqual(got[b * runs + r], k * sum, "block \(b) run \(r), width \(width), k \(k) on \(set.name)")
                    }
                }
                XCTAssertEqual(got[0], k * Int32(127 * width), "an all-+127 block, width \(width)")
            }
        }
    }

    /// Every producible format refuses a NaN or infinity planted at a random element, naming
    /// that element (the lowest bad one when two are planted), at one and two threads; the
    /// old quantizers stored finite codes for them (amax ignores NaN) and returned normally.
    func testNonFiniteSourceValuesAreRefusedAtTheirElement() throws {
        let formats: [WeightFormat] = [
            .dense(.f16), .dense(.bf16), .ggml(.q8_0), .ggml(.q4_0), .ggml(.q4_1), .ggml(.q5_0), .ggml(.q5_1), .ggml(.q4_K),
            .mlx(.init(bits: 4, groupSize: 64, scaleType: .f32)), .mlx(.init(bits: 8, groupSize: 32, scaleType: .f32)),
        ]
        let rows = 12, cols = 512
        for format in formats {
            for bad: Float in [.nan, .infinity, -.infinity] {
                var x = randoms(rows * cols)
                let first = Int.random(in: cols..<(rows * cols - 1), using: &rng)
                let second = Int.random(in: (first + 1)..<(rows * cols), using: &rng)
                x[second] = .nan
                x[first] = bad
                for threads in [1, 2] {
                    XCTAssertThrowsError(try Quantizer.quantize(x, rows: rows, cols: cols, to: format, pool: ThreadPool(threads: threads)), "\(format.name)") { e in
                        guard let u = e as? UnquantizableWeight else { return XCTFail("\(format.name): \(e)") }
                        XCTAssertEqual(u.index, first, "\(format.name) \(bad)")
                        XCTAssertEqual(u.row, first / cols)
                        XCTAssertFalse(u.overflows)
                        XCTAssertTrue(u.description.contains(bad.isNaN ? "NaN" : "infinity"), u.description)
                    }
                }
            }
            // The same values without the planted ones convert.
            XCTAssertNoThrow(try Quantizer.quantize(randoms(rows * cols), rows: rows, cols: cols, to: format, pool: ThreadPool(threads: 2)))
        }
    }

    /// Finite values past what a format's f16 values or block scales hold are refused too
    /// (they would decode as infinity); values just inside convert.
    func testValuesBeyondTheFormatsRangeAreRefused() throws {
        let cols = 256
        let cases: [(WeightFormat, inside: Float, beyond: Float)] = [
            (.dense(.f16), 65504, 70000),        // f16's largest finite value is 65504
            (.ggml(.q8_0), 127 * 60000, 127 * 70000),  // its scale amax/127 is stored in f16
            (.ggml(.q4_0), 8 * 60000, 8 * 70000),      // scale max/-8, in f16
        ]
        for (format, inside, beyond) in cases {
            var x = randoms(2 * cols)
            let at = Int.random(in: 0..<(2 * cols), using: &rng)
            x[at] = inside
            XCTAssertNoThrow(try Quantizer.quantize(x, rows: 2, cols: cols, to: format, pool: ThreadPool(threads: 1)), "\(format.name) \(inside)")
            x[at] = -beyond
            XCTAssertThrowsError(try Quantizer.quantize(x, rows: 2, cols: cols, to: format, pool: ThreadPool(threads: 1))) { e in
                guard let u = e as? UnquantizableWeight else { return XCTFail("\(e)") }
                XCTAssertTrue(u.overflows, "\(format.name)")
                XCTAssertEqual(u.index, at, "\(format.name): the block's largest value is named")
                XCTAssertTrue(u.description.contains("beyond what \(format.name)"), u.description)
            }
        }
    }
}
