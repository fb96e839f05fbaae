import Foundation
import QBRunner

/// Where the history lives: a SQLite file (the default, `results/quantbench.sqlite`) or a
/// PostgreSQL database named by a `postgres://` URL.
public enum HistoryTarget: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    public static let defaultPath = "results/quantbench.sqlite"
    /// The environment variable that names the database when `--db` does not.
    public static let environmentVariable = "QB_DB"

    /// `--db` if given, else `QB_DB`, else the default file.
    public static func resolve(_ db: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> HistoryTarget {
        let text = db ?? environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 } ?? defaultPath
        return PostgresStore.isURL(text) ? .postgres(url: text) : .sqlite(path: text)
    }

    /// Names the database in messages (a URL without its password).
    public var description: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let url): return PostgresStore.redacted(url)
        }
    }

    /// Connects and brings the schema up to date. `create`: a missing SQLite file is made
    /// (recording); otherwise it is an error (`history`).
    public func open(create: Bool, busyTimeout: Duration = .seconds(10)) throws -> HistoryDatabase {
        let store: any HistoryStore
        switch self {
        case .sqlite(let path): store = try SQLiteStore(path: path, create: create, busyTimeout: busyTimeout)
        case .postgres(let url): store = try PostgresStore(url: url)
        }
        do {
            return try HistoryDatabase(store: store)
        } catch {
            store.close()
            throw error
        }
    }
}

/// The history: runs, their machines and their measurements, over any `HistoryStore`.
/// The schema is documented in results/README.md and versioned in `schema_version`; a
/// database at a version this build does not know is refused, never rewritten.
public final class HistoryDatabase {
    public let store: any HistoryStore
    public var name: String { store.name }

    public static let application = "quantbench"

    /// Each schema version's statements, applied in order by `migrate` (never edit a
    /// released one: add the next). `{id}` is the dialect's self-numbering key.
    public static let migrations: [(version: Int, statements: [String])] = [
        (1, [
            """
            CREATE TABLE machines (
                fingerprint TEXT PRIMARY KEY,
                cpu_model TEXT NOT NULL,
                cpu_flags TEXT NOT NULL,
                logical_cores INTEGER NOT NULL,
                kernel TEXT NOT NULL,
                threads INTEGER NOT NULL
            )
            """,
            """
            CREATE TABLE runs (
                id {id},
                run_key TEXT NOT NULL UNIQUE,
                kind TEXT NOT NULL,
                recorded_by TEXT NOT NULL,
                created_at TEXT NOT NULL,
                recorded_at TEXT NOT NULL,
                commit_sha TEXT NOT NULL,
                commit_source TEXT NOT NULL,
                dirty INTEGER,
                machine TEXT NOT NULL REFERENCES machines (fingerprint),
                hostname TEXT NOT NULL,
                os TEXT NOT NULL,
                build_configuration TEXT NOT NULL,
                model_hash TEXT NOT NULL,
                model_name TEXT NOT NULL,
                quantization TEXT NOT NULL,
                suite_name TEXT NOT NULL,
                suite_hash TEXT NOT NULL,
                source_file TEXT
            )
            """,
            "CREATE INDEX runs_by_commit ON runs (commit_sha)",
            "CREATE INDEX runs_by_series ON runs (suite_hash, model_hash, machine, created_at)",
            """
            CREATE TABLE measurements (
                id {id},
                run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
                case_id TEXT NOT NULL,
                metric TEXT NOT NULL,
                median DOUBLE PRECISION NOT NULL,
                n INTEGER NOT NULL,
                UNIQUE (run_id, case_id, metric)
            )
            """,
            "CREATE INDEX measurements_by_metric ON measurements (case_id, metric)",
            """
            CREATE TABLE samples (
                measurement_id BIGINT NOT NULL REFERENCES measurements (id) ON DELETE CASCADE,
                idx INTEGER NOT NULL,
                value DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (measurement_id, idx)
            )
            """,
        ]),
    ]

