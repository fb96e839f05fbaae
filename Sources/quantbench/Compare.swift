import ArgumentParser
import Foundation
import QBSupport
import QBRunner

struct Compare: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compare two bench results (or two eval results) metric by metric and print a Markdown table.",
        discussion: """
            Two eval results (what `eval` writes) are compared setting by setting: perplexity, PPL ratio, \
            mean KL, Δp, RMS Δp and same top p with their standard errors, a difference flagged when it exceeds \
            1.96 combined errors; speeds when their 95% intervals do not overlap; sizes exactly. The two must \
            have scored the same text, windows and model against the same reference. Exit status: 0 nothing \
            worse, 1 a quality figure worse beyond its uncertainty (never with --report-only), 2 a file that \
            cannot be read, results of different kinds or measurements, a figure NaN or missing, no setting in common.

            Each metric is tested with a one-sided Mann-Whitney U test on the two files' samples, Holm over all \
            metrics at alpha = 5%; a metric gates when significant, worse by at least two thirds of --max-regression \
            (times) or --max-work-regression (work counters) with its 95% interval reaching it but excluding a \
            third of it, or by more than \
            2 MiB and that share (memory). Unpaired files \
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
        // Before anything is read: each output can be written and replaces neither input
        // (`--junit base.json` would otherwise turn the baseline into XML). Exit 2, as for a
        // file that cannot be read: 1 would say "regression".
        for case let (flag, path?) in [("--summary", summary), ("--junit", junit)] {
            do {
                try OutputGuard.check(output: path, kind: .file, flag: flag, inputs: [base, new])
            } catch {
                FileHandle.standardError.write(Data("error: \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        // The kind of result decides the comparison; two kinds never compare.
        let kinds: (String?, String?)
        do {
            kinds = (try ResultsFile.declaredSchema(path: base).schema, try ResultsFile.declaredSchema(path: new).schema)
        } catch let e as LocatedError {
            FileHandle.standardError.write(Data("error: \(e)\n".utf8))
            throw ExitCode(2)
        }
        if kinds.0 != kinds.1 && (kinds.0 == EvalResult.schemaName || kinds.1 == EvalResult.schemaName) {
            func kind(_ s: String?) -> String { s.map { "a '\(OutputGuard.shown($0, limit: 40))' result" } ?? "a file without a schema" }
            FileHandle.standardError.write(Data("error: \(new): is \(kind(kinds.1)) and \(base) is \(kind(kinds.0)); compare reads two bench results or two eval results\n".utf8))
            throw ExitCode(2)
        }
        if kinds.0 == EvalResult.schemaName { return try compareEvals() }
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

    /// Two eval results, setting by setting (see `EvalComparison`).
    func compareEvals() throws {
        if junit != nil { throw ValidationError("--junit is for bench results; two eval results give the Markdown table (and --summary)") }
        let comparison: EvalComparison
        do {
            let b = try EvalFiles.load(path: base), n = try EvalFiles.load(path: new)
            try EvalComparison.checkComparable(base: b, basePath: base, new: n, newPath: new)
            comparison = EvalComparison.compare(base: b, new: n)
        } catch let e as LocatedError {
            FileHandle.standardError.write(Data("error: \(e)\n".utf8))
            throw ExitCode(2)
        }
        let md = comparison.markdown(baseName: base, newName: new, reportOnly: reportOnly)
        print(md, terminator: "")
        do {
            if let summary { try AtomicWriter.write(Data(md.utf8), to: URL(fileURLWithPath: summary)) }
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            throw ExitCode(2)
        }
        for r in comparison.invalid { FileHandle.standardError.write(Data("error: \(r.setting) \(r.metric): NaN, infinite or missing; cannot be judged\n".utf8)) }
        if comparison.rows.isEmpty { FileHandle.standardError.write(Data("error: \(new): shares no setting with \(base)\n".utf8)) }
        let status = comparison.status(reportOnly: reportOnly)
        if status != 0 { throw ExitCode(status) }
    }
}
