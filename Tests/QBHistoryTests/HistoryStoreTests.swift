import Foundation
@testable import QBHistory
import QBRunner
import XCTest

/// The checks every store must pass, SQLite and PostgreSQL alike.
enum StoreChecks {
    /// Runs recorded and read back: samples exactly, one point per commit in commit order,
    /// a run recorded twice stored once, the schema at the current version.
    static func roundTrip(_ target: HistoryTarget) throws {
        let samples: [[Double]] = [[10.5, 11.25, 9.75, 10.0, 1e-7], [12, 12.5, 11.5], [9.125, 9.0, 9.25]]
        var results: [BenchResult] = []
        for (i, s) in samples.enumerated() {
            let r = try HistoryFixtures.result(commit: HistoryFixtures.commit(i), minutes: i, metrics: ["tokens_per_s": s, "ttft_s": [0.01 * Double(i + 1)]])
            results.append(r)
            XCTAssertEqual(HistoryRecorder.record(r, into: target), .recorded)
        }
        XCTAssertEqual(HistoryRecorder.record(results[1], into: target), .alreadyRecorded, "the same run again")

        let db = try target.open(create: false)
        defer { db.close() }
        XCTAssertEqual(try db.schemaVersion(), HistoryDatabase.currentVersion)
        XCTAssertEqual(try db.runCount(), 3)
        for (i, r) in results.enumerated() {
            let key = try HistoryRun(bench: r).key
            XCTAssertEqual(try db.samples(runKey: key, caseID: "gen", metric: "tokens_per_s"), samples[i], "samples stored exactly, in order")
        }
        let series = try db.series(.init(caseID: "gen", metric: "tokens_per_s"))
        XCTAssertEqual(series.count, 1)
        XCTAssertEqual(series.first?.points.map(\.commit), (0..<3).map(HistoryFixtures.commit))
        XCTAssertEqual(series.first?.points.map(\.value), samples.map { Statistics.median($0) ?? 0 })
        let machine = MachineFingerprint(results[0].environment)
        XCTAssertEqual(series.first?.key.machine, machine.hash)
        XCTAssertEqual(series.first?.key.modelHash, results[0].model.fileHash)
        XCTAssertEqual(series.first?.key.suiteHash, results[0].suite.hash)
        XCTAssertEqual(try db.series(.init(machine: String(machine.hash.prefix(6)))).count, 2, "tokens_per_s and ttft_s")
        XCTAssertEqual(try db.series(.init(machine: "zzzz")).count, 0)
        XCTAssertEqual(try db.series(.init(metric: "tokens_per_s", since: String(HistoryFixtures.commit(1).prefix(8)))).first?.points.count, 2)
        XCTAssertThrowsError(try db.series(.init(since: "deadbeef"))) { e in
            XCTAssertEqual(e as? HistoryError, .unknownRevision(database: "\(target)", revision: "deadbeef"))
        }
    }

    /// A database whose schema_version is newer than this build's is refused with a typed
    /// error naming it and the version, and left untouched.
    static func newerSchemaRefused(_ target: HistoryTarget) throws {
        let r = try HistoryFixtures.result(commit: HistoryFixtures.commit(0), minutes: 0, metrics: ["tokens_per_s": [1, 2, 3]])
        XCTAssertEqual(HistoryRecorder.record(r, into: target), .recorded)
        do {
            let db = try target.open(create: false)
            try db.store.execute("INSERT INTO schema_version (version, application, applied_at) VALUES (?, ?, ?)", [.int(99), .text("quantbench"), .text("later")])
            db.close()
        }
        XCTAssertThrowsError(try target.open(create: false)) { e in
            XCTAssertEqual(e as? HistoryError, .unknownSchema(database: "\(target)", version: "99", supported: HistoryDatabase.currentVersion))
            XCTAssertTrue("\(e)".contains("\(target)") && "\(e)".contains("99"), "\(e)")
        }
        guard case .failed(let message) = HistoryRecorder.record(r, into: target) else { return XCTFail("recording into it must fail") }
        XCTAssertTrue(message.contains("schema version 99"), message)
        XCTAssertFalse(message.contains("\n"))
    }

