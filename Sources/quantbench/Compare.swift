import ArgumentParser
import Foundation
import QBSupport
import QBRunner

struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two bench results metric by metric and print a Markdown table.",
        discussion: """
            Each metric is tested with a one-sided Mann-Whitney U test on the two files' samples, Holm over all \
            metrics at alpha = 5%; a metric gates when significant and worse than --max-regression (times), \
            --max-work-regression (work counters), or by more than 2 MiB and that share (memory). Unpaired files \
            from different times or machines prove little: gate CI on `ab`. Exit status: 0 fine, 1 a regression \
            (never with --report-only), 2 a file that cannot be read or a metric missing, NaN or infinite in one, \
            3 a correctness check failed in the new result.
            """)

    @Argument(help: "The baseline results JSON.")
    var base: String

    @Argument(help: "The new results JSON.")
    var new: String

    @Option(name: .customLong("max-regression"), help: "Largest tolerated regression, in percent.")
    var maxRegression: Double = 10

    @Option(name: .customLong("max-work-regression"), help: "Largest tolerated regression of work counters, in percent.")
    var maxWorkRegression: Double = GatePolicy.defaultWorkThreshold * 100

    @Option(help: "Write the Markdown verdict here (it also goes to $GITHUB_STEP_SUMMARY when set).")
    var summary: String?

    @Option(help: "Write JUnit XML here: each check and each gated metric a test case.")
    var junit: String?

    @Flag(name: .customLong("report-only"), help: "Print the comparison but never fail on a regression (for noisy shared machines).")
    var reportOnly = false

    func validate() throws {
        for (name, v) in [("--max-regression", maxRegression), ("--max-work-regression", maxWorkRegression)] {
            guard v.isFinite, v >= 0, v < 100 else { throw ValidationError("\(name) must be a percentage in [0, 100)") }
        }
    }

    func run() throws {
        let baseResult: BenchResult, newResult: BenchResult
        do {
            baseResult = try ResultsFile.load(path: base)
            newResult = try ResultsFile.load(path: new)
        } catch let e as LocatedError {
            FileHandle.standardError.write(Data("error: \(e)\n".utf8))
            throw ExitCode(2)
        }
        let comparison = BenchComparison.compare(
            base: baseResult, new: newResult, maxRegression: maxRegression / 100, workThreshold: maxWorkRegression / 100)
        let report = comparison.report(baseName: base, newName: new, reportOnly: reportOnly)
        print(report.markdown(), terminator: "")
        do {
            try report.writeSummary(to: summary)
            if let junit { try AtomicWriter.write(Data(report.junit().utf8), to: URL(fileURLWithPath: junit)) }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        for r in report.invalid { FileHandle.standardError.write(Data("error: \(r.label): \(r.detail ?? "cannot be judged")\n".utf8)) }
        if report.status != .fine { throw ExitCode(report.status.rawValue) }
    }
}
