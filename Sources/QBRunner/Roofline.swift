import Foundation
import QBKernels
import QBModel
import QBSupport

/// This machine's ceilings, measured: read bandwidth from memory (one thread and all
/// threads), fp32 FMA throughput and int8 dot-product throughput. Bench results are
/// reported as fractions of them: decode against bandwidth (it streams every weight once
/// per token), prefill against arithmetic.
public struct Roofline: Codable, Sendable {
    public static let schemaVersion = 1
    public var schemaVersion = Roofline.schemaVersion
    public var threads: Int
    /// GB/s (10^9 bytes) reading a buffer far larger than the caches.
    public var readBandwidthOneThread: Double
    public var readBandwidthAllThreads: Double
    /// GFLOP/s (an FMA counts two).
    public var fp32GflopsOneThread: Double
    public var fp32GflopsAllThreads: Double
    /// GOP/s of int8 multiply-accumulates (each counts two).
    public var int8GopsOneThread: Double
    public var int8GopsAllThreads: Double
    public var cpu: String
    /// The kernel set the probes ran on (`KernelSet`); nil in measurements from before the
    /// kernels were compiled per instruction set (the build machine's own set).
    public var kernelSet: String?
    public var measuredAt: Date

    /// Written in snake_case, as every other key of the results; files written before the
    /// keys were renamed (camelCase) are still read.
    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version", threads
        case readBandwidthOneThread = "read_bandwidth_one_thread_gbps", readBandwidthAllThreads = "read_bandwidth_all_threads_gbps"
        case fp32GflopsOneThread = "fp32_gflops_one_thread", fp32GflopsAllThreads = "fp32_gflops_all_threads"
        case int8GopsOneThread = "int8_gops_one_thread", int8GopsAllThreads = "int8_gops_all_threads"
        case cpu, kernelSet = "kernel_set", measuredAt = "measured_at"
    }

    /// The keys before the rename.
    enum LegacyKeys: String, CodingKey {
        case schemaVersion, threads, readBandwidthOneThread, readBandwidthAllThreads, fp32GflopsOneThread
        case fp32GflopsAllThreads, int8GopsOneThread, int8GopsAllThreads, cpu, measuredAt
    }

    public init(
        threads: Int, readBandwidthOneThread: Double, readBandwidthAllThreads: Double, fp32GflopsOneThread: Double,
        fp32GflopsAllThreads: Double, int8GopsOneThread: Double, int8GopsAllThreads: Double, cpu: String, kernelSet: String? = nil, measuredAt: Date
    ) {
        self.threads = threads
        self.readBandwidthOneThread = readBandwidthOneThread
        self.readBandwidthAllThreads = readBandwidthAllThreads
        self.fp32GflopsOneThread = fp32GflopsOneThread
        self.fp32GflopsAllThreads = fp32GflopsAllThreads
        self.int8GopsOneThread = int8GopsOneThread
        self.int8GopsAllThreads = int8GopsAllThreads
        self.cpu = cpu
        self.kernelSet = kernelSet
        self.measuredAt = measuredAt
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        if c.contains(.threads) && c.contains(.readBandwidthAllThreads) {
            self.init(
                threads: try c.decode(Int.self, forKey: .threads),
                readBandwidthOneThread: try c.decode(Double.self, forKey: .readBandwidthOneThread),
                readBandwidthAllThreads: try c.decode(Double.self, forKey: .readBandwidthAllThreads),
                fp32GflopsOneThread: try c.decode(Double.self, forKey: .fp32GflopsOneThread),
                fp32GflopsAllThreads: try c.decode(Double.self, forKey: .fp32GflopsAllThreads),
                int8GopsOneThread: try c.decode(Double.self, forKey: .int8GopsOneThread),
                int8GopsAllThreads: try c.decode(Double.self, forKey: .int8GopsAllThreads),
                cpu: try c.decode(String.self, forKey: .cpu), kernelSet: try c.decodeIfPresent(String.self, forKey: .kernelSet),
                measuredAt: try c.decode(Date.self, forKey: .measuredAt))
            schemaVersion = try c.decodeIfPresent(Int.self, forKey: .schemaVersion) ?? Roofline.schemaVersion
            return
        }
        let l = try decoder.container(keyedBy: LegacyKeys.self)
        self.init(
            threads: try l.decode(Int.self, forKey: .threads),
            readBandwidthOneThread: try l.decode(Double.self, forKey: .readBandwidthOneThread),
            readBandwidthAllThreads: try l.decode(Double.self, forKey: .readBandwidthAllThreads),
            fp32GflopsOneThread: try l.decode(Double.self, forKey: .fp32GflopsOneThread),
            fp32GflopsAllThreads: try l.decode(Double.self, forKey: .fp32GflopsAllThreads),
            int8GopsOneThread: try l.decode(Double.self, forKey: .int8GopsOneThread),
            int8GopsAllThreads: try l.decode(Double.self, forKey: .int8GopsAllThreads),
            cpu: try l.decode(String.self, forKey: .cpu), measuredAt: try l.decode(Date.self, forKey: .measuredAt))
        schemaVersion = try l.decodeIfPresent(Int.self, forKey: .schemaVersion) ?? Roofline.schemaVersion
    }

    /// Measures, taking the median of `repetitions` runs of each probe.
    public static func measure(pool: ThreadPool, bufferBytes: Int = 1 << 30, repetitions: Int = 5) -> Roofline {
        let threads = pool.threadCount
        let bytes = bufferBytes / (256 * threads) * 256 * threads
        // Mapped directly, not through malloc (tcmalloc would keep the freed gigabyte in its
        // heap, and `bench --roofline` would then report it in the model's peak memory), on
        // huge pages as the weights are: on 4 KiB pages the probe read slower than decode.
        let mapped = PageBuffer(bytes: bytes)
        defer { withExtendedLifetime(mapped) {} }
        let buffer = mapped.pointer
        // Touch every page so the probe reads memory, not page faults.
        memset(buffer, 1, bytes)
        // One 64-byte line per thread, so the sinks do not share lines.
        let sink = UnsafeMutablePointer<UInt64>.allocate(capacity: 8 * threads)
        defer { sink.deallocate() }

        func bandwidth(threads n: Int) -> Double {
            median((0..<repetitions).map { _ in readOnce(buffer, bytes: bytes, threads: n, pool: pool, sink: sink) })
        }
        let fsink = UnsafeMutablePointer<Float>.allocate(capacity: 8 * threads)
        let isink = UnsafeMutablePointer<Int32>.allocate(capacity: 8 * threads)
        defer { fsink.deallocate(); isink.deallocate() }
        func compute(threads n: Int, _ kernel: (Int, Int64) -> Double) -> Double {
            let iterations: Int64 = 20_000_000
            return median((0..<repetitions).map { _ in
                let t0 = Date()
                var ops = [Double](repeating: 0, count: n)
                ops.withUnsafeMutableBufferPointer { o in
                    let p = o.baseAddress!
                    pool.parallelFor(n) { range, _ in for i in range { p[i] = kernel(i, iterations) } }
                }
                return ops.reduce(0, +) / Date().timeIntervalSince(t0) / 1e9
            })
        }
        let fma: (Int, Int64) -> Double = { i, n in RooflineProbes.fma(iterations: n, sink: fsink + 8 * i) }
        let int8: (Int, Int64) -> Double = { i, n in RooflineProbes.int8(iterations: n, sink: isink + 8 * i) }
        return Roofline(
            threads: threads,
            readBandwidthOneThread: bandwidth(threads: 1), readBandwidthAllThreads: bandwidth(threads: threads),
            fp32GflopsOneThread: compute(threads: 1, fma), fp32GflopsAllThreads: compute(threads: threads, fma),
            int8GopsOneThread: compute(threads: 1, int8), int8GopsAllThreads: compute(threads: threads, int8),
            cpu: CPUInfo.modelName, kernelSet: KernelSet.active.name, measuredAt: Date())
    }

    /// GB/s of one read of `bytes` at `buffer`, split evenly over `n` of the pool's threads.
    public static func readOnce(_ buffer: UnsafeMutableRawPointer, bytes: Int, threads n: Int, pool: ThreadPool, sink: UnsafeMutablePointer<UInt64>) -> Double {
        let share = bytes / (256 * n) * 256
        let t0 = Date()
        pool.parallelFor(n) { range, _ in
            for i in range { sink[i * 8] = RooflineProbes.read(buffer + i * share, bytes: share) }
        }
        return Double(share * n) / Date().timeIntervalSince(t0) / 1e9
    }

    /// A short read-bandwidth probe on all the pool's threads (GB/s): `bench --roofline`
    /// runs it right before each decode repetition, so each repetition is set against the
    /// bandwidth of its own moment (this machine's drifts by a third within minutes). The
    /// buffer is mapped (huge pages, as `measure`), read twice (the first read after
    /// touching it finds its end still in the cache) and unmapped, so it never counts in the
    /// run's memory.
    public static func probeReadBandwidth(pool: ThreadPool, bytes: Int = 512 << 20) -> Double {
        let mapped = PageBuffer(bytes: bytes)
        defer { withExtendedLifetime(mapped) {} }
        let buffer = mapped.pointer
        memset(buffer, 1, bytes)
        let sink = UnsafeMutablePointer<UInt64>.allocate(capacity: 8 * max(1, pool.threadCount))
        defer { sink.deallocate() }
        _ = readOnce(buffer, bytes: bytes, threads: pool.threadCount, pool: pool, sink: sink)
        return readOnce(buffer, bytes: bytes, threads: pool.threadCount, pool: pool, sink: sink)
    }

    static func median(_ v: [Double]) -> Double { Quantiles.median(v) ?? 0 }

    /// Where measurements are kept between runs: `$XDG_CACHE_HOME/quantbench/roofline.json`.
    public static var storeURL: URL {
        DefaultModel.directory.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("roofline.json")
    }

    /// The stored measurement for this thread count and the active kernel set, if any: the
    /// int8 and fp32 ceilings differ per set, so a bench run on a lowered set is held
    /// against its own. One stored before sets were recorded counts as the best set's (it
    /// ran a build for this CPU).
    public static func stored(threads: Int) -> Roofline? {
        guard let data = try? Data(contentsOf: storeURL),
              let all = try? JSONDecoder.iso8601.decode([Roofline].self, from: data) else { return nil }
        let set = KernelSet.active.name
        return all.last { $0.threads == threads && $0.schemaVersion == schemaVersion && $0.set == set }
    }

    /// The kernel set a measurement ran on, as `stored` matches it.
    var set: String { kernelSet ?? KernelSet.best.name }

    /// Adds (or replaces) this measurement in the store, atomically.
    public func store() throws {
        var all = (try? JSONDecoder.iso8601.decode([Roofline].self, from: Data(contentsOf: Self.storeURL))) ?? []
        all.removeAll { $0.threads == threads && $0.set == set }
        all.append(self)
        try FileManager.default.createDirectory(at: Self.storeURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try AtomicWriter.write(try JSONEncoder.iso8601.encode(all), to: Self.storeURL)
    }

    public var table: String {
        """
        | ceiling | 1 thread | \(threads) threads |
        |---|---|---|
        | read bandwidth (GB/s) | \(String(format: "%.1f", readBandwidthOneThread)) | \(String(format: "%.1f", readBandwidthAllThreads)) |
        | fp32 FMA (GFLOP/s) | \(String(format: "%.1f", fp32GflopsOneThread)) | \(String(format: "%.1f", fp32GflopsAllThreads)) |
        | int8 dot (GOP/s) | \(String(format: "%.1f", int8GopsOneThread)) | \(String(format: "%.1f", int8GopsAllThreads)) |
        """
    }
}

extension JSONEncoder {
    static var iso8601: JSONEncoder {
        let e = JSONEncoder()
        e.dateEncodingStrategy = .iso8601
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        return e
    }
}

extension JSONDecoder {
    static var iso8601: JSONDecoder {
        let d = JSONDecoder()
        d.dateDecodingStrategy = .iso8601
        return d
    }
}
