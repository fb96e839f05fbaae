import Foundation
import QBSupport
import QBRunner

/// The machine a run was measured on: what makes two runs' speeds comparable. The
/// fingerprint is XXH64 over the readable parts, so the same machine kind at the same
/// thread count always gives the same 16 hex digits.
public struct MachineFingerprint: Sendable, Equatable {
    public var cpuModel: String
    /// Sorted, so the order /proc/cpuinfo lists them in does not matter.
    public var cpuFlags: [String]
    public var logicalCores: Int
    public var kernel: String
    public var threads: Int

    public init(cpuModel: String, cpuFlags: [String], logicalCores: Int, kernel: String, threads: Int) {
        self.cpuModel = cpuModel
        self.cpuFlags = Array(Set(cpuFlags)).sorted()
        self.logicalCores = logicalCores
        self.kernel = kernel
        self.threads = threads
    }

    public init(_ e: EnvironmentInfo) {
        self.init(cpuModel: e.cpuModel, cpuFlags: e.cpuFlags, logicalCores: e.logicalCores, kernel: e.kernel, threads: e.threads)
    }

    public var hash: String {
        let text = "cpu=\(cpuModel)\nflags=\(cpuFlags.joined(separator: " "))\ncores=\(logicalCores)\nkernel=\(kernel)\nthreads=\(threads)\n"
        return XXH64.hex(Data(text.utf8))
    }

    /// "AMD EPYC 7B13, 2 cores, 2 threads, kernel 6.1.0".
    public var summary: String {
        "\(cpuModel), \(logicalCores) core\(logicalCores == 1 ? "" : "s"), \(threads) thread\(threads == 1 ? "" : "s"), kernel \(kernel)"
    }
}

/// One run as the history stores it, whichever command produced it: where and what was
/// measured, and per case and metric the samples.
public struct HistoryRun: Sendable {
    public enum Kind: String, Sendable { case bench, eval }

    public struct Measurement: Sendable, Equatable {
        public var caseID: String
        public var metric: String
        public var median: Double
        /// Every sample, in measurement order (a single figure, such as eval's perplexity,
        /// is its own only sample).
        public var samples: [Double]
        public init(caseID: String, metric: String, median: Double, samples: [Double]) {
            self.caseID = caseID
            self.metric = metric
            self.median = median
            self.samples = samples
        }
    }

    public var kind: Kind
    /// Identifies the run's content (XXH64 of its results JSON): recording the same run
    /// twice (bench, then an import of its file) stores it once.
    public var key: String
    public var createdAt: String
    public var commit: String
    /// "binary" when the commit was compiled into the executable that recorded the run,
    /// "results" when it came from the results' `environment.commit`.
    public var commitSource: String
    public var dirty: Bool?
    public var machine: MachineFingerprint
    public var hostname: String
    public var os: String
    public var buildConfiguration: String
    public var modelHash: String
    public var modelName: String
    /// The `--quant` setting; empty for the weights as stored.
    public var quantization: String
    public var suiteName: String
    public var suiteHash: String
    public var measurements: [Measurement]

    public init(
        kind: Kind, key: String, createdAt: String, commit: String, commitSource: String, dirty: Bool?,
        machine: MachineFingerprint, hostname: String, os: String, buildConfiguration: String, modelHash: String,
        modelName: String, quantization: String, suiteName: String, suiteHash: String, measurements: [Measurement]
    ) {
        self.kind = kind
        self.key = key
        self.createdAt = createdAt
        self.commit = commit
        self.commitSource = commitSource
        self.dirty = dirty
        self.machine = machine
        self.hostname = hostname
        self.os = os
        self.buildConfiguration = buildConfiguration
        self.modelHash = modelHash
        self.modelName = modelName
        self.quantization = quantization
        self.suiteName = suiteName
        self.suiteHash = suiteHash
        self.measurements = measurements
    }

