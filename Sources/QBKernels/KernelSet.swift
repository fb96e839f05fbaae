import CQBKernels
import Foundation

/// The instruction sets the C kernels are compiled for (`qb_kernel_set.h`). One binary holds
/// all of them; the kernels run the active one, chosen at the first kernel call from the
/// CPU's features (cpuid, with the OS's consent for AVX-512 registers), or lowered by the
/// environment variable `QB_KERNELS` so one machine can test and time each set. Results
/// record which set ran.
public enum KernelSet: Int32, CaseIterable, Sendable, Comparable, CustomStringConvertible {
    /// Plain C, any CPU.
    case portable = 0
    /// x86-64-v3: AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE.
    case avx2 = 1
    /// x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) with AVX-512 VNNI.
    case avx512 = 2

    /// The environment variable that lowers the set.
    public static let environmentVariable = "QB_KERNELS"

    /// "avx512", "avx2", "portable": what `QB_KERNELS` takes and results record.
    public var name: String { String(cString: qb_kernel_set_name(rawValue)) }
    public var description: String { name }

    /// The instructions a CPU needs for the set (for messages and documentation).
    public var requirement: String {
        switch self {
        case .portable: return "any CPU"
        case .avx2: return "x86-64-v3 (AVX2, FMA, F16C, BMI1/2, LZCNT, MOVBE)"
        case .avx512: return "x86-64-v4 (AVX-512 F/BW/CD/DQ/VL) with AVX-512 VNNI"
        }
    }

    /// The set of that name (as `QB_KERNELS` spells it, any case), or nil.
    public init?(name: String) {
        guard let set = Self.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = set
    }

    public static func < (a: KernelSet, b: KernelSet) -> Bool { a.rawValue < b.rawValue }

    /// The environment variable that overrides `streamPrefetch` ("0" or "1"; its first name,
    /// `QB_X16_PREFETCH`, is read too).
    public static let streamPrefetchVariable = "QB_STREAM_PREFETCH"

    /// Whether the one-row decode streams timed faster without their own prefetches on some CPU
    /// (Q4_0, Q4_K and 4-bit MLX from sixteen-row groups; Q6_K from sixteen-row groups on the
    /// avx512 and avx2 sets; Q8_0 from four-row groups on the avx512 set) prefetch themselves
    /// (true) or leave it to the hardware prefetcher (false; the avx2 set's Q4_K and Q6_K
    /// groups then hint each line into L2 far ahead, nothing into L1): false on AMD CPUs from
    /// Zen 3 on, true elsewhere, unless `QB_STREAM_PREFETCH` says. Results record it.
    public static var streamPrefetch: Bool { qb_kernel_stream_prefetch() != 0 }

    /// The environment variable that overrides `q4kDpwssd` ("0" or "1").
    public static let q4kDpwssdVariable = "QB_Q4K_DPWSSD"

    /// Whether the avx512 set's Q4_K prefill meets its sub-block scales by one vpdpwssd per 16
    /// values (true: on Intel's CPUs, where a vpmulld is two operations) or one vpmulld per 32
    /// (false: elsewhere), unless `QB_Q4K_DPWSSD` says. The outputs are the same bits either
    /// way. Results record it where the avx512 set ran.
    public static var q4kDpwssd: Bool { qb_kernel_q4k_dpwssd() != 0 }

    /// The set the kernels run now.
    public static var active: KernelSet { KernelSet(rawValue: qb_kernel_set()) ?? .portable }

    /// The best set this CPU runs.
    public static var best: KernelSet { KernelSet(rawValue: qb_kernel_set_best()) ?? .portable }

    /// Every set this CPU runs, lowest first.
    public static var supported: [KernelSet] { allCases.filter { $0 <= best } }

    /// Makes `set` the active one; false (nothing changed) when this CPU cannot run it. Only
    /// while no kernel runs (start-up, tests): a switch during a parallel section would mix
    /// sets within one product.
    @discardableResult
    public static func use(_ set: KernelSet) -> Bool { qb_kernel_set_use(set.rawValue) != 0 }

    /// Why `QB_KERNELS` was not followed, when it is set to a name that is no set or to a set
    /// this CPU cannot run (the best set runs instead); nil when it is unset or followed.
    public static var environmentWarning: String? {
        guard let value = ProcessInfo.processInfo.environment[environmentVariable], !value.isEmpty else { return nil }
        guard let asked = KernelSet(name: value) else {
            let names = allCases.map(\.name).joined(separator: ", ")
            return "\(environmentVariable)=\(value) names no kernel set (\(names)); running \(active.name)"
        }
        if asked > best {
            return "\(environmentVariable)=\(value): this CPU cannot run it (it needs \(asked.requirement)); running \(active.name)"
        }
        return nil
    }
}
