import CLibPQ
import Foundation

/// The history in a PostgreSQL database, through libpq, for a team whose CI runs on many
/// machines. Statements are sent with `PQexecParams` (values as parameters, in text form);
/// transactions and the database's own row locking keep concurrent writers apart.
public final class PostgresStore: HistoryStore {
    public let name: String
    public let dialect = SQLDialect.postgres
    private var conn: OpaquePointer?

    /// Whether `target` names a PostgreSQL database rather than a SQLite file.
    public static func isURL(_ target: String) -> Bool {
        target.hasPrefix("postgres://") || target.hasPrefix("postgresql://")
    }

    /// The URL without its password, for messages.
    public static func redacted(_ url: String) -> String {
        guard var c = URLComponents(string: url) else { return "postgres://(unparsable URL)" }
        if c.password != nil { c.password = "***" }
        return c.string ?? "postgres://(unparsable URL)"
    }

    /// Connects (waiting at most `connectTimeout` seconds unless the URL sets its own).
    public init(url: String, connectTimeout: Int = 5) throws {
        name = Self.redacted(url)
        let keywords = ["connect_timeout", "dbname"]
        let values = [String(connectTimeout), url]
        let kw = keywords.map { strdup($0) }, vs = values.map { strdup($0) }
        defer {
            kw.forEach { free($0) }
            vs.forEach { free($0) }
        }
        let kwp: [UnsafePointer<CChar>?] = kw.map { $0.map { UnsafePointer($0) } } + [nil]
        let vsp: [UnsafePointer<CChar>?] = vs.map { $0.map { UnsafePointer($0) } } + [nil]
        let c = PQconnectdbParams(kwp, vsp, 1)
        guard let c else { throw HistoryError.unavailable(database: name, reason: "libpq could not allocate a connection") }
        guard PQstatus(c) == CONNECTION_OK else {
            let reason = HistoryError.oneLine(String(cString: PQerrorMessage(c)))
            PQfinish(c)
            throw HistoryError.unavailable(database: name, reason: reason.isEmpty ? "connection failed" : reason)
        }
        conn = c
        do {
            // Quiet "already exists, skipping" notices of idempotent DDL.
            try execute("SET client_min_messages = warning")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    public func close() {
        if let conn { PQfinish(conn) }
        conn = nil
    }

    /// `?` placeholders (outside quoted text) become `$1`, `$2`...
    static func numbered(_ sql: String) -> String {
        var out = ""
        var n = 0
        var quoted = false
        for ch in sql {
            if ch == "'" { quoted.toggle() }
            if ch == "?" && !quoted {
                n += 1
                out += "$\(n)"
            } else {
                out.append(ch)
            }
        }
        return out
    }

    public func execute(_ sql: String, _ parameters: [SQLValue]) throws {
        _ = try run(sql, parameters)
    }

    public func query(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]] {
        try run(sql, parameters)
    }

    private func run(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]] {
        guard let conn else { throw HistoryError.failed(database: name, reason: "the connection is closed") }
        let texts: [UnsafeMutablePointer<CChar>?] = parameters.map { p in
            switch p {
            case .null: return nil
            default: return strdup(p.description)
            }
        }
        defer { texts.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = texts.map { $0.map { UnsafePointer($0) } }
        guard let result = PQexecParams(conn, Self.numbered(sql), Int32(parameters.count), nil, pointers, nil, nil, 0) else {
            throw HistoryError.failed(database: name, reason: HistoryError.oneLine(String(cString: PQerrorMessage(conn))))
        }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            var message = HistoryError.oneLine(String(cString: PQresultErrorMessage(result)))
            if message.isEmpty { message = HistoryError.oneLine(String(cString: PQerrorMessage(conn))) }
            if PQstatus(conn) != CONNECTION_OK { message = "connection lost: " + message }
            throw HistoryError.failed(database: name, reason: message)
        }
        let rowCount = PQntuples(result), columns = PQnfields(result)
        var rows: [[SQLValue]] = []
        rows.reserveCapacity(Int(rowCount))
        for r in 0..<rowCount {
            var row: [SQLValue] = []
            for c in 0..<columns {
                if PQgetisnull(result, r, c) != 0 {
                    row.append(.null)
                    continue
                }
                let text = String(cString: PQgetvalue(result, r, c))
                switch PQftype(result, c) {
                case 20, 21, 23: row.append(Int64(text).map(SQLValue.int) ?? .text(text))
                case 700, 701, 1700: row.append(Double(text).map(SQLValue.double) ?? .text(text))
                default: row.append(.text(text))
                }
            }
            rows.append(row)
        }
        return rows
    }
}
