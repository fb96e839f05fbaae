import ArgumentParser
import Foundation
import QBRunner

struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two bench results metric by metric and print a Markdown table.",
        discussion: """
            Each metric's ratio new / base of the medians comes with a 95% bootstrap interval. \
            Exit status: 0 unless a metric regressed beyond --max-regression with confidence (the \
            whole interval beyond it), then 1 (never with --report-only); 2 when a file cannot be read.
            """)

    @Argument(help: "The baseline results JSON.")
    var base: String

    @Argument(help: "The new results JSON.")
    var new: String

    @Option(name: .customLong("max-regression"), help: "Largest tolerated regression, in percent.")
    var maxRegression: Double = 10

    @Flag(name: .customLong("report-only"), help: "Print the comparison but never fail on a regression (for noisy shared machines).")
    var reportOnly = false

    func validate() throws {
        guard maxRegression.isFinite, maxRegression >= 0, maxRegression < 100 else {
            throw ValidationError("--max-regression must be a percentage in [0, 100)")
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
        let comparison = BenchComparison.compare(base: baseResult, new: newResult, maxRegression: maxRegression / 100)
        print(comparison.markdown(baseName: base, newName: new, reportOnly: reportOnly), terminator: "")
        if !comparison.regressions.isEmpty && !reportOnly { throw ExitCode(1) }
    }
}