    public static var currentVersion: Int { migrations.last?.version ?? 0 }

    public init(store: any HistoryStore) throws {
        self.store = store
        try migrate()
    }

    public func close() { store.close() }

    /// The schema version recorded in the database; nil for a database without one (new).
    public func schemaVersion() throws -> Int? {
        guard try !store.query(store.dialect.tableExists, [.text("schema_version")]).isEmpty else { return nil }
        let rows: [[SQLValue]]
        do {
            rows = try store.query("SELECT version, application FROM schema_version ORDER BY version DESC", [])
        } catch {
            throw HistoryError.unknownSchema(database: name, version: "(unreadable schema_version table)", supported: Self.currentVersion)
        }
        guard let top = rows.first else { return nil }
        guard top.count == 2, let version = top[0].int else {
            throw HistoryError.unknownSchema(database: name, version: top.first?.text ?? "?", supported: Self.currentVersion)
        }
        if top[1].text != Self.application {
            throw HistoryError.unknownSchema(
                database: name, version: "\(version) of application '\(top[1].text ?? "")'", supported: Self.currentVersion)
        }
        return Int(version)
    }

    /// Applies the migrations the database lacks, in one transaction that concurrent
    /// processes take in turn (SQLite's write lock, PostgreSQL's advisory lock).
    func migrate() throws {
        let latest = Self.currentVersion
        if let v = try schemaVersion() {
            if v == latest { return }
            if v > latest { throw HistoryError.unknownSchema(database: name, version: String(v), supported: latest) }
        }
        try store.writeTransaction {
            if let lock = store.dialect.migrationLock { _ = try store.query(lock, []) }
            if try store.query(store.dialect.tableExists, [.text("schema_version")]).isEmpty {
                try store.execute(
                    "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, application TEXT NOT NULL, applied_at TEXT NOT NULL)")
            }
            let v = try schemaVersion() ?? 0
            if v > latest { throw HistoryError.unknownSchema(database: name, version: String(v), supported: latest) }
            for m in Self.migrations where m.version > v {
                for sql in m.statements {
                    try store.execute(sql.replacingOccurrences(of: "{id}", with: store.dialect.identityColumn))
                }
                try store.execute(
                    "INSERT INTO schema_version (version, application, applied_at) VALUES (?, ?, ?)",
                    [.int(Int64(m.version)), .text(Self.application), .text(Self.now())])
            }
        }
    }

    static func now() -> String { BenchRunner.timestamp(Date()) }

    // MARK: recording

    /// Stores a run in one transaction. Returns false when a run with the same content
    /// (`HistoryRun.key`) was recorded before, true when it was added.
    @discardableResult
    public func record(_ run: HistoryRun, recordedBy: String, sourceFile: String? = nil) throws -> Bool {
        try store.writeTransaction {
            let m = run.machine
            try store.execute(
                """
                INSERT INTO machines (fingerprint, cpu_model, cpu_flags, logical_cores, kernel, threads)
                VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO NOTHING
                """,
                [.text(m.hash), .text(m.cpuModel), .text(m.cpuFlags.joined(separator: " ")), .int(Int64(m.logicalCores)),
                 .text(m.kernel), .int(Int64(m.threads))])
            let inserted = try store.query(
                """
                INSERT INTO runs (run_key, kind, recorded_by, created_at, recorded_at, commit_sha, commit_source, dirty,
                    machine, hostname, os, build_configuration, model_hash, model_name, quantization, suite_name,
                    suite_hash, source_file)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (run_key) DO NOTHING RETURNING id
                """,
                [.text(run.key), .text(run.kind.rawValue), .text(recordedBy), .text(run.createdAt), .text(Self.now()),
                 .text(run.commit), .text(run.commitSource), run.dirty.map { .int($0 ? 1 : 0) } ?? .null,
                 .text(m.hash), .text(run.hostname), .text(run.os), .text(run.buildConfiguration), .text(run.modelHash),
                 .text(run.modelName), .text(run.quantization), .text(run.suiteName), .text(run.suiteHash),
                 sourceFile.map(SQLValue.text) ?? .null])
            guard let runID = inserted.first?.first?.int else { return false }
            for measurement in run.measurements {
                let rows = try store.query(
                    """
                    INSERT INTO measurements (run_id, case_id, metric, median, n) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (run_id, case_id, metric) DO NOTHING RETURNING id
                    """,
                    [.int(runID), .text(measurement.caseID), .text(measurement.metric), .double(measurement.median),
                     .int(Int64(measurement.samples.count))])
                guard let id = rows.first?.first?.int else { continue }
                // Many rows per statement: one round trip per 100 samples.
                let indexed = Array(measurement.samples.enumerated())
                for start in stride(from: 0, to: indexed.count, by: 100) {
                    let chunk = indexed[start..<min(start + 100, indexed.count)]
                    let values = Array(repeating: "(?, ?, ?)", count: chunk.count).joined(separator: ", ")
                    try store.execute(
                        "INSERT INTO samples (measurement_id, idx, value) VALUES \(values)",
                        chunk.flatMap { [SQLValue.int(id), .int(Int64($0.offset)), .double($0.element)] })
                }
            }
            return true
        }
    }

