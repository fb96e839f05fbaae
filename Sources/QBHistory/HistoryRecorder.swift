import Foundation
import QBRunner

/// The one entry point every command that writes a results JSON (`bench`, `eval`, `ab`)
/// calls after writing it: the run also goes into the history. Recording never fails the
/// command: a problem comes back as a one-line warning naming the database.
public enum HistoryRecorder {
    public enum Outcome: Sendable, Equatable {
        case recorded
        /// The same run (same results JSON) was recorded before.
        case alreadyRecorded
        /// One line naming the database and what failed.
        case failed(String)
    }

    /// Records a bench result. `recordedBy`: the command ("bench", "ab"); `binaryCommit`:
    /// the commit compiled into this executable, when the build has one (it takes
    /// precedence over the results' `environment.commit`, which is the working directory's).
    public static func record(
        _ result: BenchResult, into target: HistoryTarget, recordedBy: String = "bench", binaryCommit: String? = nil,
        sourceFile: String? = nil
    ) -> Outcome {
        record(into: target, recordedBy: recordedBy, sourceFile: sourceFile) { try HistoryRun(bench: result, binaryCommit: binaryCommit) }
    }

    /// Records an eval result.
    public static func record(
        _ result: EvalResult, into target: HistoryTarget, recordedBy: String = "eval", binaryCommit: String? = nil,
        sourceFile: String? = nil
    ) -> Outcome {
        record(into: target, recordedBy: recordedBy, sourceFile: sourceFile) { try HistoryRun(eval: result, binaryCommit: binaryCommit) }
    }

    static func record(into target: HistoryTarget, recordedBy: String, sourceFile: String?, _ make: () throws -> HistoryRun) -> Outcome {
        do {
            let run = try make()
            let db = try target.open(create: true)
            defer { db.close() }
            return try db.record(run, recordedBy: recordedBy, sourceFile: sourceFile) ? .recorded : .alreadyRecorded
        } catch let e as HistoryError {
            return .failed("\(e)")
        } catch {
            return .failed("history database \(target): \(HistoryError.oneLine("\(error)"))")
        }
    }

    /// The warning a command prints on standard error for an outcome (nil when recorded).
    public static func warning(_ outcome: Outcome) -> String? {
        if case .failed(let message) = outcome { return "warning: run not recorded in the history: \(message)" }
        return nil
    }
}

/// `import`: results JSON files (bench or eval) into the history.
public enum HistoryImport {
    public enum FileOutcome: Sendable, Equatable {
        case recorded, alreadyRecorded
        /// The file could not be read as a result (one line naming it).
        case unreadable(String)
    }

    /// Reads one file as a bench or eval result, by its `schema` field.
    public static func load(path: String) throws -> HistoryRun {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw LocatedError(path: path, "cannot read the results file")
        }
        struct Header: Decodable { let schema: String? }
        let header = try? JSONDecoder().decode(Header.self, from: data)
        if header?.schema == EvalResult.schemaName {
            struct Version: Decodable {
                let schemaVersion: Int?
                enum CodingKeys: String, CodingKey { case schemaVersion = "schema_version" }
            }
            let v = try? JSONDecoder().decode(Version.self, from: data)
            guard v?.schemaVersion == EvalResult.currentSchemaVersion else {
                throw LocatedError(path: path, "schema_version \(v?.schemaVersion.map(String.init) ?? "missing") is not one this build reads (\(EvalResult.currentSchemaVersion))")
            }
            let result: EvalResult
            do {
                result = try ResultsFile.decoder().decode(EvalResult.self, from: data)
            } catch {
                throw LocatedError(path: path, "not a readable eval result: \(HistoryError.oneLine("\(error)"))")
            }
            return try HistoryRun(eval: result)
        }
        return try HistoryRun(bench: ResultsFile.decode(data, path: path))
    }

    /// Imports `paths` into an open database; a file that cannot be read is reported and
    /// skipped, a database error stops the import (thrown).
    public static func run(_ paths: [String], into db: HistoryDatabase) throws -> [(path: String, outcome: FileOutcome)] {
        var outcomes: [(String, FileOutcome)] = []
        for path in paths {
            let run: HistoryRun
            do {
                run = try load(path: path)
            } catch {
                let message = HistoryError.oneLine("\(error)")
                outcomes.append((path, .unreadable(message.contains(path) ? message : "\(path): \(message)")))
                continue
            }
            let added = try db.record(run, recordedBy: "import", sourceFile: path)
            outcomes.append((path, added ? .recorded : .alreadyRecorded))
        }
        return outcomes
    }
}
