#if canImport(Glibc)
import Glibc
#endif
import Foundation
import QBKernels

/// Where and how a result was produced: enough to tell whether two results are
/// comparable (same machine kind, build, thread count) and to reproduce one.
public struct EnvironmentInfo: Codable, Sendable, Equatable {
    /// The commit this binary was built from (`git rev-parse HEAD` at build time, compiled
    /// in by the BuildInfo plugin), or "unknown" for a build outside a git checkout; never
    /// the working directory's.
    public var commit: String
    /// Whether tracked files had uncommitted changes when the binary was built (nil when
    /// unknown).
    public var dirty: Bool?
    /// "release" or "debug" (how this binary was compiled).
    public var buildConfiguration: String
    /// The compiler flags Package.swift gives the engine's modules.
    public var buildFlags: [String]
    /// The kernel set that ran (`KernelSet`: "avx512", "avx2" or "portable"): the best this
    /// CPU runs unless `QB_KERNELS` lowered it. Nil in results written before the kernels
    /// were compiled per instruction set (those binaries were built for the CPU they ran on).
    public var kernelSet: String?
    /// Whether the one-row decode streams that can leave their stream to the hardware
    /// prefetcher prefetched it themselves (`KernelSet.streamPrefetch`: off on AMD CPUs unless
    /// `QB_STREAM_PREFETCH` said otherwise). Nil in results written before it was recorded.
    public var streamPrefetch: Bool?
    /// Whether the avx512 set's Q4_K prefill met its scales by vpdpwssd (`KernelSet.q4kDpwssd`:
    /// on Intel CPUs unless `QB_Q4K_DPWSSD` said otherwise). Nil where another set ran, and in
    /// results written before it was recorded.
    public var q4kDpwssd: Bool?
    /// The Swift compiler version the binary was built with (major.minor).
    public var swiftVersion: String
    public var os: String
    public var kernel: String
    public var hostname: String
    /// /proc/cpuinfo's "model name" and "flags" (`CPUInfo`).
    public var cpuModel: String
    /// "family 25 model 17" (`CPUInfo.cpuid`): which generation a generic model name is. Nil
    /// where /proc/cpuinfo has no such fields, and in results written before it was recorded.
    public var cpuID: String? = nil
    public var cpuFlags: [String]
    public var logicalCores: Int
    /// Worker threads the engine ran with.
    public var threads: Int

    enum CodingKeys: String, CodingKey {
        case commit, dirty, buildConfiguration = "build_configuration", buildFlags = "build_flags", kernelSet = "kernel_set"
        case streamPrefetch = "stream_prefetch", q4kDpwssd = "q4k_dpwssd"
        case swiftVersion = "swift_version", os, kernel, hostname, cpuModel = "cpu_model", cpuID = "cpu_id", cpuFlags = "cpu_flags"
        case logicalCores = "logical_cores", threads
    }

    /// This process's environment.
    public static func current(threads: Int) -> EnvironmentInfo {
        EnvironmentInfo(
            commit: BuildInfo.commit, dirty: BuildInfo.dirty,
            buildConfiguration: buildConfiguration, buildFlags: buildFlags, kernelSet: KernelSet.active.name,
            streamPrefetch: KernelSet.streamPrefetch, q4kDpwssd: KernelSet.active == .avx512 ? KernelSet.q4kDpwssd : nil,
            swiftVersion: swiftVersion,
            os: osName(), kernel: uname().release, hostname: ProcessInfo.processInfo.hostName, cpuModel: CPUInfo.modelName,
            cpuID: CPUInfo.cpuid, cpuFlags: CPUInfo.flags, logicalCores: ProcessInfo.processInfo.activeProcessorCount, threads: threads)
    }

    /// `quantbench --version`: the commit compiled in and how the binary was built.
    public static var versionDescription: String {
        let dirtyNote = BuildInfo.dirty == true ? " (dirty: uncommitted changes at build time)" : ""
        return """
            quantbench \(BuildInfo.commit == "unknown" ? "unknown" : String(BuildInfo.commit.prefix(12)))\(BuildInfo.dirty == true ? "-dirty" : "")
            commit: \(BuildInfo.commit)\(dirtyNote)
            build configuration: \(buildConfiguration)
            cpu: \(cpuDescription(model: CPUInfo.modelName, cpuID: CPUInfo.cpuid))
            swift: \(swiftVersion)
            flags: \(buildFlags.joined(separator: " "))
            kernels: \(KernelSet.active.name) (this CPU's best: \(KernelSet.best.name); \(KernelSet.environmentVariable)=\(KernelSet.allCases.map(\.name).joined(separator: "|")) lowers it)
            one-row decode streams prefetch themselves: \(KernelSet.streamPrefetch ? "yes" : "no, the hardware prefetcher does (avx2's Q4_K and Q6_K hint L2 far ahead)") (Q4_0, Q4_K, Q6_K and 4-bit MLX in sixteen-row groups, Q8_0 on avx512; \(KernelSet.streamPrefetchVariable)=0|1 sets it)
            avx512 Q4_K prefill scales: \(KernelSet.q4kDpwssd ? "vpdpwssd per 16 values" : "vpmulld per 32 values") (the same outputs; \(KernelSet.q4kDpwssdVariable)=0|1 sets it)
            """
    }

    /// "AMD EPYC (cpuid family 25 model 17)": the model name with the generation where known.
    public static func cpuDescription(model: String, cpuID: String?) -> String {
        model + (cpuID.map { " (cpuid \($0))" } ?? "")
    }

    /// This result's CPU as `cpuDescription` gives it.
    public var cpu: String { Self.cpuDescription(model: cpuModel, cpuID: cpuID) }

    public static var buildConfiguration: String {
        #if DEBUG
            return "debug"
        #else
            return "release"
        #endif
    }

    /// Package.swift's flags for the engine (C kernels and Swift modules); kept in step by
    /// hand, since a binary cannot read back how it was compiled.
    public static let buildFlags = [
        "-O3", "-ffp-contract=on", "kernels avx512: -march=x86-64-v4 -mavx512vnni -mprefer-vector-width=512",
        "kernels avx2: -march=x86-64-v3", "kernels portable: (baseline)",
    ] + [buildConfiguration == "release" ? "swift: -O (release)" : "swift: -Onone (debug)"]

    static var swiftVersion: String {
        #if compiler(>=6.4)
            return ">=6.4"
        #elseif compiler(>=6.3)
            return "6.3"
        #elseif compiler(>=6.2)
            return "6.2"
        #elseif compiler(>=6.1)
            return "6.1"
        #else
            return "<6.1"
        #endif
    }

    static func osName() -> String {
        guard let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) else { return uname().sysname }
        for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
            return line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return uname().sysname
    }

    static func uname() -> (sysname: String, release: String) {
        var u = utsname()
        guard Glibc.uname(&u) == 0 else { return ("unknown", "unknown") }
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return (field(u.sysname), field(u.release))
    }

    /// Runs a command and returns its standard output, or nil when it fails.
    static func run(_ executable: String, _ arguments: [String]) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        do { try p.run() } catch { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { return nil }
        return String(data: data, encoding: .utf8)
    }
}