    // MARK: reading

    /// How many runs the database holds.
    public func runCount() throws -> Int {
        guard let n = try store.query("SELECT COUNT(*) FROM runs", []).first?.first?.int else {
            throw HistoryError.malformed(database: name, reason: "COUNT(*) gave no number")
        }
        return Int(n)
    }

    /// The samples of one run's measurement, in measurement order.
    public func samples(runKey: String, caseID: String, metric: String) throws -> [Double] {
        try store.query(
            """
            SELECT s.value FROM samples s JOIN measurements m ON m.id = s.measurement_id JOIN runs r ON r.id = m.run_id
            WHERE r.run_key = ? AND m.case_id = ? AND m.metric = ? ORDER BY s.idx
            """, [.text(runKey), .text(caseID), .text(metric)]
        ).compactMap { $0.first?.double }
    }

    public struct Filter: Sendable {
        public var caseID: String?
        public var metric: String?
        /// A prefix of the machine fingerprint.
        public var machine: String?
        /// A prefix of the model hash.
        public var model: String?
        public var suite: String?
        /// A commit (or a prefix of one): the series start at the first run recorded at it.
        public var since: String?
        public init(caseID: String? = nil, metric: String? = nil, machine: String? = nil, model: String? = nil, suite: String? = nil, since: String? = nil) {
            self.caseID = caseID
            self.metric = metric
            self.machine = machine
            self.model = model
            self.suite = suite
            self.since = since
        }
    }

    /// `LIKE` pattern for a prefix, its wildcards escaped.
    static func prefixPattern(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_") + "%"
    }

