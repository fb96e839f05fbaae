import Foundation
@testable import QBRunner
import XCTest

/// `quantbench ab` end to end on the tiny default model with few rounds: real processes,
/// exit statuses and files. Speed is never asserted: the same binary on both sides may
/// or may not be judged a regression by chance, so only 0 or 1 is required there.
final class ABTests: XCTestCase {
    /// The built `quantbench`, run without the CI's `$GITHUB_STEP_SUMMARY` (an empty value
    /// is no summary file) unless a test sets one.
    struct CLI {
        var binary: URL { QuantbenchCLI.binary }
        func quantbench(_ args: [String], environment: [String: String] = [:]) throws -> CLITests.Run {
            try QuantbenchCLI.run(binary, args, environment: ["GITHUB_STEP_SUMMARY": ""].merging(environment) { $1 })
        }
    }

    var cli = CLI()
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-ab-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func script(_ name: String, _ body: String) throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data("#!/bin/sh\n\(body)\n".utf8).write(to: url)
        chmod(url.path, 0o755)
        return url.path
    }

    func abArgs(baseline: String, candidate: String, rounds: Int = 2) -> [String] {
        ["ab", "--baseline", baseline, "--candidate", candidate, "--model", "builtin:tiny", "--pp", "8", "--tg", "4",
         // Exactly 2 rounds: two rounds settle nothing, and without the cap `ab` would add more.
         "--rounds", "\(rounds)", "--max-rounds", "\(rounds)", "--repetitions", "2", "--warmup", "0", "--min-sample-seconds", "0",
         "--out", dir.appendingPathComponent("ab.json").path, "--summary", dir.appendingPathComponent("summary.md").path,
         "--junit", dir.appendingPathComponent("junit.xml").path]
    }

    func json(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: dir.appendingPathComponent(name))
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func testSameBinaryBothSides() throws {
        let bin = cli.binary.path
        let step = dir.appendingPathComponent("step.md")
        let r = try cli.quantbench(abArgs(baseline: bin, candidate: bin), environment: ["GITHUB_STEP_SUMMARY": step.path])
        XCTAssertEqual(r.reason, .exit)
        XCTAssertTrue([0, 1].contains(r.status), "\(r.status): \(r.stderr)")
        XCTAssertTrue(r.stdout.hasPrefix("## QuantBench A/B: "), r.stdout)

        let doc = try json("ab.json")
        XCTAssertEqual(doc["schema"] as? String, "quantbench.bench", "a normal results document")
        let ab = try XCTUnwrap(doc["ab"] as? [String: Any])
        let rounds = try XCTUnwrap(ab["rounds"] as? [[String: Any]])
        // One pair of rounds: one AB and one BA, in the order its seed drew.
        let seed = try XCTUnwrap(ab["order_seed"] as? Int)
        let drawn = (0..<2).map { ABRunner.order(round: $0, seed: UInt32(seed)).first == .baseline ? "AB" : "BA" }
        XCTAssertEqual(rounds.compactMap { $0["order"] as? String }, drawn)
        XCTAssertEqual(Set(drawn), ["AB", "BA"])
        let report = try XCTUnwrap(ab["report"] as? [String: Any])
        XCTAssertTrue((report["method"] as? String)?.contains("which first drawn at random (seed \(seed))") == true, "\(report)")
        XCTAssertTrue((report["notes"] as? [String])?.contains("Each round ran fresh copies of both binaries.") == true, "\(report)")
        // The machine, by its generation too (a VM names Zen 3, 4 and 5 alike).
        let machine = try XCTUnwrap((report["notes"] as? [String])?.first { $0.hasPrefix("Machine: ") }, "\(report)")
        #if arch(x86_64) && os(Linux)
            XCTAssertTrue(machine.contains(" (cpuid family "), machine)
        #endif
        XCTAssertEqual(report["status"] as? Int, Int(r.status))
        let rows = try XCTUnwrap(report["rows"] as? [[String: Any]])
        XCTAssertTrue(rows.contains { $0["case"] as? String == "pp8" && $0["metric"] as? String == "tokens_per_s" })
        XCTAssertTrue(rows.allSatisfy { $0["verdict"] as? String != "invalid" }, "\(rows)")
        // The candidate's samples pooled over the rounds: 2 rounds × 2 repetitions.
        let cases = try XCTUnwrap(doc["cases"] as? [[String: Any]])
        XCTAssertEqual(cases.compactMap { $0["id"] as? String }, ["pp8", "tg4"])
        XCTAssertEqual((cases.first?["runs"] as? [Any])?.count, 4)
        let env = try XCTUnwrap(doc["environment"] as? [String: Any])
        XCTAssertEqual((env["commit"] as? String)?.count ?? 0 >= 7 || env["commit"] as? String == "unknown", true)
        // Which kernel set ran (issue 19): one of the sets' names.
        XCTAssertTrue(["avx512", "avx2", "portable"].contains(env["kernel_set"] as? String ?? ""), "\(env)")
        // And whether the decode streams prefetched themselves (QB_STREAM_PREFETCH).
        XCTAssertNotNil(env["stream_prefetch"] as? Bool, "\(env)")
        let counters = try XCTUnwrap(doc["work_counters"] as? [String: Any])
        XCTAssertNotNil(counters["available"] as? Bool)

        let junit = try String(contentsOf: dir.appendingPathComponent("junit.xml"), encoding: .utf8)
        XCTAssertTrue(junit.contains("<testsuite name=\"quantbench.metrics\""), junit)
        XCTAssertTrue(junit.contains("<testcase classname=\"quantbench.metrics.pp8\" name=\"tokens_per_s\">"), junit)
        let summary = try String(contentsOf: dir.appendingPathComponent("summary.md"), encoding: .utf8)
        XCTAssertEqual(try String(contentsOf: step, encoding: .utf8), summary)
        XCTAssertTrue(summary.contains("<details>"))
    }

    /// Each pair of rounds is one AB and one BA; which comes first is drawn from the seed, the
    /// same for the same seed, and about as often either way.
    func testPairsOfRoundsRunOneABAndOneBAInADrawnOrder() throws {
        var baFirst = 0, pairs = 0
        for seed in UInt32(0)..<200 {
            let orders = (0..<24).map { ABRunner.order(round: $0, seed: seed) }
            for p in 0..<12 {
                XCTAssertEqual(Set(orders[2 * p]), [.baseline, .candidate])
                XCTAssertNotEqual(orders[2 * p], orders[2 * p + 1], "seed \(seed) pair \(p)")
                if orders[2 * p].first == .candidate { baFirst += 1 }
                pairs += 1
            }
            XCTAssertEqual(orders, (0..<24).map { ABRunner.order(round: $0, seed: seed) })
        }
        // 2400 fair draws: a count outside 45-55% has a chance below 1e-6.
        XCTAssertTrue((1080...1320).contains(baFirst), "\(baFirst) of \(pairs) pairs began BA")
        XCTAssertNotEqual((0..<24).map { ABRunner.order(round: $0, seed: 1) }, (0..<24).map { ABRunner.order(round: $0, seed: 2) })

        // --order-seed fixes the draw, and the result records it; the copies are removed.
        let keep = dir.appendingPathComponent("runs")
        let r = try cli.quantbench(
            abArgs(baseline: cli.binary.path, candidate: cli.binary.path, rounds: 4) + ["--order-seed", "5", "--keep-runs", keep.path])
        XCTAssertTrue([0, 1].contains(r.status), r.stderr)
        let ab = try XCTUnwrap(try json("ab.json")["ab"] as? [String: Any])
        XCTAssertEqual(ab["order_seed"] as? Int, 5)
        XCTAssertEqual(
            (ab["rounds"] as? [[String: Any]])?.compactMap { $0["order"] as? String },
            (0..<4).map { ABRunner.order(round: $0, seed: 5).first == .baseline ? "AB" : "BA" })
        let kept = try FileManager.default.contentsOfDirectory(atPath: keep.path)
        XCTAssertTrue(kept.contains("round4-candidate.json"), "\(kept)")
        XCTAssertFalse(kept.contains { $0.hasPrefix("copy-") }, "\(kept)")
    }

    /// Every round runs a fresh copy of an ELF binary, the same bytes under a path of one
    /// length for both sides; a script runs where it is.
    func testRoundsRunFreshCopiesOfTheBinaries() throws {
        let work = dir.appendingPathComponent("work")
        let wrapper = try script("wrapper-quantbench", "exec \"\(cli.binary.path)\" \"$@\"")
        let copies = ABRoundCopies(workDirectory: work, baseline: cli.binary.path, candidate: wrapper)
        XCTAssertTrue(copies.copies(.baseline))
        XCTAssertFalse(copies.copies(.candidate))
        let first = try copies.fresh()
        let copy = try XCTUnwrap(first[.baseline])
        XCTAssertEqual(copy, work.appendingPathComponent("copy-a/quantbench").path)
        XCTAssertEqual(first[.candidate], wrapper)
        XCTAssertTrue(FileManager.default.contentsEqual(atPath: copy, andPath: cli.binary.path))
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: copy))
        let version = try QuantbenchCLI.run(URL(fileURLWithPath: copy), ["--version"], environment: [:])
        XCTAssertEqual(version.status, 0, version.stderr)
        // The last round's copy, changed, is replaced by a new one.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: copy))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data([0]))
        try handle.close()
        chmod(copy, 0o600)
        XCTAssertEqual(try copies.fresh()[.baseline], copy)
        XCTAssertTrue(FileManager.default.contentsEqual(atPath: copy, andPath: cli.binary.path), "a new copy each round")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: copy))
        let both = ABRoundCopies(workDirectory: work, baseline: cli.binary.path, candidate: cli.binary.path)
        let paths = try both.fresh()
        XCTAssertEqual(paths[.baseline]?.count, paths[.candidate]?.count)
        XCTAssertNotEqual(paths[.baseline], paths[.candidate])
        both.remove()
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.appendingPathComponent("copy-a").path))
        XCTAssertFalse(FileManager.default.fileExists(atPath: work.appendingPathComponent("copy-b").path))
        // A copy that cannot be made ends the run as a failure naming the binary.
        let blocked = ABRoundCopies(workDirectory: URL(fileURLWithPath: wrapper), baseline: cli.binary.path, candidate: cli.binary.path)
        XCTAssertThrowsError(try blocked.fresh()) { error in
            XCTAssertTrue("\(error)".hasPrefix("baseline binary \(self.cli.binary.path): cannot copy it to "), "\(error)")
        }
    }

    /// A baseline that prints garbage, or crashes: one error line naming it, exit 2, and the
    /// result JSON still written with what was measured (the round's candidate side).
    func testBrokenBaselineFailsWithOneLineAndStillWritesTheResult() throws {
        let garbage = try script("garbage-quantbench", #"for a; do last="$a"; done; echo 'Segmentation? {{{ not json'; echo '{"schema": 12' > "$last"; exit 0"#)
        let crash = try script("crashing-quantbench", "echo starting >&2; kill -SEGV $$")
        let silent = try script("silent-quantbench", "exit 0")
        for (bin, expected) in [(garbage, "wrote an unreadable result"), (crash, "crashed (signal 11)"), (silent, "wrote no result")] {
            try? FileManager.default.removeItem(at: dir.appendingPathComponent("ab.json"))
            let r = try cli.quantbench(abArgs(baseline: bin, candidate: cli.binary.path))
            XCTAssertEqual(r.reason, .exit)
            XCTAssertEqual(r.status, 2, r.stderr)
            let errors = r.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }
            XCTAssertEqual(errors.count, 1, r.stderr)
            XCTAssertTrue(errors.first?.contains("baseline binary \(bin): \(expected)") == true, r.stderr)
            let doc = try json("ab.json")
            let ab = try XCTUnwrap(doc["ab"] as? [String: Any])
            XCTAssertEqual(ab["stopped_by"] as? String, "failure")
            XCTAssertEqual((doc["cases"] as? [Any])?.count, 2, "the candidate's side of the round was measured")
            XCTAssertEqual((ab["report"] as? [String: Any])?["status"] as? Int, 2)
        }
    }

    /// `--rejudge` tests a recorded run's rounds again under other thresholds: here a real
    /// run's pp8 t/s rows replaced by 10 rounds 20% slower, which gates at the default 10%
    /// and not at --max-regression 30; the input is never overwritten.
    func testRejudgeReadsRecordedRounds() throws {
        let bin = cli.binary.path
        let r = try cli.quantbench(abArgs(baseline: bin, candidate: bin))
        XCTAssertTrue([0, 1].contains(r.status), r.stderr)
        var doc = try json("ab.json")
        var ab = try XCTUnwrap(doc["ab"] as? [String: Any])
        var report = try XCTUnwrap(ab["report"] as? [String: Any])
        var rows = try XCTUnwrap(report["rows"] as? [[String: Any]])
        // Each round's value is the median of the repetitions kept beside it.
        for row in rows {
            for side in ["base", "new"] {
                let values = try XCTUnwrap(row["\(side)_values"] as? [Double], "\(row)")
                let reps = try XCTUnwrap(row["\(side)_repetitions"] as? [[Double]], "\(row)")
                XCTAssertEqual(reps.count, values.count)
                for (v, r) in zip(values, reps) {
                    XCTAssertFalse(r.isEmpty)
                    let s = r.sorted()
                    XCTAssertEqual((s[(s.count - 1) / 2] + s[s.count / 2]) / 2, v, accuracy: abs(v) * 1e-12, "\(row["case"] ?? "") \(row["metric"] ?? "")")
                }
            }
        }
        let wobble: [Double] = [0, 0.01, -0.01, 0.02, -0.005, 0.015, -0.02, 0.005, 0.01, -0.015]
        for i in rows.indices {
            let cpu = rows[i]["metric"] as? String == "cpu_s"
            let base = wobble.map { 100 * (1 + $0) }
            rows[i]["base_values"] = base
            // 20% slower: t/s down, CPU time per operation up; everything else the same.
            switch rows[i]["metric"] as? String {
            case "tokens_per_s" where rows[i]["case"] as? String == "pp8": rows[i]["new_values"] = base.map { $0 / 1.2 }
            case _ where cpu && rows[i]["case"] as? String == "pp8": rows[i]["new_values"] = base.map { $0 * 1.2 }
            default: rows[i]["new_values"] = base
            }
        }
        report["rows"] = rows
        ab["report"] = report
        doc["ab"] = ab
        let recorded = dir.appendingPathComponent("recorded.json")
        try JSONSerialization.data(withJSONObject: doc).write(to: recorded)
        let before = try Data(contentsOf: recorded)

        let gated = try cli.quantbench(["ab", "--rejudge", recorded.path])
        XCTAssertEqual(gated.status, 1, gated.stderr + gated.stdout)
        XCTAssertTrue(gated.stdout.contains("**REGRESSION** pp8 t/s: 20.0% worse"), gated.stdout)
        XCTAssertTrue(gated.stdout.contains("Re-judged from \(recorded.path)"), gated.stdout)
        let lenient = try cli.quantbench(["ab", "--rejudge", recorded.path, "--max-regression", "30", "--out", dir.appendingPathComponent("re.json").path])
        XCTAssertEqual(lenient.status, 0, lenient.stderr + lenient.stdout)
        let re = try json("re.json")
        XCTAssertEqual(((re["ab"] as? [String: Any])?["report"] as? [String: Any])?["status"] as? Int, 0)
        let reRows = try XCTUnwrap(((re["ab"] as? [String: Any])?["report"] as? [String: Any])?["rows"] as? [[String: Any]])
        XCTAssertEqual(reRows.map { ($0["base_repetitions"] as? [[Double]])?.count }, rows.map { ($0["base_repetitions"] as? [[Double]])?.count },
            "re-judging keeps the repetitions")

        let onto = try cli.quantbench(["ab", "--rejudge", recorded.path, "--out", recorded.path])
        XCTAssertEqual(onto.status, 2, onto.stderr)
        let junitOnto = try cli.quantbench(["ab", "--rejudge", recorded.path, "--junit", recorded.path])
        XCTAssertEqual(junitOnto.status, 2, junitOnto.stderr)
        XCTAssertEqual(try Data(contentsOf: recorded), before, "the recorded run is never overwritten")
        let notAB = dir.appendingPathComponent("plain.json")
        var plain = doc
        plain["ab"] = nil
        try JSONSerialization.data(withJSONObject: plain).write(to: notAB)
        let refused = try cli.quantbench(["ab", "--rejudge", notAB.path])
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(refused.stderr.contains("not an ab result"), refused.stderr)
        let both = try cli.quantbench(["ab", "--rejudge", recorded.path, "--baseline", bin])
        XCTAssertNotEqual(both.status, 0)
        XCTAssertTrue(both.stderr.contains("--rejudge reads recorded rounds"), both.stderr)
    }

    /// Two replaying "binaries" (scripts that copy the next of a list of results files, made
    /// from one real `bench` run with chosen pp8 speeds and CPU times) let the rounds' values be
    /// set exactly. `ratios[i]` is the candidate's time factor in round i (speed divided by it).
    func replay(ratios: [Double], rounds: Int, extraArgs: [String]) throws -> (CLITests.Run, [String: Any]) {
        let template = dir.appendingPathComponent("template.json")
        let t = try cli.quantbench([
            "bench", "--model", "builtin:tiny", "--pp", "8", "--tg", "4", "--repetitions", "1", "--warmup", "0",
            "--min-sample-seconds", "0", "--out", template.path,
        ])
        XCTAssertEqual(t.status, 0, t.stderr)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: template)) as? [String: Any])
        // The machine's drift, shared by both sides of a round.
        let drift: [Double] = [0, 0.02, -0.015, 0.03, -0.01, 0.025, -0.02, 0.005, 0.012, -0.007, 0.017]
        for (side, factors) in [("base", ratios.map { _ in 1.0 }), ("cand", ratios)] {
            for (i, f) in factors.enumerated() {
                var d = doc
                var cases = try XCTUnwrap(d["cases"] as? [[String: Any]])
                for k in cases.indices where cases[k]["id"] as? String == "pp8" {
                    var metrics = try XCTUnwrap(cases[k]["metrics"] as? [String: Any])
                    let slow = f * (1 + drift[i % drift.count])
                    for (m, v) in [("tokens_per_s", 1000 / slow), ("cpu_s", 0.01 * slow)] {
                        metrics[m] = ["samples": [v], "median": v, "mean": v, "ci_low": v, "ci_high": v, "sd": 0, "n": 1, "confidence": 0]
                    }
                    cases[k]["metrics"] = metrics
                }
                d["cases"] = cases
                try JSONSerialization.data(withJSONObject: d).write(to: dir.appendingPathComponent("\(side)-\(i).json"))
            }
        }
        let fake = { (side: String) in
            try self.script("\(side)-quantbench", """
                n=$(cat "\(self.dir.path)/\(side).count" 2>/dev/null || echo 0)
                echo $((n + 1)) > "\(self.dir.path)/\(side).count"
                for a; do last="$a"; done
                cp "\(self.dir.path)/\(side)-$n.json" "$last"
                """)
        }
        let r = try cli.quantbench([
            "ab", "--baseline", try fake("base"), "--candidate", try fake("cand"), "--model", "builtin:tiny", "--pp", "8", "--tg", "4",
            "--rounds", "\(rounds)", "--max-seconds", "600", "--out", dir.appendingPathComponent("ab.json").path,
        ] + extraArgs)
        return (r, try json("ab.json"))
    }

    /// Rounds are added while a metric's interval still reaches the threshold without gating,
    /// and stop once it settles: four wild rounds (a noisy machine), then steady ones.
    func testUnsettledMetricsGetMoreRounds() throws {
        let wild: [Double] = [1.25, 0.8, 1.2, 0.85]
        let (r, doc) = try replay(ratios: wild + Array(repeating: 1.0, count: 36), rounds: 4, extraArgs: ["--max-rounds", "40"])
        XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
        let ab = try XCTUnwrap(doc["ab"] as? [String: Any])
        let rounds = try XCTUnwrap(ab["rounds"] as? [[String: Any]]).count
        XCTAssertEqual(ab["stopped_by"] as? String, "settled", r.stdout)
        XCTAssertGreaterThan(rounds, 4, "the wild rounds leave pp8 open")
        XCTAssertLessThan(rounds, 40, "steady rounds settle it")
        XCTAssertEqual(rounds % 2, 0, "added in AB-BA pairs")
        XCTAssertEqual(ab["rounds_max"] as? Int, 40)
        XCTAssertTrue((ab["extended_for"] as? [String])?.contains("pp8 t/s") == true, "\(ab["extended_for"] ?? "none")")
        XCTAssertTrue(r.stdout.contains("were unsettled") || r.stdout.contains("was unsettled"), r.stdout)

        // Steady from the start: exactly the planned rounds.
        try FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let (steady, steadyDoc) = try replay(ratios: Array(repeating: 1.0, count: 12), rounds: 6, extraArgs: [])
        XCTAssertEqual(steady.status, 0, steady.stderr)
        let steadyAB = try XCTUnwrap(steadyDoc["ab"] as? [String: Any])
        XCTAssertEqual((steadyAB["rounds"] as? [Any])?.count, 6)
        XCTAssertEqual(steadyAB["stopped_by"] as? String, "rounds")
        XCTAssertNil(steadyAB["extended_for"])
    }

    /// A gated row lists its rounds' ratios with their orders, for a CI log to show whether
    /// every round moved or a few, and whether the change followed the order.
    func testAGatedMetricListsItsRounds() throws {
        let (r, doc) = try replay(ratios: Array(repeating: 1.25, count: 8), rounds: 8, extraArgs: ["--max-rounds", "8", "--order-seed", "3"])
        XCTAssertEqual(r.status, 1, r.stderr + r.stdout)
        let orders = (0..<8).map { ABRunner.order(round: $0, seed: 3).first == .baseline ? "AB" : "BA" }
        let ab = try XCTUnwrap(doc["ab"] as? [String: Any])
        XCTAssertEqual((ab["rounds"] as? [[String: Any]])?.compactMap { $0["order"] as? String }, orders)
        let line = "pp8 t/s, candidate / baseline in each round (its order): " + orders.map { "0.800 \($0)" }.joined(separator: ", ") + "."
        XCTAssertTrue(r.stdout.contains(line), r.stdout)
        XCTAssertTrue(r.stdout.contains("pp8 CPU time, candidate / baseline in each round (its order): 1.250 "), r.stdout)
        XCTAssertFalse(r.stdout.contains("tg4 t/s, candidate / baseline"), "only gated rows: \(r.stdout)")
        XCTAssertTrue(r.stdout.contains("the baseline and candidate ran in place (not an ELF file)"), r.stdout)
    }

    /// Wild to the end: the run stops at --max-rounds with a warning naming what is unsettled,
    /// and passes (nothing shown worse); with --max-rounds equal to --rounds nothing is added.
    func testAMetricThatNeverSettlesIsNamed() throws {
        let wild: [Double] = [1.25, 0.8, 1.2, 0.85, 1.3, 0.78, 1.22, 0.82]
        let (r, doc) = try replay(ratios: wild + wild, rounds: 4, extraArgs: ["--max-rounds", "8"])
        XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
        let ab = try XCTUnwrap(doc["ab"] as? [String: Any])
        XCTAssertEqual((ab["rounds"] as? [Any])?.count, 8)
        XCTAssertEqual(ab["stopped_by"] as? String, "max rounds")
        XCTAssertTrue(r.stdout.contains("unsettled after 8 rounds (stopped by max rounds): pp8 t/s"), r.stdout)

        try FileManager.default.removeItem(at: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let (fixed, fixedDoc) = try replay(ratios: wild, rounds: 4, extraArgs: ["--max-rounds", "4"])
        XCTAssertEqual(fixed.status, 0, fixed.stderr)
        XCTAssertEqual(((fixedDoc["ab"] as? [String: Any])?["rounds"] as? [Any])?.count, 4)
        XCTAssertTrue(fixed.stdout.contains("unsettled after 4 rounds (stopped by the round count)") || fixed.stdout.contains("unsettled after 4 rounds (stopped by rounds)"), fixed.stdout)
        let bad = try cli.quantbench(["ab", "--baseline", cli.binary.path, "--candidate", cli.binary.path, "--rounds", "8", "--max-rounds", "6"])
        XCTAssertEqual(bad.status, 64, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("--max-rounds must be between --rounds (8) and 4000"), bad.stderr)
    }

    func testBadInputExitsTwo() throws {
        let r = try cli.quantbench(["ab", "--baseline", "/nonexistent/quantbench", "--candidate", cli.binary.path])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "error: baseline binary /nonexistent/quantbench: no such file\n")
        let v = try cli.quantbench(["--version"])
        XCTAssertEqual(v.status, 0)
        XCTAssertTrue(v.stdout.contains("commit: "), v.stdout)
        XCTAssertTrue(v.stdout.contains("build configuration: debug") || v.stdout.contains("build configuration: release"), v.stdout)
        XCTAssertTrue(v.stdout.contains("\ncpu: "), v.stdout)
        #if arch(x86_64) && os(Linux)
            XCTAssertTrue(v.stdout.contains(" (cpuid family "), v.stdout)
        #endif
        // QB_STREAM_PREFETCH (or its first name, QB_X16_PREFETCH) overrides the CPU's choice,
        // and --version says which is in force.
        // (An empty value is no setting: the first name alone is tested with the new one empty.)
        for name in ["QB_STREAM_PREFETCH", "QB_X16_PREFETCH"] {
            let other = name == "QB_X16_PREFETCH" ? ["QB_STREAM_PREFETCH": ""] : [:]
            let on = try cli.quantbench(["--version"], environment: other.merging([name: "1"]) { $1 })
            XCTAssertTrue(on.stdout.contains("one-row decode streams prefetch themselves: yes"), "\(name): \(on.stdout)")
            let off = try cli.quantbench(["--version"], environment: other.merging([name: "0"]) { $1 })
            XCTAssertTrue(off.stdout.contains("one-row decode streams prefetch themselves: no, the hardware prefetcher does"), "\(name): \(off.stdout)")
        }
    }
}
