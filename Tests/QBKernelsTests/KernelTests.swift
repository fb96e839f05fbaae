import Foundation
import Synchronization
import XCTest
import QBTestSupport
@testable import QBKernels

/// Each optimized kernel against its plain reference on fresh random inputs (seeded per test, the seed printed).
final class KernelTests: XCTestCase, SeededKernelTestCase {
    lazy var rng = SeededGenerator(for: name)


    func randoms(_ n: Int, scale: Float = 1) -> [Float] {
        (0..<n).map { _ in Float.random(in: -scale...scale, using: &rng) }
    }

    func assertClose(_ a: [Float], _ b: [Float], tolerance: Float, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(a.count, b.count, file: file, line: line)
        let scale = max(b.map { abs($0) }.max() ?? 1, 1e-6)
        var worst: Float = 0
        for (x, y) in zip(a, b) { worst = max(worst, abs(x - y) / scale) }
        XCTAssertLessThanOrEqual(worst, tolerance, "max error relative to largest magnitude", file: file, line: line)
    }

    /// A matrix of the given dtype holding (rounded) random values, plus its storage.
    func matrix(_ dtype: DType, rows: Int, cols: Int) -> (Matrix, AnyObject) {
        let values = randoms(rows * cols)
        switch dtype {
        case .f32:
            let b = FloatBuffer(values)
            return (b.matrix(rows: rows, cols: cols), b)
        case .f16, .bf16:
            let raw = UnsafeMutablePointer<UInt16>.allocate(capacity: rows * cols)
            values.withUnsafeBufferPointer {
                if dtype == .f16 { Convert.f32ToF16($0.baseAddress!, raw, count: rows * cols) } else { Convert.f32ToBF16($0.baseAddress!, raw, count: rows * cols) }
            }
            let owner = Box(raw)
            return (Matrix(dtype: dtype, rows: rows, cols: cols, base: UnsafeRawPointer(raw), owner: owner), owner)
        }
    }

    final class Box { let p: UnsafeMutablePointer<UInt16>; init(_ p: UnsafeMutablePointer<UInt16>) { self.p = p }; deinit { p.deallocate() } }

    func testMatvecMatchesReferenceForEveryDTypeAndThreadCount() {
        onEveryKernelSet {
            for dtype in DType.allCases {
                for (rows, cols) in [(1, 1), (7, 13), (67, 130), (300, 512)] {
                    let (w, keep) = matrix(dtype, rows: rows, cols: cols)
                    let x = randoms(cols)
                    let expected = Reference.matvec(w, x)
                    for threads in [1, 2, 3] {
                        let pool = ThreadPool(threads: threads)
                        var y = [Float](repeating: .nan, count: rows)
                        x.withUnsafeBufferPointer { xp in y.withUnsafeMutableBufferPointer { Linear.matvec(w, xp.baseAddress!, $0.baseAddress!, pool: pool) } }
                        assertClose(y, expected, tolerance: 1e-5)
                    }
                    withExtendedLifetime(keep) {}
                }
            }
        }
    }

    /// Shapes that take sgemm (rows not a multiple of 4) and, for f32/f16/bf16, the native
    /// register tiles (4 x 6 on AVX-512, 2 x 6 on AVX2) with every activation-row remainder.
    func testMatmulMatchesReferenceAndIsIndependentOfThreadCount() {
        onEveryKernelSet {
            for dtype in DType.allCases {
              for (rows, cols, count) in [(150, 96, 5), (152, 96, 5), (68, 160, 13), (260, 48, 8), (64, 2048, 7)] {
                let (w, keep) = matrix(dtype, rows: rows, cols: cols)
                let x = randoms(count * cols)
                let expected = Reference.matmul(w, x, count: count)
                var results: [[Float]] = []
                for threads in [1, 2, 4] {
                    let pool = ThreadPool(threads: threads)
                    var y = [Float](repeating: .nan, count: count * rows)
                    x.withUnsafeBufferPointer { xp in y.withUnsafeMutableBufferPointer { Linear.matmul(w, xp.baseAddress!, $0.baseAddress!, count: count, pool: pool) } }
                    assertClose(y, expected, tolerance: 1e-5)
                    results.append(y)
                }
                XCTAssertEqual(results[0], results[1], "bitwise equal at 1 and 2 threads")
                XCTAssertEqual(results[0], results[2], "bitwise equal at 1 and 4 threads")
                withExtendedLifetime(keep) {}
              }
            }
        }
    }

