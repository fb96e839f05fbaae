import Foundation
import XCTest
import QBGeneration
@testable import QBRunner

/// Suites run end to end on the tiny synthetic model through the library API, every check
/// passing. Speed is measured, never asserted.
final class BenchRunTests: XCTestCase {
    func run(_ name: String, repetitions: Int = 2, warmup: Int = 1) throws -> BenchResult {
        let suite = try SuiteLoader.load(path: RunnerFixtures.prompts.appendingPathComponent("\(name).yaml").path)
        let runner = BenchRunner(loaded: try RunnerFixtures.tiny(), repetitions: repetitions, warmup: warmup)
        return try runner.runBlocking(suite)
    }

    func assertAllPassed(_ r: BenchResult, file: StaticString = #filePath, line: UInt = #line) {
        for c in r.cases {
            for check in c.checks where !check.passed {
                XCTFail("\(r.suite.name)/\(c.id): \(check.name): \(check.detail)", file: file, line: line)
            }
            XCTAssertNotEqual(c.status, .failed, "\(c.id)", file: file, line: line)
        }
        XCTAssertTrue(r.passed, file: file, line: line)
    }

    func testSmokeSuite() throws {
        let r = try run("smoke")
        assertAllPassed(r)
        XCTAssertEqual(r.aggregate.cases, 8)
        XCTAssertEqual(r.aggregate.skipped, 0)
        XCTAssertEqual(r.suite.name, "smoke")
        XCTAssertEqual(r.model.config.vocabSize, 1024)
        XCTAssertEqual(r.model.fileHash.count, 16)
        XCTAssertEqual(r.settings.repetitions, 2)

        // Every generation case: the checks the issue asks for, metrics, timestamps, memory.
        for c in r.cases where c.kind == .generate || c.kind == .chat {
            XCTAssertEqual(Set(c.checks.map(\.name)).isSuperset(of: ["stream_equals_collect", "deterministic", "valid_utf8", "no_stop_leak", "finish_reason"]), true, c.id)
            XCTAssertEqual(c.runs.count, 2, "warmups are not recorded")
            let memory = try XCTUnwrap(c.memory)
            XCTAssertGreaterThan(memory.weightsBytes, 2_000_000)
            XCTAssertGreaterThan(memory.kvCacheBytes, 0)
            XCTAssertGreaterThan(memory.scratchBytes, 0)
            XCTAssertNotNil(c.metrics[Metric.endToEnd.rawValue])
            XCTAssertNotNil(c.metrics[Metric.peakResident.rawValue])
            let turn = try XCTUnwrap(c.runs.first?.turns?.first)
            XCTAssertEqual(turn.tokenTimestamps.count, turn.generatedTokens)
            XCTAssertEqual(turn.tokenTimestamps, turn.tokenTimestamps.sorted())
        }
        let greedy = try XCTUnwrap(r.cases.first { $0.id == "greedy" })
        for m in [Metric.timeToFirstToken, .prefillTokensPerSecond, .decodeTokensPerSecond, .interTokenP50, .interTokenP90, .interTokenP99] {
            XCTAssertNotNil(greedy.metrics[m.rawValue], m.rawValue)
        }
        XCTAssertEqual(greedy.output?.tokens.first?.count, 24)
        let stop = try XCTUnwrap(r.cases.first { $0.id == "stop-from-output" })
        XCTAssertEqual(stop.stop?.count, 1)
        XCTAssertEqual(stop.runs.first?.turns?.first?.finishReason, .stopString)
        let eos = try XCTUnwrap(r.cases.first { $0.id == "forced-eos" })
        XCTAssertEqual(eos.output?.tokens, [[]])
        let cancel = try XCTUnwrap(r.cases.first { $0.id == "cancel-decode" })
        XCTAssertTrue(cancel.checks.contains { $0.name == "stops_within_one_step" && $0.passed })
        XCTAssertTrue(cancel.checks.contains { $0.name == "session_usable_after_cancel" && $0.passed })
        XCTAssertEqual(cancel.output?.tokens.first?.count, 3)
        for id in ["pp128", "tg32"] {
            let t = try XCTUnwrap(r.cases.first { $0.id == id })
            XCTAssertEqual(t.metrics[Metric.tokensPerSecond.rawValue]?.count, 2)
        }

        // The JSON round-trips and the reports render.
        let back = try ResultsFile.decode(try ResultsFile.encode(r), path: "smoke.json")
        XCTAssertEqual(back.cases, r.cases)
        let md = BenchReport.markdown(r)
        XCTAssertTrue(md.contains("## Generation"))
        XCTAssertTrue(md.contains("| model"))
        let table = BenchReport.llamaBenchTable(r)
        XCTAssertTrue(table.hasPrefix("| model "), table)
        XCTAssertTrue(table.contains("| pp128 |"), table)
        XCTAssertTrue(table.contains(" ± "), table)
        // Comparing a result with itself finds nothing to gate.
        XCTAssertTrue(BenchComparison.compare(base: r, new: r, maxRegression: 0.05).regressions.isEmpty)
    }

