import CSQLite
import Foundation

/// The history in one SQLite file, through the system's libsqlite3. Write-ahead logging
/// lets readers run beside a writer; writers take the write lock when their transaction
/// begins (`BEGIN IMMEDIATE`) and wait up to the busy timeout for another to finish, so two
/// processes recording at once both land.
public final class SQLiteStore: HistoryStore {
    public let name: String
    public let dialect = SQLDialect.sqlite
    private var db: OpaquePointer?
    let busyTimeout: Duration
    /// The primary result code of the last failed statement.
    private var lastFailure: Int32 = SQLITE_OK

    /// `create`: make the file (and its folder) when missing; otherwise a missing file is an
    /// error, as `history` wants.
    public init(path: String, create: Bool, busyTimeout: Duration = .seconds(10)) throws {
        name = path
        self.busyTimeout = busyTimeout
        if create {
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent()
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        } else if !FileManager.default.fileExists(atPath: path) {
            throw HistoryError.unavailable(database: path, reason: "no such file (record a run with bench or import results first)")
        }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_FULLMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let handle else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(handle)
            throw HistoryError.unavailable(database: path, reason: reason)
        }
        db = handle
        let ms = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: ms))
        do {
            // The first statements read the file's header: a corrupt file fails here.
            let mode = try whileBusy { try query("PRAGMA journal_mode = WAL", []) }
            if mode.first?.first?.text?.lowercased() != "wal" {
                throw HistoryError.failed(database: path, reason: "cannot switch to write-ahead logging (journal mode \(mode.first?.first?.text ?? "unknown"))")
            }
            try execute("PRAGMA synchronous = NORMAL")
            try execute("PRAGMA foreign_keys = ON")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    public func close() {
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    public func execute(_ sql: String, _ parameters: [SQLValue]) throws {
        _ = try run(sql, parameters, collect: false)
    }

    public func query(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]] {
        try run(sql, parameters, collect: true)
    }

    /// Retries `body` while SQLite reports the database busy, up to the busy timeout.
    /// Switching a new file to write-ahead logging needs the exclusive lock, and SQLite
    /// answers SQLITE_BUSY there at once, without its busy handler (which would deadlock
    /// two processes that each hold a shared lock), so two processes creating one
    /// database at once need this wait of their own.
    private func whileBusy<T>(_ body: () throws -> T) throws -> T {
        let deadline = ContinuousClock.now + busyTimeout
        var pause = Duration.milliseconds(2)
        while true {
            do {
                return try body()
            } catch {
                guard lastFailure == SQLITE_BUSY || lastFailure == SQLITE_LOCKED, ContinuousClock.now + pause < deadline else { throw error }
                Thread.sleep(forTimeInterval: Double(pause.components.attoseconds) / 1e18 + Double(pause.components.seconds))
                pause = min(pause * 2, .milliseconds(100))
            }
        }
    }

    private func fail(_ rc: Int32) -> HistoryError {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
        let primary = rc & 0xff
        lastFailure = primary
        if primary == SQLITE_BUSY || primary == SQLITE_LOCKED {
            return .failed(database: name, reason: "\(message) (another process held it past the \(busyTimeout) busy timeout)")
        }
        return .failed(database: name, reason: HistoryError.oneLine(message))
    }

    private func run(_ sql: String, _ parameters: [SQLValue], collect: Bool) throws -> [[SQLValue]] {
        guard let db else { throw HistoryError.failed(database: name, reason: "the connection is closed") }
        var statement: OpaquePointer?
        let prepared = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard prepared == SQLITE_OK, let statement else { throw fail(prepared) }
        defer { sqlite3_finalize(statement) }
        guard Int(sqlite3_bind_parameter_count(statement)) == parameters.count else {
            throw HistoryError.failed(database: name, reason: "statement expects \(sqlite3_bind_parameter_count(statement)) parameters, got \(parameters.count)")
        }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, p) in parameters.enumerated() {
            let index = Int32(i + 1)
            let rc: Int32
            switch p {
            case .null: rc = sqlite3_bind_null(statement, index)
            case .int(let v): rc = sqlite3_bind_int64(statement, index, v)
            case .double(let v): rc = sqlite3_bind_double(statement, index, v)
            case .text(let s): rc = sqlite3_bind_text(statement, index, s, -1, transient)
            }
            guard rc == SQLITE_OK else { throw fail(rc) }
        }
        var rows: [[SQLValue]] = []
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw fail(rc) }
            guard collect else { continue }
            let columns = sqlite3_column_count(statement)
            var row: [SQLValue] = []
            row.reserveCapacity(Int(columns))
            for c in 0..<columns {
                switch sqlite3_column_type(statement, c) {
                case SQLITE_INTEGER: row.append(.int(sqlite3_column_int64(statement, c)))
                case SQLITE_FLOAT: row.append(.double(sqlite3_column_double(statement, c)))
                case SQLITE_NULL: row.append(.null)
                default:
                    if let text = sqlite3_column_text(statement, c) {
                        row.append(.text(String(cString: text)))
                    } else {
                        row.append(.null)
                    }
                }
            }
            rows.append(row)
        }
        return rows
    }
}