    /// Bias rows (Qwen2's Q, K, V biases) on seeded random values, every row and width.
    func testAddBiasMatchesReference() {
        var state: UInt64 = 15
        func next() -> Float {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: state >> 11) % 2_000_001 - 1_000_000) / 250_000
        }
        for (rows, cols) in [(1, 1), (3, 7), (5, 64), (17, 896)] {
            var x = (0..<rows * cols).map { _ in next() }
            let bias = (0..<cols).map { _ in next() }
            let expected = Reference.addBias(bias, to: x)
            Ops.addBias(bias, to: &x, rows: rows, cols: cols)
            XCTAssertEqual(x, expected, "\(rows) x \(cols)")
        }
    }

    func testRMSNormSoftmaxSwiGLU() {
        onEveryKernelSet {
            for n in [1, 5, 64, 1000] {
                let x = randoms(n, scale: 3), w = randoms(n)
                var out = [Float](repeating: 0, count: n)
                Ops.rmsnorm(x, weight: w, out: &out, count: n, eps: 1e-5)
                assertClose(out, Reference.rmsnorm(x, weight: w, eps: 1e-5), tolerance: 1e-5)

                var s = randoms(n, scale: 20)
                let expected = Reference.softmax(s)
                Ops.softmax(&s, count: n)
                assertClose(s, expected, tolerance: 1e-5)

                var g = randoms(n, scale: 8)
                let u = randoms(n)
                let expectedG = Reference.swiglu(gate: g, up: u)
                Ops.swiglu(gate: &g, up: u, count: n)
                assertClose(g, expectedG, tolerance: 1e-5)
            }
        }
    }

    /// The finiteness check against `isFinite`: one NaN or infinity anywhere (the tail, the
    /// lanes, the first and last value), and the largest finite values, which must pass.
    /// Positions in order, not a set's (per-process) order, so a seed replays the same cases.
    func testAllFiniteMatchesIsFinite() {
        onEveryKernelSet {
            for n in [0, 1, 7, 8, 9, 31, 32, 33, 64, 100, 1000, 4099] {
                var cases: [[Float]] = [randoms(n, scale: 1e30), [Float](repeating: .greatestFiniteMagnitude, count: n)]
                for bad: Float in [.nan, .infinity, -.infinity] where n > 0 {
                    for at in Set([0, n - 1, Int.random(in: 0..<n, using: &rng)]).sorted() {
                        var x = randoms(n)
                        x[at] = bad
                        cases.append(x)
                    }
                }
                for (c, x) in cases.enumerated() {
                    XCTAssertEqual(x.withUnsafeBufferPointer(Ops.allFinite), Reference.allFinite(x), "n \(n), case \(c)")
                }
            }
        }
    }

    /// The vector argmax against the plain loop: every length around the vector widths and
    /// the unrolled step (the lanes, their merge and the tail), exact ties, NaNs (at index 0
    /// too), infinities, and the largest value in the tail.
    func testArgmaxMatchesTheLoop() {
        onEveryKernelSet {
            for n in [0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 1000, 4099, 20_011] {
                var cases: [[Float]] = [
                    randoms(n, scale: 30),
                    // Few distinct values: ties everywhere, across lanes and steps.
                    randoms(n).map { ($0 * 3).rounded() },
                    randoms(n).map { Float.random(in: 0..<1, using: &rng) < 0.1 ? .nan : $0 },
                    randoms(n).map { _ in Float.random(in: 0..<1, using: &rng) < 0.5 ? -.infinity : .nan },
                    [Float](repeating: -.infinity, count: n),
                    [Float](repeating: .nan, count: n),
                ]
                if n > 0 {
                    var nanFirst = randoms(n)
                    nanFirst[0] = .nan
                    var tail = randoms(n)
                    tail[n - 1] = 2
                    var infinities = randoms(n).map { ($0 * 2).rounded() }
                    for _ in 0..<3 { infinities[Int.random(in: 0..<n, using: &rng)] = .infinity }
                    cases += [nanFirst, tail, infinities]
                }
                for (c, x) in cases.enumerated() {
                    XCTAssertEqual(x.withUnsafeBufferPointer(Ops.argmax), Reference.argmax(x), "n \(n), case \(c)")
                }
            }
        }
    }

    /// GeGLU (tanh GELU) against its definition, over the saturating range too.
    func testGeGLUMatchesReference() {
        onEveryKernelSet {
            for n in [1, 7, 8, 64, 1000] {
                var g = randoms(n, scale: 12)
                let u = randoms(n)
                let expected = Reference.geglu(gate: g, up: u)
                Ops.geglu(gate: &g, up: u, count: n)
                assertClose(g, expected, tolerance: 2e-6)
            }
        }
    }

    /// f32 attention over a window of the cache: positions before `first` take no part.
    func testAttentionHeadWindow() {
        onEveryKernelSet {
            for (count, hd, first) in [(20, 32, 3), (300, 64, 44), (17, 256, 16), (5, 8, 4)] {
                let q = randoms(hd, scale: 2), k = randoms(count * hd, scale: 2), v = randoms(count * hd)
                var scores = [Float](repeating: 0, count: count - first)
                var out = [Float](repeating: 0, count: hd)
                let scale = 1 / Float(hd).squareRoot()
                Ops.attentionHead(q: q, keys: k, values: v, first: first, count: count, headDim: hd, scale: scale, scores: &scores, out: &out)
                assertClose(out, Reference.attentionHead(q: q, keys: k, values: v, count: count, headDim: hd, scale: scale, first: first), tolerance: 1e-5)
                // The same as attention over only the window's rows.
                let windowOnly = Reference.attentionHead(
                    q: q, keys: Array(k[(first * hd)...]), values: Array(v[(first * hd)...]), count: count - first, headDim: hd, scale: scale)
                assertClose(out, windowOnly, tolerance: 1e-5)
            }
        }
    }

    func testAttentionHead() {
        onEveryKernelSet {
            for (count, hd) in [(1, 8), (17, 32), (300, 64)] {
                let q = randoms(hd, scale: 2), k = randoms(count * hd, scale: 2), v = randoms(count * hd)
                var scores = [Float](repeating: 0, count: count)
                var out = [Float](repeating: 0, count: hd)
                let scale = 1 / Float(hd).squareRoot()
                Ops.attentionHead(q: q, keys: k, values: v, count: count, headDim: hd, scale: scale, scores: &scores, out: &out)
                assertClose(out, Reference.attentionHead(q: q, keys: k, values: v, count: count, headDim: hd, scale: scale), tolerance: 1e-5)
            }
        }
    }

    func testRopeBothStylesWithAndWithoutLlama3Scaling() {
        let scaling = Llama3RopeScaling(factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64)
        for style in [RopeStyle.interleaved, .halves] {
            for sc in [nil, scaling] {
                let rope = Rope(headDim: 32, theta: 500000, style: style, scaling: sc)
                for position in [0, 1, 37, 1999] {
                    var v = randoms(3 * 32)
                    let expected = Reference.rope(v, heads: 3, rope: rope, position: position)
                    var c = [Float](repeating: 0, count: 16), s = c
                    rope.angles(position: position, cos: &c, sin: &s)
                    rope.apply(&v, heads: 3, cos: c, sin: s)
                    assertClose(v, expected, tolerance: 2e-6)
                }
            }
        }
    }

    func testLlama3ScalingBands() {
        // Against the formula of transformers' _compute_llama3_parameters, evaluated by hand:
        // with theta 10000, head 8, orig 64, low 1, high 4: wavelengths 2π·10000^(2i/8).
        let rope = Rope(headDim: 8, theta: 10000, style: .halves,
                        scaling: .init(factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64))
        let base = (0..<4).map { 1 / pow(Float(10000), Float(2 * $0) / 8) }
        XCTAssertEqual(rope.inverseFrequencies[0], base[0])  // wavelength 6.3 < 16: kept
        let wl1 = 2 * Float.pi / base[1]  // 62.8: between 16 and 64: smoothed
        let smooth = (64 / wl1 - 1) / 3
        XCTAssertEqual(rope.inverseFrequencies[1], (1 - smooth) * base[1] / 8 + smooth * base[1], accuracy: 1e-9)
        XCTAssertEqual(rope.inverseFrequencies[3], base[3] / 8)  // long wavelength: divided
    }

    func testConversionsRoundToNearestEven() {
        onEveryKernelSet {
            let values: [Float] = [1, -2.5, 65504, 1e-8, 3.14159, .infinity]
            var h = [UInt16](repeating: 0, count: values.count), b = h
            Convert.f32ToF16(values, &h, count: values.count)
            Convert.f32ToBF16(values, &b, count: values.count)
            for (i, v) in values.enumerated() {
                XCTAssertEqual(h[i], Float16(v).bitPattern, "f16 of \(v)")
                let r = Float(bitPattern: UInt32(b[i]) << 16)
                if v.isInfinite { XCTAssertEqual(r, v); continue }
                XCTAssertLessThanOrEqual(abs(r - v), abs(v) / 256 + 1e-30, "bf16 of \(v)")
            }
            XCTAssertEqual(b[0], 0x3F80)
            // Ties go to even: 1 + 2^-8 lies halfway between bf16 1 and 1 + 2^-7.
            var tie: [UInt16] = [0]
            Convert.f32ToBF16([1 + 0x1p-8], &tie, count: 1)
            XCTAssertEqual(tie[0], 0x3F80)
        }
    }

    /// Many short sections back to back, as decode runs them: every item of every section
    /// runs exactly once, with workers joining late or not at all.
    func testPoolSurvivesManyShortSections() {
        for threads in [2, 3, 4] {
            let pool = ThreadPool(threads: threads)
            let hits = UnsafeMutablePointer<Int>.allocate(capacity: 64)
            defer { hits.deallocate() }
            for round in 0..<5000 {
                let n = 1 + round % 64
                hits.initialize(repeating: 0, count: 64)
                pool.parallelFor(n, grain: 1 + round % 3) { range, _ in for i in range { hits[i] += 1 } }
                for i in 0..<64 where hits[i] != (i < n ? 1 : 0) {
                    XCTFail("round \(round), \(threads) threads: item \(i) ran \(hits[i]) times")
                    return
                }
            }
        }
    }

    /// A worker that holds a chunk for longer than the caller spins (as when the OS takes
    /// its core away) makes the caller sleep until that chunk's end: every section still
    /// returns, with every item run once. A lost wake-up would hang here, so the sections
    /// run on a thread of their own and the test fails, rather than hangs, if they stop.
    func testCallerSleepsThroughALongChunkAndIsWoken() {
        var g = SeededGenerator(for: name)
        let holds = (0..<400).map { _ in Int(g.next() % 4 == 0 ? 0 : g.next() % 3000) }
        let finished = DispatchSemaphore(value: 0)
        // Written by the section thread only; read after its signal (or not at all).
        nonisolated(unsafe) var bad: [String] = []
        let worker = Thread {
            let pool = ThreadPool(threads: 2)
            let hits = UnsafeMutablePointer<Int>.allocate(capacity: 2)
            defer { hits.deallocate() }
            let joined = Atomic<Int>(0)
            var workerRounds = 0
            for (round, hold) in holds.enumerated() {
                hits.initialize(repeating: 0, count: 2)
                joined.store(0, ordering: .sequentiallyConsistent)
                pool.parallelFor(2) { range, thread in
                    if thread != 0 {
                        joined.store(1, ordering: .sequentiallyConsistent)
                        usleep(useconds_t(hold))
                    } else {
                        // Leave the worker time to claim the other chunk (up to 20 ms).
                        let until = DispatchTime.now().uptimeNanoseconds + 20_000_000
                        while joined.load(ordering: .sequentiallyConsistent) == 0 && DispatchTime.now().uptimeNanoseconds < until {}
                    }
                    for i in range { hits[i] += 1 }
                }
                workerRounds += joined.load(ordering: .sequentiallyConsistent)
                if hits[0] != 1 || hits[1] != 1 { bad.append("round \(round): hits \(hits[0]), \(hits[1])") }
            }
            print("the worker held a chunk in \(workerRounds) of \(holds.count) sections")
            finished.signal()
        }
        worker.start()
        if finished.wait(timeout: .now() + 120) == .timedOut {
            XCTFail("a parallel section did not return within 120 s (a lost wake-up)")
            return
        }
        XCTAssertEqual(bad, [])
    }

    /// Tapered chunks (the decode products' cut): every item once, at any thread count, each
    /// chunk but the last a multiple of `align` and none below `minimum` but the last, sizes
    /// never growing after the first shrinks; one thread takes `grain` items a chunk.
    func testTaperedChunksCoverEveryItemOnce() {
        for threads in [1, 2, 3] {
            let pool = ThreadPool(threads: threads)
            for (n, grain, minimum, align) in [(0, 4, 8, 4), (5, 4, 8, 4), (18, 4, 8, 4), (512, 32, 8, 4), (32064, 2004, 8, 4), (1000, 37, 16, 1)] {
                let ranges: [Range<Int>] = pool.taperedBounds(n, grain: grain, minimum: minimum, align: align) { b in
                    (0..<(b.count - 1)).map { b[$0]..<b[$0 + 1] }
                }
                XCTAssertEqual(ranges.first?.lowerBound ?? 0, 0, "\(n) items, \(threads) threads")
                XCTAssertEqual(ranges.last?.upperBound ?? 0, n, "\(n) items, \(threads) threads")
                for (i, r) in ranges.enumerated() {
                    XCTAssertFalse(r.isEmpty, "\(n) items, \(threads) threads: chunk \(r)")
                    if i > 0 { XCTAssertEqual(r.lowerBound, ranges[i - 1].upperBound, "\(n) items, \(threads) threads: chunk \(r)") }
                    guard r.upperBound < n else { continue }
                    if threads == 1 { XCTAssertEqual(r.count, grain, "\(n) items: chunk \(r)"); continue }
                    XCTAssertEqual(r.count % align, 0, "\(n) items: chunk \(r)")
                    XCTAssertGreaterThanOrEqual(r.count, minimum, "\(n) items: chunk \(r)")
                    if i > 0 { XCTAssertLessThanOrEqual(r.count, max(ranges[i - 1].count, (minimum + align - 1) / align * align), "\(n) items: chunk \(r)") }
                }
            }
        }
    }

    func testPoolRunsEveryItemOnceAtAnyThreadCount() {
        for threads in [1, 2, 5] {
            let pool = ThreadPool(threads: threads)
            for n in [0, 1, 7, 1000] {
                let hits = UnsafeMutablePointer<Int>.allocate(capacity: max(n, 1))
                hits.initialize(repeating: 0, count: max(n, 1))
                for _ in 0..<3 {
                    pool.parallelFor(n, grain: 3) { range, _ in for i in range { hits[i] += 1 } }
                }
                XCTAssertEqual(Array(UnsafeBufferPointer(start: hits, count: n)), [Int](repeating: 3, count: n))
                hits.deallocate()
            }
        }
    }

    /// `ThreadPool.run`, the closure-free section decode's products take: every item once,
    /// in `grain`-sized chunks, at any thread count.
    func testPoolRunCallsTheTaskOnEveryItemOnce() {
        struct Job { let hits: UnsafeMutablePointer<Int>; let sizes: UnsafeMutablePointer<Int> }
        for threads in [1, 2, 5] {
            let pool = ThreadPool(threads: threads)
            for n in [0, 1, 7, 1000] {
                let hits = UnsafeMutablePointer<Int>.allocate(capacity: max(n, 1))
                hits.initialize(repeating: 0, count: max(n, 1))
                let sizes = UnsafeMutablePointer<Int>.allocate(capacity: max(n, 1))
                sizes.initialize(repeating: 0, count: max(n, 1))
                var job = Job(hits: hits, sizes: sizes)
                for _ in 0..<3 {
                    withUnsafeMutablePointer(to: &job) { context in
                        pool.run(n, grain: 3, context: context) { raw, begin, end, _ in
                            guard let job = raw?.assumingMemoryBound(to: Job.self).pointee else { return }
                            for i in Int(begin)..<Int(end) { job.hits[i] += 1 }
                            job.sizes[Int(begin)] = Int(end - begin)
                        }
                    }
                }
                XCTAssertEqual(Array(UnsafeBufferPointer(start: hits, count: n)), [Int](repeating: 3, count: n), "\(n) items, \(threads) threads")
                for begin in stride(from: 0, to: n, by: 3) {
                    XCTAssertEqual(sizes[begin], min(3, n - begin), "chunk at \(begin) of \(n), \(threads) threads")
                }
                hits.deallocate()
                sizes.deallocate()
            }
        }
    }

    /// Decode's chunks of a product's matrices (`Linear.withUnitChunks`): every unit of every
    /// matrix once, in order, and every chunk but the last at least `Linear.chunkBytes` of
    /// weights (each chunk starts its stream cold), at one to three threads.
    func testDecodeChunksCoverEveryUnitOnceAndHoldTheByteFloor() {
        let base = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 64)
        defer { base.deallocate() }
        func matrix(_ t: GGMLType, _ rows: Int, _ cols: Int, _ layout: MatrixLayout) -> Matrix {
            Matrix(format: .ggml(t), rows: rows, cols: cols, base: base, owner: nil, layout: layout)
        }
        let sets: [[Matrix]] = [
            [matrix(.q4_K, 640, 1024, .interleaved16)],  // Gemma 3 270M's attention output, 360 KiB
            [matrix(.q5_0, 1024, 640, .interleaved4), matrix(.q5_0, 256, 640, .interleaved4), matrix(.q8_0, 256, 640, .interleaved4)],
            [matrix(.q6_K, 640, 2048, .rows)],
            [matrix(.q4_0, 64, 64, .rows)],  // below one chunk's floor
            [matrix(.q4_0, 8192, 2048, .interleaved16), matrix(.q4_0, 8192, 2048, .interleaved16)],
        ]
        for threads in [1, 2, 3] {
            let pool = ThreadPool(threads: threads)
            for ws in sets {
                for tiles in [false, true] {
                    var covered: [[Range<Int>]] = ws.map { _ in [] }
                    let names = ws.map { "\($0.format) \($0.rows)x\($0.cols)" }.joined(separator: " + ")
                    Linear.withUnitChunks(ws, tiles: tiles, pool: pool) { chunks in
                        XCTAssertEqual(chunks.bounds.first, 0)
                        for c in 0..<chunks.count {
                            var bytes = 0
                            chunks.pieces(c) { i, lo, hi in
                                covered[i].append(lo..<hi)
                                bytes += ws[i].byteCount / (ws[i].rows / ws[i].unitRows) * (hi - lo)
                            }
                            if c < chunks.count - 1 {
                                XCTAssertGreaterThanOrEqual(bytes, Linear.chunkBytes, "\(names): chunk \(c) of \(chunks.count), \(threads) threads")
                                if tiles { XCTAssertEqual((chunks.bounds[c + 1] - chunks.bounds[c]) % 4, 0, "\(names): chunk \(c)") }
                            }
                        }
                    }
                    for (i, w) in ws.enumerated() {
                        var next = 0
                        for r in covered[i] {
                            XCTAssertEqual(r.lowerBound, next, "\(names): matrix \(i), \(threads) threads")
                            next = r.upperBound
                        }
                        XCTAssertEqual(next, w.rows / w.unitRows, "\(names): matrix \(i), \(threads) threads")
                    }
                }
            }
        }
    }
}
