import Foundation
import QBSupport
import QBHistory
import QBRunner
import XCTest
import QBTestSupport

/// `history`, `import` and the recording of `bench` runs, as a user runs them.
extension CLITests {
    /// The committed baseline cut down to one case with the given metric samples.
    func syntheticResult(commit: String, minutes: Int, metrics: [String: [Double]]) throws -> BenchResult {
        var r = try ResultsFile.load(path: Self.root.appendingPathComponent("results/baseline-swift-packages-b.json").path)
        var c = r.cases[0]
        c.id = "gen"
        c.metrics = metrics.compactMapValues { Estimate($0) }
        r.cases = [c]
        r.aggregate.metrics = [:]
        r.environment.commit = commit
        r.createdAt = BenchRunner.timestamp(Date(timeIntervalSince1970: 1_790_000_000 + Double(minutes) * 60))
        return r
    }

    func commit(_ i: Int) -> String {
        let h = XXH64.hex(Data("cli commit \(i)".utf8))
        return h + h + String(h.prefix(8))
    }

    /// 36 runs at distinct commits recorded through the same entry point bench uses; the
    /// decode speed drops 12% from commit 24 on, TTFT stays flat. `history` names commit 24
    /// and flags nothing on TTFT; the SVG marks the step.
    func testHistoryNamesTheCommitOfAStep() throws {
        let seed: UInt64 = 1414
        print("history step test: seed \(seed)")
        var rng = SeededGenerator(seed: seed)
        let db = dir.appendingPathComponent("history.sqlite").path
        for i in 0..<36 {
            let speed = i < 24 ? 100.0 : 88.0
            let r = try syntheticResult(commit: commit(i), minutes: i, metrics: [
                "decode_tokens_per_s": (0..<5).map { _ in rng.normal(mean: speed, sd: 2) },
                "ttft_s": (0..<5).map { _ in rng.normal(mean: 0.05, sd: 0.002) },
            ])
            XCTAssertEqual(HistoryRecorder.record(r, into: .sqlite(path: db)), .recorded)
        }
        let svg = dir.appendingPathComponent("trend.svg").path
        let r = try quantbench(["history", "--db", db, "--case", "gen", "--metric", "decode_tokens_per_s", "--svg", svg])
        XCTAssertEqual(r.status, 0, r.stderr)
        print("$ quantbench history --db DB --case gen --metric decode_tokens_per_s --svg trend.svg\n" + r.stdout)
        XCTAssertTrue(r.stdout.contains("change point at \(commit(24)) (first commit after the step, 25 of 36)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("1 change point"), r.stdout)
        XCTAssertTrue(r.stdout.contains("(worse)"), r.stdout)
        let chart = try String(contentsOfFile: svg, encoding: .utf8)
        XCTAssertTrue(chart.hasPrefix("<svg"))
        XCTAssertEqual(chart.components(separatedBy: "class=\"change-point\"").count - 1, 1)
        XCTAssertTrue(chart.contains(String(commit(24).prefix(10))))
        XCTAssertTrue(chart.contains("decode_tokens_per_s") && chart.contains("commit (oldest to newest, 36 commits)"))

        let flat = try quantbench(["history", "--db", db, "--metric", "ttft_s"])
        XCTAssertEqual(flat.status, 0, flat.stderr)
        XCTAssertTrue(flat.stdout.contains("no change point in 36 commits"), flat.stdout)
        print("$ quantbench history --db DB --metric ttft_s (last line)\n" + (flat.stdout.split(separator: "\n").last.map(String.init) ?? ""))

        let since = try quantbench(["history", "--db", db, "--metric", "decode_tokens_per_s", "--since", String(commit(30).prefix(9))])
        XCTAssertEqual(since.status, 0, since.stderr)
        XCTAssertFalse(since.stdout.contains(String(commit(29).prefix(10))), since.stdout)
        XCTAssertTrue(since.stdout.contains(String(commit(30).prefix(10))), since.stdout)
    }

    /// Two `import` processes writing the same new database at once: every run lands.
    func testTwoImportProcessesAtOnceLoseNothing() throws {
        let db = dir.appendingPathComponent("history.sqlite").path
        var paths: [String] = []
        for i in 0..<24 {
            let url = dir.appendingPathComponent("run-\(i).json")
            try ResultsFile.encode(syntheticResult(commit: commit(i), minutes: i, metrics: ["tokens_per_s": [Double(i), Double(i) + 1]])).write(to: url)
            paths.append(url.path)
        }
        let processes = try [Array(paths[0..<12]), Array(paths[12...])].map { files -> (Process, Pipe) in
            let p = Process()
            p.executableURL = binary
            p.arguments = ["import", "--db", db] + files
            let err = Pipe()
            p.standardError = err
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            return (p, err)
        }
        for (p, err) in processes {
            let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            p.waitUntilExit()
            XCTAssertEqual(p.terminationStatus, 0, message)
        }
        let h = try quantbench(["history", "--db", db, "--metric", "tokens_per_s"])
        XCTAssertEqual(h.status, 0, h.stderr)
        XCTAssertTrue(h.stdout.hasPrefix("history \(db): 24 runs, 1 series"), h.stdout)
        let again = try quantbench(["import", "--db", db, paths[3]])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("0 runs") && again.stdout.contains("1 already recorded"), again.stdout)
    }

    /// Corrupt file, newer schema version, unreachable PostgreSQL, missing file: one line
    /// naming the database, exit 2.
    func testBadDatabasesAreOneLineAndExit2() throws {
        let corrupt = dir.appendingPathComponent("corrupt.sqlite").path
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: corrupt))
        let newer = dir.appendingPathComponent("newer.sqlite").path
        do {
            let db = try HistoryTarget.sqlite(path: newer).open(create: true)
            try db.store.execute("INSERT INTO schema_version (version, application, applied_at) VALUES (?, ?, ?)", [.int(7), .text("quantbench"), .text("x")])
            db.close()
        }
        let unreachable = "postgres://qb:secret@127.0.0.1:1/qb?connect_timeout=2"
        let cases: [([String], String)] = [
            (["history", "--db", corrupt], corrupt), (["import", "--db", corrupt, corrupt], corrupt),
            (["history", "--db", newer], "schema version 7"), (["history", "--db", unreachable], "127.0.0.1:1"),
            (["import", "--db", unreachable, corrupt], "127.0.0.1:1"),
            (["history", "--db", dir.appendingPathComponent("missing.sqlite").path], "missing.sqlite"),
        ]
        for (args, fragment) in cases {
            let r = try quantbench(args)
            XCTAssertEqual(r.reason, .exit, "\(args)")
            XCTAssertEqual(r.status, 2, "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "one line: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(fragment), "\(args): \(r.stderr)")
            XCTAssertFalse(r.stderr.contains("secret"), r.stderr)
        }
    }

    /// bench records its run after writing the JSON; a database it cannot use costs a
    /// one-line warning, never the JSON; --no-db records nothing.
    func testBenchRecordsItsRunAndKeepsTheJSONWhenTheDatabaseFails() throws {
        let cache = dir.appendingPathComponent("cache").path
        let base = ["bench", "--pp", "8", "--tg", "4", "--repetitions", "2", "--warmup", "0", "--threads", "2"]
        let db = dir.appendingPathComponent("history.sqlite").path
        let good = try quantbench(base + ["--out", dir.appendingPathComponent("a.json").path, "--db", db], environment: ["XDG_CACHE_HOME": cache])
        XCTAssertEqual(good.status, 0, good.stderr)
        XCTAssertTrue(good.stderr.contains("recorded in the history (\(db))"), good.stderr)
        let h = try quantbench(["history", "--db", db, "--case", "tg4", "--metric", "tokens_per_s"])
        XCTAssertEqual(h.status, 0, h.stderr)
        XCTAssertTrue(h.stdout.contains("1 run, 1 series"), h.stdout)

        let corrupt = dir.appendingPathComponent("corrupt.sqlite").path
        try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: corrupt))
        let json = dir.appendingPathComponent("b.json").path
        let bad = try quantbench(base + ["--out", json], environment: ["XDG_CACHE_HOME": cache, "QB_DB": corrupt])
        XCTAssertEqual(bad.status, 0, bad.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: json), "the JSON is written first")
        let warnings = bad.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
        XCTAssertEqual(warnings.count, 1, bad.stderr)
        XCTAssertTrue(warnings.first?.contains(corrupt) == true, bad.stderr)

        let none = try quantbench(base + ["--out", dir.appendingPathComponent("c.json").path, "--no-db"], environment: ["XDG_CACHE_HOME": cache, "QB_DB": corrupt])
        XCTAssertEqual(none.status, 0, none.stderr)
        XCTAssertFalse(none.stderr.contains("history"), none.stderr)
    }
}

extension CLITests {
    /// eval records each setting as a case; import of its JSON finds it already recorded.
    func testEvalRunsAreRecorded() throws {
        let cache = dir.appendingPathComponent("cache").path
        let text = dir.appendingPathComponent("text.txt")
        try String(repeating: "Once upon a time there was a little cat. ", count: 20).write(to: text, atomically: true, encoding: .utf8)
        let db = dir.appendingPathComponent("history.sqlite").path
        let json = dir.appendingPathComponent("eval.json").path
        let r = try quantbench(
            ["eval", "--quants", "f32,q8_0", "--text", text.path, "--max-tokens", "64", "--repetitions", "1", "--threads", "2",
             "--out", json, "--db", db], environment: ["XDG_CACHE_HOME": cache])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("recorded in the history"), r.stderr)
        let h = try quantbench(["history", "--db", db, "--case", "q8_0", "--metric", "perplexity"])
        XCTAssertEqual(h.status, 0, h.stderr)
        XCTAssertTrue(h.stdout.contains("1 run, 1 series") && h.stdout.contains("eval text.txt ctx"), h.stdout)
        let again = try quantbench(["import", "--db", db, json])
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("1 already recorded"), again.stdout)
    }
}