    /// Every series the filter selects: one per (kind, suite, model, quantization, machine,
    /// build configuration, case, metric), its points one per commit in commit order (the
    /// order of each commit's first recorded run), each the median of that commit's run medians.
    public func series(_ filter: Filter = Filter()) throws -> [HistorySeries] {
        var conditions: [String] = []
        var parameters: [SQLValue] = []
        if let c = filter.caseID { conditions.append("m.case_id = ?"); parameters.append(.text(c)) }
        if let m = filter.metric { conditions.append("m.metric = ?"); parameters.append(.text(m)) }
        if let s = filter.suite { conditions.append("r.suite_name = ?"); parameters.append(.text(s)) }
        if let fp = filter.machine {
            conditions.append("r.machine LIKE ? ESCAPE '\\'")
            parameters.append(.text(Self.prefixPattern(fp.lowercased())))
        }
        if let model = filter.model {
            conditions.append("r.model_hash LIKE ? ESCAPE '\\'")
            parameters.append(.text(Self.prefixPattern(model.lowercased())))
        }
        if let rev = filter.since {
            let first = try store.query(
                "SELECT MIN(created_at) FROM runs WHERE commit_sha LIKE ? ESCAPE '\\'", [.text(Self.prefixPattern(rev.lowercased()))])
            guard let t = first.first?.first?.text else { throw HistoryError.unknownRevision(database: name, revision: rev) }
            conditions.append("r.created_at >= ?")
            parameters.append(.text(t))
        }
        let rows = try store.query(
            """
            SELECT r.kind, r.suite_name, r.suite_hash, r.model_hash, r.model_name, r.quantization, r.machine,
                r.build_configuration, m.case_id, m.metric, r.commit_sha, r.created_at, m.median, mc.cpu_model,
                mc.logical_cores, mc.threads, mc.kernel, r.dirty
            FROM measurements m JOIN runs r ON r.id = m.run_id JOIN machines mc ON mc.fingerprint = r.machine
            \(conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "))
            ORDER BY r.created_at, r.id
            """, parameters)
        var order: [HistorySeries.Key] = []
        var grouped: [HistorySeries.Key: (info: HistorySeries.Context, runs: [(commit: String, at: String, value: Double, dirty: Bool)])] = [:]
        for row in rows {
            guard row.count == 18, let median = row[12].double, let commit = row[10].text, let at = row[11].text else {
                throw HistoryError.malformed(database: name, reason: "a measurement row lacks its commit, time or median")
            }
            let key = HistorySeries.Key(
                kind: row[0].text ?? "", suiteName: row[1].text ?? "", suiteHash: row[2].text ?? "", modelHash: row[3].text ?? "",
                quantization: row[5].text ?? "", machine: row[6].text ?? "", buildConfiguration: row[7].text ?? "",
                caseID: row[8].text ?? "", metric: row[9].text ?? "")
            if grouped[key] == nil {
                order.append(key)
                let context = HistorySeries.Context(
                    modelName: row[4].text ?? "", cpuModel: row[13].text ?? "", logicalCores: Int(row[14].int ?? 0),
                    threads: Int(row[15].int ?? 0), kernel: row[16].text ?? "")
                grouped[key] = (context, [])
            }
            grouped[key]?.runs.append((commit, at, median, row[17].int == 1))
        }
        return order.compactMap { key in
            guard let g = grouped[key] else { return nil }
            var commits: [String] = []
            var byCommit: [String: (at: String, values: [Double], dirty: Bool)] = [:]
            for r in g.runs {
                if byCommit[r.commit] == nil {
                    commits.append(r.commit)
                    byCommit[r.commit] = (r.at, [], false)
                }
                byCommit[r.commit]?.values.append(r.value)
                if r.dirty { byCommit[r.commit]?.dirty = true }
            }
            let points = commits.compactMap { c -> HistorySeries.Point? in
                guard let b = byCommit[c] else { return nil }
                return HistorySeries.Point(commit: c, firstRecorded: b.at, value: Statistics.median(b.values) ?? 0, runs: b.values.count, dirty: b.dirty)
            }
            return HistorySeries(key: key, context: g.info, points: points)
        }
    }
}

/// One metric of one case over commits, on one machine, model and suite.
public struct HistorySeries: Sendable {
    public struct Key: Hashable, Sendable {
        public var kind, suiteName, suiteHash, modelHash, quantization, machine, buildConfiguration, caseID, metric: String
    }

    public struct Context: Sendable {
        public var modelName: String
        public var cpuModel: String
        public var logicalCores: Int
        public var threads: Int
        public var kernel: String
    }

    public struct Point: Sendable, Equatable {
        public var commit: String
        /// created_at of the commit's first run in this series.
        public var firstRecorded: String
        /// The median of the commit's run medians.
        public var value: Double
        public var runs: Int
        /// Whether any of the commit's runs came from a build with uncommitted changes.
        public var dirty: Bool
    }

    public var key: Key
    public var context: Context
    public var points: [Point]

    public var values: [Double] { points.map(\.value) }
}
