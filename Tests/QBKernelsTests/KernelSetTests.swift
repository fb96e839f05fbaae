import Foundation
import XCTest
import QBTestSupport
@testable import QBKernels
import CQBKernels

/// The kernel set chosen at start-up: the best one the CPU runs (read from cpuid), lowered
/// only by `QB_KERNELS`, switchable for tests.
final class KernelSetTests: XCTestCase {
    /// The dispatch's own cpuid reading against the features the kernel reports in
    /// /proc/cpuinfo (which also drops AVX-512 when the OS does not save its registers).
    func testBestSetMatchesTheCPUsFeatures() throws {
        let flags = Set(CPUInfo.flags)
        #if arch(x86_64)
            try XCTSkipIf(flags.isEmpty, "no /proc/cpuinfo flags to compare with")
            // x86-64-v3 as the avx2 set is compiled (LZCNT is "abm" there), and x86-64-v4's
            // AVX-512 subsets with VNNI for the avx512 set.
            let v3: Set = ["avx2", "fma", "f16c", "bmi1", "bmi2", "abm", "movbe"]
            let v4: Set = ["avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", "avx512_vnni"]
            let expected: KernelSet = !v3.isSubset(of: flags) ? .portable : v4.isSubset(of: flags) ? .avx512 : .avx2
        #else
            let expected = KernelSet.portable
        #endif
        print("CPU \(CPUInfo.modelName): best kernel set \(KernelSet.best.name), active \(KernelSet.active.name)")
        XCTAssertEqual(KernelSet.best, expected)
        XCTAssertEqual(KernelSet.supported, KernelSet.allCases.filter { $0 <= expected })
    }

    /// The cpuid generation from /proc/cpuinfo's "cpu family" and "model" keys, matched
    /// exactly ("model name" is another key, before or after), nil when either is missing.
    func testCPUIDIsFamilyAndModelFromTheirOwnKeys() {
        let zen4 = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel name\t: AMD EPYC\nmodel\t\t: 17\nflags\t\t: fpu\n"
        XCTAssertEqual(CPUInfo.cpuid(cpuinfo: zen4), "family 25 model 17")
        XCTAssertEqual(CPUInfo.field("model name", in: zen4), "AMD EPYC")
        XCTAssertNil(CPUInfo.cpuid(cpuinfo: "model name\t: AMD EPYC\nmodel\t: 17\n"), "no family")
        XCTAssertNil(CPUInfo.cpuid(cpuinfo: "cpu family\t: 25\nmodel name\t: AMD EPYC\n"), "no model")
        XCTAssertNil(CPUInfo.cpuid(cpuinfo: "cpu family\t: x\nmodel\t: 17\n"), "not a number")
        #if arch(x86_64) && os(Linux)
            XCTAssertNotNil(CPUInfo.cpuid, "x86 Linux lists both")
        #endif
    }

    /// The one-row decode streams' own prefetches, as the dispatch reads the CPU from cpuid,
    /// against /proc/cpuinfo's vendor and family: off on AMD's families after 23 (Zen 3 to
    /// 5; measured faster without them on Zen 4, Zen 3 not measured), on elsewhere (Zen 1 and
    /// 2, Intel) unless the environment says otherwise.
    func testStreamPrefetchFollowsTheCPUsVendorAndFamily() throws {
        let env = ProcessInfo.processInfo.environment
        try XCTSkipIf(env["QB_STREAM_PREFETCH"] != nil || env["QB_X16_PREFETCH"] != nil, "the environment sets the choice")
        #if arch(x86_64) && os(Linux)
            let vendor = try XCTUnwrap(CPUInfo.field("vendor_id")), family = try XCTUnwrap(CPUInfo.field("cpu family").flatMap { Int($0) })
            print("CPU \(vendor) family \(family): decode streams prefetch themselves: \(KernelSet.streamPrefetch)")
            XCTAssertEqual(KernelSet.streamPrefetch, !(vendor == "AuthenticAMD" && family > 23))
        #else
            throw XCTSkip("cpuid is read on x86-64 Linux only")
        #endif
    }

    /// The avx512 set's Q4_K prefill scales by vpdpwssd on Intel's CPUs and by vpmulld
    /// elsewhere (the dispatch reads the vendor from cpuid; /proc/cpuinfo's here), unless the
    /// environment says otherwise; every set holds the choice the dispatch made.
    func testQ4KScaleProductsFollowTheCPUsVendor() throws {
        try XCTSkipIf(ProcessInfo.processInfo.environment["QB_Q4K_DPWSSD"] != nil, "the environment sets the choice")
        #if arch(x86_64) && os(Linux)
            let vendor = try XCTUnwrap(CPUInfo.field("vendor_id"))
            XCTAssertEqual(qb_kernel_q4k_dpwssd() != 0, vendor == "GenuineIntel", vendor)
            _ = KernelSet.active  // the first choice tunes every set
            let held = qb_set_q4k_dpwssd(0)
            qb_set_q4k_dpwssd(held)
            XCTAssertEqual(held, qb_kernel_q4k_dpwssd(), "the active set's setting")
        #else
            throw XCTSkip("cpuid is read on x86-64 Linux only")
        #endif
    }

    /// The set at start-up is the best, or the lower one QB_KERNELS names; `use` switches to
    /// any set the CPU runs and refuses the others without changing anything.
    func testActiveSetFollowsEnvironmentAndUse() {
        let asked = ProcessInfo.processInfo.environment[KernelSet.environmentVariable].flatMap(KernelSet.init(name:))
        let before = KernelSet.active
        XCTAssertEqual(before, asked.map { $0 <= KernelSet.best ? $0 : KernelSet.best } ?? KernelSet.best)
        defer { KernelSet.use(before) }
        for set in KernelSet.allCases {
            let ok = KernelSet.use(set)
            XCTAssertEqual(ok, set <= KernelSet.best, set.name)
            if ok { XCTAssertEqual(KernelSet.active, set) } else { XCTAssertNotEqual(KernelSet.active, set) }
        }
        XCTAssertEqual(KernelSet(name: "AVX2"), .avx2)
        XCTAssertNil(KernelSet(name: "sse9"))
    }
}