    /// With ceilings measured in the run (`bench --roofline`), each decode repetition is
    /// preceded by a bandwidth probe whose figure the run keeps and the report sets it
    /// against; prefill repetitions and runs without `--roofline` have none.
    func testDecodeRepetitionsArePairedWithABandwidthProbe() throws {
        let loaded = try RunnerFixtures.tiny()
        let suite = SuiteLoader.throughputSuite(prompt: [8], generate: [4])
        let ceilings = Roofline(
            threads: loaded.pool.threadCount, readBandwidthOneThread: 10, readBandwidthAllThreads: 20, fp32GflopsOneThread: 1,
            fp32GflopsAllThreads: 2, int8GopsOneThread: 1, int8GopsAllThreads: 2, cpu: "test", measuredAt: Date())
        let r = try BenchRunner(loaded: loaded, repetitions: 2, warmup: 0, roofline: ceilings).runBlocking(suite)
        let tg = try XCTUnwrap(r.cases.first { $0.id == "tg4" }), pp = try XCTUnwrap(r.cases.first { $0.id == "pp8" })
        XCTAssertEqual(tg.runs.count, 2)
        for run in tg.runs { XCTAssertGreaterThan(try XCTUnwrap(run.readBandwidthGBps), 0) }
        XCTAssertTrue(pp.runs.allSatisfy { $0.readBandwidthGBps == nil })
        XCTAssertTrue(BenchReport.markdown(r).contains("per repetition against a probe run just before it"))
        let back = try ResultsFile.decode(try ResultsFile.encode(r), path: "paired.json")
        XCTAssertEqual(back.cases, r.cases)

        let plain = try BenchRunner(loaded: loaded, repetitions: 1, warmup: 0).runBlocking(suite)
        XCTAssertTrue(plain.cases.flatMap(\.runs).allSatisfy { $0.readBandwidthGBps == nil })
    }

    /// `--interleave`: throughput cases run round by round (run r of every case, then run
    /// r + 1), each keeping its own state and depth, with results in suite order and the
    /// same measured runs as case after case.
    func testInterleavedThroughputRunsRoundByRound() throws {
        let loaded = try RunnerFixtures.tiny()
        let suite = SuiteLoader.throughputSuite(prompt: [8], generate: [4], depths: [0, 16])
        let order = Pieces()
        let r = try BenchRunner(
            loaded: loaded, repetitions: 2, warmup: 1,
            progress: { if case .runFinished(let i, let run, _) = $0 { order.append("\(run):\(i)") } }, interleave: true
        ).runBlocking(suite)
        XCTAssertEqual(r.cases.map(\.id), ["pp8", "tg4", "pp8-d16", "tg4-d16"])
        XCTAssertEqual(order.pieces, (1...3).flatMap { run in (0..<4).map { "\(run):\($0)" } })
        for c in r.cases {
            XCTAssertEqual(c.status, .passed, c.id)
            XCTAssertEqual(c.runs.map(\.repetition), [1, 2], c.id)
            XCTAssertEqual(c.metrics[Metric.tokensPerSecond.rawValue]?.count, 2, c.id)
        }
        XCTAssertEqual(r.cases.first { $0.id == "tg4-d16" }?.contextLength, 20)
    }