    /// Two writers, each with its own connection, recording at the same time: every run lands.
    static func concurrentWriters(_ target: HistoryTarget, perWriter: Int = 25) throws {
        let results = try (0..<(2 * perWriter)).map { i in
            try HistoryFixtures.result(commit: HistoryFixtures.commit(i), minutes: i, metrics: ["tokens_per_s": [Double(i), Double(i) + 0.5, Double(i) + 1]])
        }
        let errors = ErrorBox()
        DispatchQueue.concurrentPerform(iterations: 2) { writer in
            for i in stride(from: writer, to: results.count, by: 2) {
                if let w = HistoryRecorder.warning(HistoryRecorder.record(results[i], into: target)) { errors.add(w) }
            }
        }
        XCTAssertEqual(errors.all, [])
        let db = try target.open(create: false)
        defer { db.close() }
        XCTAssertEqual(try db.runCount(), results.count)
        XCTAssertEqual(try db.series(.init(metric: "tokens_per_s")).first?.points.count, results.count)
        XCTAssertEqual(try db.store.query("SELECT COUNT(*) FROM samples", []).first?.first?.int, Int64(3 * results.count))
    }
}

final class SQLiteHistoryTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws { dir = try HistoryFixtures.temporaryDirectory("sqlite") }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    var target: HistoryTarget { .sqlite(path: dir.appendingPathComponent("h.sqlite").path) }

    func testRoundTrip() throws { try StoreChecks.roundTrip(target) }
    func testNewerSchemaVersionIsRefused() throws { try StoreChecks.newerSchemaRefused(target) }
    func testTwoConcurrentWritersLoseNothing() throws { try StoreChecks.concurrentWriters(target) }

    func testUsesWriteAheadLogging() throws {
        let db = try target.open(create: true)
        defer { db.close() }
        XCTAssertEqual(try db.store.query("PRAGMA journal_mode", []).first?.first?.text, "wal")
    }

    func testMissingFileIsAnErrorForReadersOnly() throws {
        XCTAssertThrowsError(try target.open(create: false)) { e in
            guard case .unavailable(let name, _)? = e as? HistoryError else { return XCTFail("\(e)") }
            XCTAssertEqual(name, "\(self.target)")
        }
        XCTAssertNoThrow(try target.open(create: true).close())
    }

    func testCorruptFileIsOneLineNamingIt() throws {
        let path = dir.appendingPathComponent("h.sqlite").path
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try target.open(create: false)) { e in
            XCTAssertTrue("\(e)".contains(path) && "\(e)".contains("not a database"), "\(e)")
            XCTAssertFalse("\(e)".contains("\n"))
        }
        let r = try HistoryFixtures.result(commit: HistoryFixtures.commit(0), minutes: 0, metrics: ["tokens_per_s": [1, 2]])
        let warning = HistoryRecorder.warning(HistoryRecorder.record(r, into: target))
        XCTAssertNotNil(warning)
        XCTAssertTrue(warning?.contains(path) == true, warning ?? "")
    }

    func testLockedDatabaseFailsAfterTheBusyTimeout() throws {
        let holder = try target.open(create: true)
        defer { holder.close() }
        try holder.store.execute("BEGIN IMMEDIATE")
        let started = ContinuousClock.now
        XCTAssertThrowsError(try {
            let db = try self.target.open(create: false, busyTimeout: .milliseconds(200))
            defer { db.close() }
            let run = try HistoryRun(bench: HistoryFixtures.result(commit: HistoryFixtures.commit(0), minutes: 0, metrics: ["tokens_per_s": [1]]))
            try db.record(run, recordedBy: "test")
        }()) { e in
            XCTAssertTrue("\(e)".contains("locked") && "\(e)".contains(self.dir.path), "\(e)")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
        try holder.store.execute("ROLLBACK")
    }

    func testForeignSchemaVersionTableIsRefused() throws {
        let path = dir.appendingPathComponent("h.sqlite").path
        do {
            let store = try SQLiteStore(path: path, create: true)
            try store.execute("CREATE TABLE schema_version (version INTEGER, application TEXT, applied_at TEXT)")
            try store.execute("INSERT INTO schema_version VALUES (?, ?, ?)", [.int(3), .text("someone-else"), .text("x")])
            store.close()
        }
        XCTAssertThrowsError(try target.open(create: false)) { e in
            XCTAssertTrue("\(e)".contains("someone-else") && "\(e)".contains(path), "\(e)")
        }
    }
}

