import ArgumentParser
import Foundation
import QBSupport
import QBHistory
import QBRunner

/// `--db` / `--no-db` of the commands that record their runs (bench, eval, ab).
struct DatabaseOptions: ParsableArguments {
    @Option(help: "History database: a SQLite file or a postgres:// URL (default: $QB_DB, else \(HistoryTarget.defaultPath)).")
    var db: String?

    @Flag(name: .customLong("no-db"), help: "Do not record this run in the history database.")
    var noDB = false

    /// The commit compiled into this executable, preferred over the results' (working
    /// directory's) commit; nil until the build records one.
    static let binaryCommit: String? = nil

    func validate() throws {
        if noDB && db != nil { throw ValidationError("--db and --no-db are alternatives; give one") }
        if let db, db.isEmpty { throw ValidationError("--db needs a file path or a postgres:// URL") }
    }

    var target: HistoryTarget? { noDB ? nil : HistoryTarget.resolve(db) }

    /// After the results JSON is written: records the run, or warns in one line on
    /// standard error (the run's files stay as written).
    func record(_ result: BenchResult, by command: String = "bench", jsonPath: String) {
        guard let target else { return }
        report(HistoryRecorder.record(result, into: target, recordedBy: command, binaryCommit: Self.binaryCommit, sourceFile: jsonPath), target)
    }

    func record(_ result: EvalResult, jsonPath: String) {
        guard let target else { return }
        report(HistoryRecorder.record(result, into: target, binaryCommit: Self.binaryCommit, sourceFile: jsonPath), target)
    }

    private func report(_ outcome: HistoryRecorder.Outcome, _ target: HistoryTarget) {
        let line = HistoryRecorder.warning(outcome) ?? (outcome == .recorded ? "recorded in the history (\(target))" : "already in the history (\(target))")
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}

/// Database errors of `history` and `import`: one line, exit status 2.
func historyFailure(_ error: any Error) -> ExitCode {
    let message = error is HistoryError ? "\(error)" : HistoryError.describe(error)
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    return ExitCode(2)
}

extension HistoryError {
    static func describe(_ error: any Error) -> String {
        String(describing: error).split(whereSeparator: \.isNewline).joined(separator: "; ")
    }
}

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the recorded history per case and metric in commit order, with its change points.",
        discussion: """
            Each series is one metric of one case on one machine (fingerprint: CPU model and flags, \
            cores, kernel, threads), model, suite and build configuration; each point is a commit \
            (the median of its runs), in the order commits were first recorded. Change points are \
            found by e-divisive means with a t-test, as Apache Otava does; each names the first \
            commit after the step and the step's size. Exit status: 0, or 2 when the database \
            cannot be read.
            """)

    @Option(help: "History database: a SQLite file or a postgres:// URL (default: $QB_DB, else \(HistoryTarget.defaultPath)).")
    var db: String?

    @Option(name: .customLong("case"), help: "Only this case (bench case id, eval setting, or 'aggregate').")
    var caseID: String?

    @Option(help: "Only this metric (e.g. decode_tokens_per_s, tokens_per_s, perplexity).")
    var metric: String?

    @Option(help: "Start at the first run recorded at this commit (a prefix of it).")
    var since: String?

    @Option(help: "Only the machine whose fingerprint starts with this.")
    var machine: String?

    @Option(help: "Only the model whose hash starts with this.")
    var model: String?

    @Option(help: "Only this suite name.")
    var suite: String?

    @Option(help: "Also draw the series and their change points into this SVG file.")
    var svg: String?

    @Option(help: "Change points: the sliding window, in points (Otava's default 50).")
    var window: Int = 50

    @Option(name: .customLong("max-pvalue"), help: "Change points: the largest p-value of a step's t-test (Otava's default 0.001).")
    var maxPValue: Double = 0.001

    @Option(name: .customLong("min-magnitude"), help: "Change points: the smallest step, in percent (default 0).")
    var minMagnitude: Double = 0

    func validate() throws {
        guard (2...100_000).contains(window) else { throw ValidationError("--window must be between 2 and 100000") }
        guard maxPValue.isFinite, maxPValue > 0, maxPValue < 1 else { throw ValidationError("--max-pvalue must be in (0, 1)") }
        guard minMagnitude.isFinite, minMagnitude >= 0, minMagnitude <= 10_000 else {
            throw ValidationError("--min-magnitude must be a percentage from 0 to 10000")
        }
        if let db, db.isEmpty { throw ValidationError("--db needs a file path or a postgres:// URL") }
    }

    func run() throws {
        let target = HistoryTarget.resolve(db)
        let detector = EDivisive(windowLength: window, maxPValue: maxPValue, minMagnitude: minMagnitude / 100)
        if let svg {
            // Before reading: the chart must not replace the database (or anything it is in).
            var database: String?
            if case .sqlite(let path) = target { database = path }
            do {
                try OutputGuard.check(output: svg, kind: .file, flag: "--svg", inputs: [database])
            } catch {
                FileHandle.standardError.write(Data("error: \(error)\n".utf8))
                throw ExitCode(2)
            }
        }
        let analyses: [HistoryAnalysis]
        let runs: Int
        do {
            let database = try target.open(create: false)
            defer { database.close() }
            let series = try database.series(.init(caseID: caseID, metric: metric, machine: machine, model: model, suite: suite, since: since))
            runs = try database.runCount()
            analyses = HistoryReport.analyze(series, detector: detector)
        } catch {
            throw historyFailure(error)
        }
        print(HistoryReport.text(analyses, database: "\(target)", runs: runs, detector: detector), terminator: "")
        if let svg {
            do {
                try AtomicWriter.write(Data(TrendChart.svg(analyses).utf8), to: URL(fileURLWithPath: svg))
            } catch {
                FileHandle.standardError.write(Data("error: \(svg): cannot write the chart: \(HistoryError.describe(error))\n".utf8))
                throw ExitCode(2)
            }
            FileHandle.standardError.write(Data("wrote \(svg)\n".utf8))
        }
    }
}

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Record existing results JSON files (bench or eval) in the history database.",
        discussion: """
            A run already recorded (the same results) is not stored twice. A file that is not a \
            readable result is named on standard error and skipped. Exit status: 0, or 2 when the \
            database cannot be used or a file was skipped.
            """)

    @Option(help: "History database: a SQLite file or a postgres:// URL (default: $QB_DB, else \(HistoryTarget.defaultPath)).")
    var db: String?

    @Argument(help: "Results JSON files, e.g. results/*.json results/*/*.json.")
    var files: [String]

    func validate() throws {
        if files.isEmpty { throw ValidationError("name at least one results JSON file") }
        if let db, db.isEmpty { throw ValidationError("--db needs a file path or a postgres:// URL") }
    }

    func run() throws {
        let target = HistoryTarget.resolve(db)
        let outcomes: [(path: String, outcome: HistoryImport.FileOutcome)]
        do {
            let database = try target.open(create: true)
            defer { database.close() }
            outcomes = try HistoryImport.run(files, into: database)
        } catch {
            throw historyFailure(error)
        }
        var added = 0, already = 0, skipped = 0
        for (_, outcome) in outcomes {
            switch outcome {
            case .recorded: added += 1
            case .alreadyRecorded: already += 1
            case .unreadable(let message):
                skipped += 1
                FileHandle.standardError.write(Data("error: skipped \(message)\n".utf8))
            }
        }
        print("imported \(added) run\(added == 1 ? "" : "s") into \(target) (\(already) already recorded, \(skipped) skipped) from \(files.count) file\(files.count == 1 ? "" : "s")")
        if skipped > 0 { throw ExitCode(2) }
    }
}
