import Foundation
import QBSupport
import QBHistory
import QBRunner
import XCTest
import QBTestSupport

enum HistoryFixtures {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let baseline: Result<BenchResult, any Error> = Result {
        try ResultsFile.load(path: repository.appendingPathComponent("results/baseline-swift-packages-b.json").path)
    }

    /// A 40-hex-digit commit made from a number.
    static func commit(_ i: Int) -> String {
        let h = XXH64.hex(Data("commit \(i)".utf8))
        return h + h + String(h.prefix(8))
    }

    /// The committed baseline cut down to one case whose metrics have the given samples,
    /// at `commit`, created `minutes` after a fixed start.
    static func result(commit: String, minutes: Int, caseID: String = "gen", metrics: [String: [Double]]) throws -> BenchResult {
        var r = try baseline.get()
        var c = r.cases[0]
        c.id = caseID
        c.metrics = metrics.compactMapValues { Estimate($0) }
        r.cases = [c]
        r.aggregate.metrics = [:]
        r.environment.commit = commit
        r.createdAt = BenchRunner.timestamp(Date(timeIntervalSince1970: 1_790_000_000 + Double(minutes) * 60))
        return r
    }

    static func temporaryDirectory(_ name: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-history-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }
}

/// A PostgreSQL schema of its own per test, on the server `QB_TEST_POSTGRES` names, so
/// tests never see each other's tables; dropped afterwards.
final class PostgresTestSchema {
    let baseURL: String
    let schema: String
    var url: String {
        baseURL + (baseURL.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }

    /// Skips the test (with the reason) when no server is named or it cannot be reached.
    init() throws {
        guard let base = ProcessInfo.processInfo.environment["QB_TEST_POSTGRES"], !base.isEmpty else {
            throw XCTSkip("QB_TEST_POSTGRES is not set: no PostgreSQL server to test against (.ci/run starts one and sets it)")
        }
        baseURL = base
        schema = "qbtest_\(getpid())_\(UInt32.random(in: 0...UInt32.max))"
        let store: PostgresStore
        do {
            store = try PostgresStore(url: base)
        } catch {
            throw XCTSkip("PostgreSQL at QB_TEST_POSTGRES is not reachable: \(error)")
        }
        defer { store.close() }
        try store.execute("CREATE SCHEMA \(schema)")
    }

    func drop() {
        guard let store = try? PostgresStore(url: baseURL) else { return }
        try? store.execute("DROP SCHEMA \(schema) CASCADE")
        store.close()
    }
}

/// Errors gathered from several threads.
final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func add(_ s: String) { lock.withLock { items.append(s) } }
    var all: [String] { lock.withLock { items } }
}