final class PostgresHistoryTests: XCTestCase {
    var schema: PostgresTestSchema?
    override func setUpWithError() throws { schema = try PostgresTestSchema() }
    override func tearDown() { schema?.drop() }

    var target: HistoryTarget { .postgres(url: schema?.url ?? "") }

    func testRoundTrip() throws { try StoreChecks.roundTrip(target) }
    func testNewerSchemaVersionIsRefused() throws { try StoreChecks.newerSchemaRefused(target) }
    func testTwoConcurrentWritersLoseNothing() throws { try StoreChecks.concurrentWriters(target) }

    func testConcurrentFirstMigrationsTakeTurns() throws {
        let errors = ErrorBox()
        let target = self.target
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do { try target.open(create: true).close() } catch { errors.add("\(error)") }
        }
        XCTAssertEqual(errors.all, [])
    }
}

final class HistoryTargetTests: XCTestCase {
    func testResolve() {
        XCTAssertEqual(HistoryTarget.resolve(nil, environment: [:]), .sqlite(path: "results/quantbench.sqlite"))
        XCTAssertEqual(HistoryTarget.resolve(nil, environment: ["QB_DB": "x.sqlite"]), .sqlite(path: "x.sqlite"))
        XCTAssertEqual(HistoryTarget.resolve(nil, environment: ["QB_DB": "postgres://h/db"]), .postgres(url: "postgres://h/db"))
        XCTAssertEqual(HistoryTarget.resolve("postgresql://a@h/db", environment: ["QB_DB": "x"]), .postgres(url: "postgresql://a@h/db"))
        XCTAssertEqual("\(HistoryTarget.postgres(url: "postgres://qb:secret@h:5432/db"))", "postgres://qb:***@h:5432/db")
    }

    func testUnreachablePostgresIsOneLineWithoutThePassword() {
        let target = HistoryTarget.postgres(url: "postgres://qb:secret@127.0.0.1:1/qb?connect_timeout=2")
        XCTAssertThrowsError(try target.open(create: true)) { e in
            guard case .unavailable(let name, _)? = e as? HistoryError else { return XCTFail("\(e)") }
            XCTAssertTrue(name.contains("127.0.0.1:1"))
            XCTAssertFalse("\(e)".contains("secret"), "\(e)")
            XCTAssertFalse("\(e)".contains("\n"), "\(e)")
        }
    }

    func testPlaceholdersAreNumberedOutsideQuotes() {
        XCTAssertEqual(PostgresStore.numbered("SELECT ? WHERE a LIKE ? ESCAPE '\\' AND b = '?' AND c = ?"),
                       "SELECT $1 WHERE a LIKE $2 ESCAPE '\\' AND b = '?' AND c = $3")
    }

    func testMachineFingerprintIsStable() {
        let a = MachineFingerprint(cpuModel: "AMD EPYC", cpuFlags: ["avx2", "fma", "avx2"], logicalCores: 2, kernel: "6.1", threads: 2)
        let b = MachineFingerprint(cpuModel: "AMD EPYC", cpuFlags: ["fma", "avx2"], logicalCores: 2, kernel: "6.1", threads: 2)
        XCTAssertEqual(a.hash, b.hash)
        XCTAssertEqual(a.hash.count, 16)
        var c = b
        c.threads = 1
        XCTAssertNotEqual(c.hash, b.hash)
    }
}