    /// A timed sample repeats its operation until it has lasted the minimum and reports
    /// per-operation figures, with CPU time beside wall time; where the work counters cannot
    /// be opened (here perf_event_open answers ENOENT; `QB_WORK_COUNTERS=off` forces it
    /// anywhere) the result says so and carries no counter metrics.
    func testSamplesLastTheMinimumAndRecordCountersFallback() throws {
        let loaded = try RunnerFixtures.tiny()
        let suite = SuiteLoader.throughputSuite(prompt: [4], generate: [2])
        let r = try BenchRunner(
            loaded: loaded, repetitions: 2, warmup: 0, minSampleSeconds: 0.05, counterEnvironment: ["QB_WORK_COUNTERS": "off"]
        ).runBlocking(suite)
        XCTAssertEqual(r.settings.minSampleSeconds, 0.05)
        XCTAssertEqual(r.workCounters, WorkCounterStatus(available: false, reason: "disabled by QB_WORK_COUNTERS=off"))
        for c in r.cases {
            XCTAssertEqual(c.runs.count, 2, c.id)
            for run in c.runs {
                let n = try XCTUnwrap(run.iterations, "a tiny operation is repeated: \(c.id)")
                XCTAssertGreaterThan(n, 1)
                // Per operation: the sample's total is at least the minimum.
                XCTAssertGreaterThanOrEqual(try XCTUnwrap(run.seconds) * Double(n), 0.05 * 0.999, c.id)
                XCTAssertGreaterThan(try XCTUnwrap(run.cpuSeconds), 0)
                XCTAssertNil(run.instructions)
                XCTAssertNil(run.cycles)
            }
            XCTAssertEqual(c.metrics[Metric.cpuSeconds.rawValue]?.count, 2)
            XCTAssertNil(c.metrics[Metric.instructions.rawValue])
        }
        let back = try ResultsFile.decode(try ResultsFile.encode(r), path: "counters.json")
        XCTAssertEqual(back.workCounters, r.workCounters)
        XCTAssertEqual(back.cases, r.cases)

        // Asking the kernel: either counters (then every run has them) or the reason why not.
        let asked = try BenchRunner(loaded: loaded, repetitions: 1, warmup: 0, minSampleSeconds: 0, counterEnvironment: [:]).runBlocking(suite)
        let status = try XCTUnwrap(asked.workCounters)
        if status.available {
            XCTAssertTrue(asked.cases.flatMap(\.runs).allSatisfy { ($0.instructions ?? 0) > 0 })
        } else {
            XCTAssertTrue(status.reason?.hasPrefix("perf_event_open: ") == true, status.reason ?? "nil")
            XCTAssertTrue(asked.cases.flatMap(\.runs).allSatisfy { $0.instructions == nil && $0.iterations == nil })
        }
    }

    func testStopsSuite() throws { assertAllPassed(try run("stops", repetitions: 1, warmup: 0)) }

    func testCancelSuite() throws {
        let r = try run("cancel", repetitions: 1, warmup: 0)
        assertAllPassed(r)
        let late = try XCTUnwrap(r.cases.first { $0.id == "prefill-late" })
        // Two layers per chunk on the tiny model: 9 layers ran, so 4 chunks of 64 are cached.
        XCTAssertTrue(late.checks.contains { $0.name == "stops_within_one_layer" && $0.detail.contains("cache 256 of 400") }, "\(late.checks)")
    }

    func testChatAndUnicodeSuites() throws {
        let chat = try run("chat", repetitions: 1, warmup: 0)
        assertAllPassed(chat)
        let two = try XCTUnwrap(chat.cases.first { $0.id == "two-turns" })
        XCTAssertEqual(two.runs.first?.turns?.count, 2)
        XCTAssertGreaterThan(two.runs.first?.turns?.last?.reusedPromptTokens ?? 0, 0)
        assertAllPassed(try run("unicode", repetitions: 1, warmup: 0))
    }

    func testLongPromptCaseBeyondTheContextIsSkipped() throws {
        let suite = try SuiteLoader.parse("""
            cases:
              - id: too-long
                prompt_tokens: 3000
              - id: fits
                prompt_tokens: 100
                max_tokens: 4
            """, path: "t.yaml")
        let r = try BenchRunner(loaded: RunnerFixtures.tiny(), repetitions: 1, warmup: 0).runBlocking(suite)
        XCTAssertEqual(r.cases[0].status, .skipped)
        XCTAssertTrue(r.cases[0].notes.joined().contains("context"), "\(r.cases[0].notes)")
        XCTAssertEqual(r.cases[1].status, .passed)
        XCTAssertEqual(r.cases[1].promptTokens, 100)
        XCTAssertEqual(r.aggregate.skipped, 1)
        XCTAssertTrue(r.passed, "a skipped case is not a failure")
    }

    func testFailingExpectationIsReportedNotThrown() throws {
        let suite = try SuiteLoader.parse("""
            cases:
              - id: wrong
                prompt: hello
                max_tokens: 4
                expect: {finish_reason: eos, contains: ["this will not appear"]}
            """, path: "t.yaml")
        let r = try BenchRunner(loaded: RunnerFixtures.tiny(), repetitions: 1, warmup: 0).runBlocking(suite)
        XCTAssertEqual(r.cases[0].status, .failed)
        XCTAssertFalse(r.passed)
        XCTAssertEqual(Set(r.cases[0].checks.filter { !$0.passed }.map(\.name)), ["finish_reason", "contains"])
        XCTAssertTrue(BenchReport.markdown(r).contains("## Failed checks"))
    }

    func testInterruptionThrowsAndReturnsNothing() throws {
        let flag = InterruptFlag()
        flag.set()
        let runner = BenchRunner(loaded: try RunnerFixtures.tiny(), repetitions: 1, warmup: 0, interrupt: flag)
        let suite = try SuiteLoader.load(path: RunnerFixtures.prompts.appendingPathComponent("smoke.yaml").path)
        XCTAssertThrowsError(try runner.runBlocking(suite)) { XCTAssertTrue($0 is BenchInterrupted) }
    }
}