    /// The commit to key a run by: the one compiled into the binary when known, else the
    /// results'.
    static func commit(binary: String?, results: String) -> (String, String) {
        if let b = binary?.trimmingCharacters(in: .whitespacesAndNewlines), !b.isEmpty, b != "unknown" { return (b, "binary") }
        return (results, "results")
    }

    static func measurement(_ caseID: String, _ metric: String, _ e: Estimate) -> Measurement? {
        let samples = e.samples.filter(\.isFinite)
        guard e.median.isFinite, !samples.isEmpty else { return nil }
        return Measurement(caseID: caseID, metric: metric, median: e.median, samples: samples)
    }

    static func single(_ caseID: String, _ metric: String, _ value: Double?) -> Measurement? {
        guard let value, value.isFinite else { return nil }
        return Measurement(caseID: caseID, metric: metric, median: value, samples: [value])
    }

    /// A `bench` (or `ab`) result: every metric of every case, plus the aggregate as case
    /// "aggregate".
    public init(bench r: BenchResult, binaryCommit: String? = nil) throws {
        let (commit, source) = Self.commit(binary: binaryCommit, results: r.environment.commit)
        var ms: [Measurement] = []
        for c in r.cases {
            for (metric, e) in c.metrics.sorted(by: { $0.key < $1.key }) {
                if let m = Self.measurement(c.id, metric, e) { ms.append(m) }
            }
        }
        for (metric, e) in r.aggregate.metrics.sorted(by: { $0.key < $1.key }) {
            if let m = Self.measurement("aggregate", metric, e) { ms.append(m) }
        }
        self.init(
            kind: .bench, key: XXH64.hex(try ResultsFile.encode(r)), createdAt: r.createdAt, commit: commit,
            commitSource: source, dirty: r.environment.dirty, machine: MachineFingerprint(r.environment),
            hostname: r.environment.hostname, os: r.environment.os, buildConfiguration: r.environment.buildConfiguration,
            modelHash: r.model.fileHash, modelName: r.model.name, quantization: r.model.quantization ?? "",
            suiteName: r.suite.name, suiteHash: r.suite.hash, measurements: ms)
    }

    /// An `eval` result: each setting is a case; its speeds with their samples, its size
    /// and quality figures as single values. The suite is the scored text (its hash) at the
    /// window size.
    public init(eval r: EvalResult, binaryCommit: String? = nil) throws {
        let (commit, source) = Self.commit(binary: binaryCommit, results: r.environment.commit)
        var ms: [Measurement] = []
        for s in r.settings {
            if let e = s.prefillTokensPerSecond, let m = Self.measurement(s.name, "prefill_tokens_per_s", e) { ms.append(m) }
            if let e = s.decodeTokensPerSecond, let m = Self.measurement(s.name, "decode_tokens_per_s", e) { ms.append(m) }
            let singles: [(String, Double?)] = [
                ("bits_per_weight", s.bitsPerWeight), ("weight_bytes", Double(s.weightBytes)),
                ("peak_rss_bytes", s.peakResidentBytes.map(Double.init)), ("perplexity", s.perplexity),
                ("mean_nll", s.meanNLL), ("delta_nll", s.deltaNLL), ("mean_kl", s.meanKL), ("top1_agreement", s.top1Agreement),
            ]
            for (metric, value) in singles {
                if let m = Self.single(s.name, metric, value) { ms.append(m) }
            }
        }
        let text = URL(fileURLWithPath: r.text.path).lastPathComponent
        self.init(
            kind: .eval, key: XXH64.hex(try EvalFiles.encode(r)), createdAt: r.createdAt, commit: commit, commitSource: source,
            dirty: r.environment.dirty, machine: MachineFingerprint(r.environment), hostname: r.environment.hostname,
            os: r.environment.os, buildConfiguration: r.environment.buildConfiguration, modelHash: r.model.fileHash,
            modelName: "\(r.model.format) \(r.model.parameters) parameters", quantization: "",
            suiteName: "\(text) ctx \(r.window.context)", suiteHash: XXH64.hex(Data("\(r.text.hash) ctx=\(r.window.context)".utf8)),
            measurements: ms)
    }
}
