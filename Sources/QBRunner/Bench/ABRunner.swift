#if canImport(Glibc)
import Glibc
#endif
import Foundation
import QBSupport

/// `quantbench ab`: one suite run by two `quantbench` executables on one machine,
/// interleaved round by round, each side a fresh `bench` process writing a results JSON to a
/// temporary folder. Drift of the machine over the minutes of the run then hits both sides
/// alike, and each round gives one paired observation per metric: the median of that
/// process's repetitions. `RegressionGate` judges the pairs.
///
/// The signed-rank test holds only when nothing but the binaries' code tells the two sides
/// apart, so everything else is balanced or drawn at random per round:
/// - **Order:** rounds come in pairs, one baseline-first (AB) and one candidate-first (BA),
///   which of the two comes first drawn per pair from `orderSeed` (recorded). A fixed ABBA
///   schedule cancels drift and a first-or-second bias, but a disturbance of the machine that
///   recurs every two rounds (about 5 s for CI's suite) would land on the same side every time:
///   on these VMs the kernel's proactive reclaim (DAMON, 5 s aggregation) stalls both cores for
///   14-30 ms every 5.1 s while it has cold page cache to page out.
/// - **Files:** each round runs fresh copies of both binaries (ELF files; a script runs in
///   place), made together and under paths of one length, so that where a file's pages happen
///   to sit in memory, or one copy being older or also running `ab` itself, is not a property
///   of one side for the whole run.
///
/// Only `bench` and options both binaries accept are used, so a baseline built before `ab`
/// existed works. A side that crashes, is killed, or writes no readable result ends the run:
/// the round's other side still runs (so something is measured), the failure is recorded in
/// one line naming the binary, and the verdict is "failed" (exit 2).
public struct ABRunner: Sendable {
    public enum Side: String, Sendable, Codable {
        case baseline, candidate
    }

    public var baseline: String
    public var candidate: String
    /// Arguments after `bench`, the same for both sides (`--out` is added per run).
    public var benchArguments: [String]
    /// Rounds to run (at least 2).
    public var rounds: Int
    /// Most rounds to run: past `rounds`, pairs of rounds (AB, BA) are added while a metric
    /// is unsettled (`RegressionGate.unsettled`) and the time budget allows. On a quiet
    /// machine the planned rounds settle everything; on a noisy one the intervals are wide
    /// and more rounds, not a looser rule, keep a real regression from passing unnoticed.
    public var maxRounds: Int
    /// Time budget: no round is started that would end past it (by the mean round so far);
    /// the first two rounds always run.
    public var maxSeconds: Double
    public var policy: GatePolicy
    /// Where each run's JSON and output go.
    public var workDirectory: URL
    /// Longest one `bench` process may take before it is killed (and counted as failed).
    public var processTimeout: Double
    public var interrupt: InterruptFlag
    /// Draws which of AB and BA comes first in each pair of rounds (`order(round:seed:)`).
    public var orderSeed: UInt32
    public var log: @Sendable (String) -> Void

    public static let defaultRounds = 24
    /// `maxRounds` when none is given: four times the planned rounds (halving the
    /// intervals' width), in practice bounded by the time budget.
    public static let defaultExtension = 4
    public static let defaultMaxSeconds = 150.0
    public static let minimumRounds = 2

    public init(
        baseline: String, candidate: String, benchArguments: [String], rounds: Int = ABRunner.defaultRounds, maxRounds: Int? = nil,
        maxSeconds: Double = ABRunner.defaultMaxSeconds, policy: GatePolicy = GatePolicy(), workDirectory: URL,
        processTimeout: Double = 600, interrupt: InterruptFlag = InterruptFlag(), orderSeed: UInt32 = .random(in: 0...UInt32.max),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.baseline = baseline
        self.candidate = candidate
        self.benchArguments = benchArguments
        self.rounds = max(Self.minimumRounds, rounds)
        self.maxRounds = max(self.rounds, maxRounds ?? self.rounds * Self.defaultExtension)
        self.maxSeconds = maxSeconds
        self.policy = policy
        self.workDirectory = workDirectory
        self.processTimeout = processTimeout
        self.interrupt = interrupt
        self.orderSeed = orderSeed
        self.log = log
    }

    /// The sides of round `r` (from 0) in the order they run: rounds 2p and 2p + 1 are one AB
    /// and one BA, and a draw from `seed` and p says which comes first.
    public static func order(round r: Int, seed: UInt32) -> [Side] {
        var rng = SplitMix64(seed: UInt64(seed) << 32 | UInt64(r / 2))
        let pairStartsWithBA = rng.next() & 1 == 1
        let baselineFirst = (r % 2 == 0) != pairStartsWithBA
        return baselineFirst ? [.baseline, .candidate] : [.candidate, .baseline]
    }

    /// One `bench` process.
    struct RunOutcome {
        var result: BenchResult?
        var seconds: Double
        var status: Int32?
        var failure: String?
    }

    /// Runs the rounds and judges them. Never throws: failures are in the summary.
    public func run() -> (result: BenchResult, summary: ABSummary) {
        let clock = ContinuousClock()
        let start = clock.now
        var baseResults: [BenchResult?] = []
        var candResults: [BenchResult?] = []
        var roundRecords: [ABSummary.Round] = []
        var failures: [String] = []
        var stoppedBy = maxRounds > rounds ? "max rounds" : "rounds"
        var extendedFor: [String]?
        let copies = roundCopies
        defer { copies.remove() }
        for r in 0..<maxRounds {
            // Past the planned rounds, only in AB-BA pairs and only while something is open.
            if r >= rounds, (r - rounds) % 2 == 0 {
                let open = unsettled(base: baseResults, cand: candResults)
                if open.isEmpty {
                    stoppedBy = r == rounds ? "rounds" : "settled"
                    break
                }
                if extendedFor == nil { extendedFor = open.map(\.label) }
                log("round \(r): unsettled: " + open.map(\.label).joined(separator: ", ") + "; adding rounds")
            }
            let elapsed = (clock.now - start).seconds
            if r >= Self.minimumRounds, !roundRecords.isEmpty {
                let mean = elapsed / Double(roundRecords.count)
                if elapsed + mean > maxSeconds {
                    stoppedBy = "time budget"
                    break
                }
            }
            if interrupt.isSet { stoppedBy = "interrupted"; break }
            let order = Self.order(round: r, seed: orderSeed)
            var record = ABSummary.Round(index: r + 1, order: order.first == .baseline ? "AB" : "BA")
            let paths: [Side: String]
            do {
                paths = try copies.fresh()
            } catch {
                failures.append("\(error)")
                stoppedBy = "failure"
                break
            }
            var outcomes: [Side: RunOutcome] = [:]
            for side in order {
                log("round \(r + 1)/\(r < rounds ? rounds : maxRounds): \(side.rawValue)")
                let o = runBench(side: side, round: r + 1, executable: paths[side] ?? binary(side))
                outcomes[side] = o
                if let f = o.failure { failures.append(f) }
            }
            record.baselineSeconds = outcomes[.baseline]?.seconds
            record.candidateSeconds = outcomes[.candidate]?.seconds
            record.baselineStatus = outcomes[.baseline]?.status
            record.candidateStatus = outcomes[.candidate]?.status
            roundRecords.append(record)
            baseResults.append(outcomes[.baseline]?.result)
            candResults.append(outcomes[.candidate]?.result)
            if !failures.isEmpty { stoppedBy = "failure"; break }
        }
        if stoppedBy == "max rounds", unsettled(base: baseResults, cand: candResults).isEmpty { stoppedBy = "settled" }
        let summary = judge(
            base: baseResults, cand: candResults, rounds: roundRecords, failures: failures, stoppedBy: stoppedBy,
            extendedFor: extendedFor, seconds: (clock.now - start).seconds, copies: copies)
        return (Self.combined(candidate: candResults, baseline: baseResults, summary: summary), summary)
    }

    var roundCopies: ABRoundCopies { ABRoundCopies(workDirectory: workDirectory, baseline: baseline, candidate: candidate) }

    func binary(_ side: Side) -> String { roundCopies.source(side) }

    /// Runs `EXECUTABLE bench ARGS --out FILE` (the side's binary or this round's copy of
    /// it), output to files beside it; errors name the side's binary as given.
    func runBench(side: Side, round: Int, executable: String) -> RunOutcome {
        let bin = binary(side)
        let stem = workDirectory.appendingPathComponent("round\(round)-\(side.rawValue)")
        let json = stem.appendingPathExtension("json")
        let outPath = stem.appendingPathExtension("stdout").path, errPath = stem.appendingPathExtension("stderr").path
        let name = "\(side.rawValue) binary \(bin)"
        let clock = ContinuousClock()
        let start = clock.now
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = ["bench"] + benchArguments + ["--out", json.path]
        guard FileManager.default.createFile(atPath: outPath, contents: nil),
            FileManager.default.createFile(atPath: errPath, contents: nil),
            let out = FileHandle(forWritingAtPath: outPath), let err = FileHandle(forWritingAtPath: errPath)
        else {
            return RunOutcome(result: nil, seconds: 0, status: nil, failure: "cannot create output files in \(workDirectory.path)")
        }
        defer { try? out.close(); try? err.close() }
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        let done = DispatchSemaphore(value: 0)
        p.terminationHandler = { _ in done.signal() }
        do {
            try p.run()
        } catch {
            return RunOutcome(result: nil, seconds: 0, status: nil, failure: "\(name): cannot be started: \(error.localizedDescription)")
        }
        var timedOut = false
        while done.wait(timeout: .now() + 0.2) == .timedOut {
            if (clock.now - start).seconds > processTimeout {
                timedOut = true
                p.terminate()
                if done.wait(timeout: .now() + 5) == .timedOut { kill(p.processIdentifier, SIGKILL); done.wait() }
                break
            }
            if interrupt.isSet { p.interrupt() }
        }
        let seconds = (clock.now - start).seconds
        let lastLine = Self.lastLine(ofFile: errPath)
        if timedOut {
            return RunOutcome(result: nil, seconds: seconds, status: nil, failure: "\(name): killed after \(Int(processTimeout)) s without finishing")
        }
        if p.terminationReason == .uncaughtSignal {
            return RunOutcome(
                result: nil, seconds: seconds, status: nil,
                failure: "\(name): crashed (signal \(p.terminationStatus))" + (lastLine.map { ": \($0)" } ?? ""))
        }
        let status = p.terminationStatus
        // bench exits 0, or 1 when a check failed (its result is still written).
        guard status == 0 || status == 1 else {
            return RunOutcome(
                result: nil, seconds: seconds, status: status,
                failure: "\(name): exited with status \(status)" + (lastLine.map { ": \($0)" } ?? ""))
        }
        guard FileManager.default.fileExists(atPath: json.path) else {
            return RunOutcome(result: nil, seconds: seconds, status: status, failure: "\(name): wrote no result to \(json.path) (exit status \(status))")
        }
        do {
            let result = try ResultsFile.load(path: json.path)
            return RunOutcome(result: result, seconds: seconds, status: status, failure: nil)
        } catch {
            let message = "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
            return RunOutcome(result: nil, seconds: seconds, status: status, failure: "\(name): wrote an unreadable result: \(message)")
        }
    }

    /// The last non-empty line of a file (at most 300 characters), for one-line errors.
    static func lastLine(ofFile path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data.suffix(8192), as: UTF8.self)
        guard let line = text.split(whereSeparator: \.isNewline).last(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else {
            return nil
        }
        let clean = String(line.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init))
        return clean.count > 300 ? String(clean.prefix(300)) + "…" : clean
    }

    /// The per-round values of every (case, metric) both sides measure, judged.
    func judge(
        base: [BenchResult?], cand: [BenchResult?], rounds: [ABSummary.Round], failures: [String], stoppedBy: String,
        extendedFor: [String]? = nil, seconds: Double, copies: ABRoundCopies
    ) -> ABSummary {
        var warnings: [String] = []
        var failures = failures
        let pairs = Self.completeRounds(base: base, cand: cand)
        if let (a, b) = pairs.first {
            if a.suite.hash != b.suite.hash { warnings.append("the two binaries ran different suites: \(a.suite.name) (\(a.suite.hash)) and \(b.suite.name) (\(b.suite.hash))") }
            if a.model.fileHash != b.model.fileHash { warnings.append("the two binaries ran different models: \(a.model.name) (\(a.model.fileHash)) and \(b.model.name) (\(b.model.fileHash))") }
            if a.settings.threads != b.settings.threads { warnings.append("threads differ: baseline \(a.settings.threads), candidate \(b.settings.threads)") }
            if a.environment.buildConfiguration != b.environment.buildConfiguration {
                warnings.append("build configurations differ: baseline \(a.environment.buildConfiguration), candidate \(b.environment.buildConfiguration)")
            }
            if let ka = a.environment.kernelSet, let kb = b.environment.kernelSet, ka != kb {
                warnings.append("kernel sets differ: baseline \(ka), candidate \(kb) (QB_KERNELS)")
            }
            if let pa = a.environment.streamPrefetch, let pb = b.environment.streamPrefetch, pa != pb {
                warnings.append("decode stream prefetch differs: baseline \(pa ? "on" : "off"), candidate \(pb ? "on" : "off") (QB_STREAM_PREFETCH)")
            }
            if let qa = a.environment.q4kDpwssd, let qb = b.environment.q4kDpwssd, qa != qb {
                warnings.append("Q4_K prefill scales differ: baseline \(qa ? "vpdpwssd" : "vpmulld"), candidate \(qb ? "vpdpwssd" : "vpmulld") (QB_Q4K_DPWSSD)")
            }
            if a.settings.minSampleSeconds != b.settings.minSampleSeconds {
                warnings.append("sample timing differs (the baseline predates minimum sample times?): baseline \(a.settings.minSampleSeconds.map { "\($0) s" } ?? "one operation"), candidate \(b.settings.minSampleSeconds.map { "\($0) s" } ?? "one operation")")
            }
        }
        var (rows, notJudged, missing) = Self.rows(pairs: pairs)
        failures += missing
        rows = RegressionGate.decide(rows, policy: policy)
        let open = rows.filter { RegressionGate.unsettled($0, policy: policy) }
        if !open.isEmpty && stoppedBy != "failure" && stoppedBy != "interrupted" {
            warnings.append("unsettled after \(rounds.count) rounds (stopped by \(stoppedBy)): "
                + open.map(Self.openRowText).joined(separator: ", ")
                + ": a change of the threshold's size can be neither shown nor ruled out on a machine this noisy; "
                + "a quieter machine, a larger --max-seconds or --max-rounds would settle it")
        }
        let tested = rows.filter { $0.p != nil }
        if let n = tested.map(\.n).min(), !tested.isEmpty, pow(0.5, Double(n)) >= policy.alpha / Double(tested.count) {
            warnings.append("\(n) paired rounds cannot show anything: the signed-rank test's smallest p (2^-\(n)) is not below "
                + "Holm's first cut (α/\(tested.count)); give more rounds or a larger --max-seconds")
        }
        // Checks: the candidate's, per (case, check), failed when any round failed it.
        var checks: [GateReport.Check] = []
        for r in cand.compactMap({ $0 }) {
            for c in r.cases {
                for k in c.checks {
                    if let i = checks.firstIndex(where: { $0.caseID == c.id && $0.name == k.name }) {
                        if !k.passed && checks[i].passed { checks[i].passed = false; checks[i].detail = k.detail }
                    } else {
                        checks.append(GateReport.Check(caseID: c.id, name: k.name, passed: k.passed, detail: k.detail))
                    }
                }
            }
        }
        let baseFailed = Set(base.compactMap { $0 }.flatMap { r in r.cases.flatMap { c in c.checks.filter { !$0.passed }.map { "\(c.id) \($0.name)" } } })
        if !baseFailed.isEmpty { warnings.append("the baseline fails checks too: " + baseFailed.sorted().joined(separator: ", ")) }
        if stoppedBy == "interrupted" { failures.append("interrupted after \(rounds.count) round\(rounds.count == 1 ? "" : "s")") }

        var notes: [String] = []
        let stop = stoppedBy == "rounds" ? "the round count" : stoppedBy == "settled" ? "every metric settled" : stoppedBy
        notes.append("\(rounds.count) round\(rounds.count == 1 ? "" : "s") in \(Int(seconds.rounded())) s (stopped by \(stop)); "
            + "each round's value is the median of one process's repetitions.")
        if let extendedFor {
            notes.append("Rounds past the planned \(self.rounds) (up to \(maxRounds)) were added while "
                + extendedFor.joined(separator: ", ") + (extendedFor.count == 1 ? " was" : " were") + " unsettled.")
        }
        let inPlace = [Side.baseline, .candidate].filter { !copies.copies($0) }
        notes.append(inPlace.isEmpty
            ? "Each round ran fresh copies of both binaries."
            : "Each round ran fresh copies of the ELF binaries; the " + inPlace.map(\.rawValue).joined(separator: " and ")
                + " ran in place (not an ELF file).")
        // A gated row's rounds, so that a CI log alone shows whether the change was in every
        // round or in some, and whether it followed the order.
        let completeOrders = zip(rounds, zip(base, cand)).compactMap { round, sides in sides.0 != nil && sides.1 != nil ? round.order : nil }
        for row in rows where row.verdict == .regression && row.newValues.count == completeOrders.count && row.baseValues.count == completeOrders.count {
            let perRound = zip(zip(row.newValues, row.baseValues), completeOrders).map { values, order in
                (values.1 > 0 ? String(format: "%.3f", values.0 / values.1) : "–") + " " + order
            }
            notes.append("\(row.label), candidate / baseline in each round (its order): " + perRound.joined(separator: ", ") + ".")
        }
        if !notJudged.isEmpty { notes.append("Not judged: " + notJudged.joined(separator: ", ") + ".") }
        if let env = cand.compactMap({ $0 }).first?.environment ?? base.compactMap({ $0 }).first?.environment {
            notes.append("Machine: \(env.cpu), \(env.logicalCores) cores\(env.kernelSet.map { ", kernel set \($0)" } ?? "").")
        }
        if let counters = cand.compactMap({ $0 }).first?.workCounters {
            notes.append(counters.available ? "Work counters (instructions, cycles) were read." : "Work counters unavailable: \(counters.reason ?? "unknown reason"); gated on times and memory only.")
        } else if cand.contains(where: { $0 != nil }) {
            notes.append("Work counters: the candidate does not record them.")
        }
        let sides = [(Side.baseline, base), (Side.candidate, cand)].map { side, results -> ABSummary.SideInfo in
            let env = results.compactMap { $0 }.first?.environment
            return ABSummary.SideInfo(binary: binary(side), commit: env?.commit, dirty: env?.dirty, buildConfiguration: env?.buildConfiguration, rounds: results.compactMap { $0 }.count)
        }
        let describe = { (s: ABSummary.SideInfo) in "`\(s.binary)`" + (s.commit.map { " (\($0 == "unknown" ? "unknown commit" : String($0.prefix(12)))\(s.dirty == true ? "-dirty" : ""))" } ?? "") }
        let method = "baseline \(describe(sides[0])), candidate \(describe(sides[1])); \(rounds.count) rounds in pairs of one AB and one BA, "
            + "which first drawn at random (seed \(orderSeed)), one fresh process per side per round; "
            + "one-sided Wilcoxon signed-rank test on per-round log-ratios (memory: byte differences), Holm over all \(rows.count) metrics at α = \(Int(policy.alpha * 100))%; "
            + policy.ruleText + "."
        let report = GateReport(
            title: "QuantBench A/B", method: method, policy: policy, rows: rows, checks: checks, failures: failures,
            warnings: warnings, notes: notes)
        return ABSummary(
            baseline: sides[0], candidate: sides[1], benchArguments: benchArguments, roundsRequested: self.rounds,
            roundsMax: maxRounds, extendedFor: extendedFor, maxSeconds: maxSeconds, stoppedBy: stoppedBy, seconds: seconds, orderSeed: orderSeed,
            rounds: rounds, report: report)
    }

    /// One row per (case, metric) both sides measure, from the complete rounds, not yet
    /// judged; with the metrics only one side measures and the cases only one side ran.
    static func rows(pairs: [(BenchResult, BenchResult)]) -> (rows: [GateRow], notJudged: [String], failures: [String]) {
        var failures: [String] = []
        var rows: [GateRow] = []
        var notJudged: [String] = []
        // Case ids in suite order, from the first complete round.
        var caseIDs: [String] = []
        for (a, b) in pairs {
            for id in a.cases.map(\.id) + b.cases.map(\.id) where !caseIDs.contains(id) { caseIDs.append(id) }
        }
        for id in caseIDs {
            let aCases = pairs.map { $0.0.cases.first { $0.id == id } }
            let bCases = pairs.map { $0.1.cases.first { $0.id == id } }
            if aCases.allSatisfy({ $0 == nil }) || bCases.allSatisfy({ $0 == nil }) {
                failures.append("case \(id): only the \(aCases.allSatisfy { $0 == nil } ? "candidate" : "baseline") ran it")
                continue
            }
            let skipped = (aCases + bCases).compactMap { $0 }.allSatisfy { $0.status == .skipped }
            if skipped { continue }
            for metric in Metric.allCases {
                let aReps = aCases.map { $0?.metrics[metric.rawValue]?.samples }
                let bReps = bCases.map { $0?.metrics[metric.rawValue]?.samples }
                let a = aReps.map { $0.flatMap(Self.roundValue) }
                let b = bReps.map { $0.flatMap(Self.roundValue) }
                let aAny = a.contains { $0 != nil }, bAny = b.contains { $0 != nil }
                if !aAny && !bAny { continue }
                if aAny != bAny {
                    // One build does not measure it at all (older or newer metrics): noted, not judged.
                    notJudged.append("\(id) \(metric.label) (only the \(aAny ? "baseline" : "candidate") measures it)")
                    continue
                }
                var row = RegressionGate.paired(caseID: id, metric: metric, base: a, new: b)
                row.baseRepetitions = aReps.map { $0 ?? [] }
                row.newRepetitions = bReps.map { $0 ?? [] }
                rows.append(row)
            }
        }
        return (rows, notJudged, failures)
    }

    /// "pp64 t/s +9.4% [95% interval to +21.6%]": an unsettled row, its estimate and the
    /// worse end of its interval.
    static func openRowText(_ r: GateRow) -> String {
        let worst = Metric(rawValue: r.metric).flatMap { RegressionGate.boundChange(r, metric: $0, worst: true) } ?? .nan
        return r.label + String(format: " %+.1f%% [95%% interval to %+.1f%%]", r.change * 100, worst * 100)
    }

    /// The rounds in which both sides produced a result.
    static func completeRounds(base: [BenchResult?], cand: [BenchResult?]) -> [(BenchResult, BenchResult)] {
        zip(base, cand).compactMap { a, b -> (BenchResult, BenchResult)? in
            guard let a, let b else { return nil }
            return (a, b)
        }
    }

    /// The judged rows still open after the rounds so far (`RegressionGate.unsettled`).
    func unsettled(base: [BenchResult?], cand: [BenchResult?]) -> [GateRow] {
        let pairs = Self.completeRounds(base: base, cand: cand)
        let rows = RegressionGate.decide(Self.rows(pairs: pairs).rows, policy: policy)
        return rows.filter { RegressionGate.unsettled($0, policy: policy) }
    }

    /// One process's figure for a metric: the median of its repetitions. A sample that is
    /// not finite poisons it (NaN), so the row fails rather than passing on fewer samples.
    static func roundValue(_ samples: [Double]) -> Double? {
        guard !samples.isEmpty else { return nil }
        if samples.contains(where: { !$0.isFinite }) { return .nan }
        return Statistics.median(samples)
    }

    /// The candidate's rounds as one normal results document (each case's samples pooled over
    /// the rounds, runs renumbered), with `ab` holding the comparison. When the candidate
    /// measured nothing, the baseline's shape (or a placeholder) with no cases.
    static func combined(candidate: [BenchResult?], baseline: [BenchResult?], summary: ABSummary) -> BenchResult {
        let cands = candidate.compactMap { $0 }
        var result: BenchResult
        if var first = cands.first {
            var cases = first.cases
            for k in cases.indices {
                var pooled: [String: [Double]] = [:]
                var runs: [RunRecord] = []
                for r in cands {
                    guard let c = r.cases.first(where: { $0.id == cases[k].id }) else { continue }
                    for (m, e) in c.metrics { pooled[m, default: []] += e.samples }
                    runs += c.runs
                }
                for i in runs.indices { runs[i].repetition = i + 1 }
                cases[k].runs = runs
                cases[k].metrics = pooled.compactMapValues { Estimate($0) }
                if cands.contains(where: { r in r.cases.first { $0.id == cases[k].id }?.status == .failed }) { cases[k].status = .failed }
            }
            first.cases = cases
            first.aggregate = BenchRunner.aggregate(cases)
            first.settings.repetitions = cases.map(\.runs.count).max() ?? first.settings.repetitions
            result = first
        } else if let b = baseline.compactMap({ $0 }).first {
            result = b
            result.cases = []
            result.aggregate = BenchRunner.aggregate([])
            result.environment = .current(threads: b.settings.threads)
        } else {
            result = placeholder()
        }
        result.createdAt = BenchRunner.timestamp(Date())
        result.ab = summary
        return result
    }

    /// A result with nothing measured (both sides failed before writing anything).
    static func placeholder() -> BenchResult {
        let memory = MemorySnapshot(peakResidentBytes: nil, residentBytes: nil, allocatedBytes: nil, heapBytes: nil, peakWasReset: false)
        return BenchResult(
            createdAt: BenchRunner.timestamp(Date()), suite: SuiteInfo(name: "unknown", path: nil, hash: "unknown", description: nil),
            environment: .current(threads: 0),
            model: ModelInfo(
                path: "unknown", name: "not measured", format: "unknown", quantization: nil, fileHash: "unknown", fileBytes: 0, files: [],
                parameters: 0, weightBytes: 0, bitsPerWeight: 0, tensorFormats: [:],
                config: .init(hiddenSize: 0, layers: 0, heads: 0, kvHeads: 0, headDim: 0, ffnSize: 0, vocabSize: 0, contextLength: 0),
                tokenizer: "unknown"),
            settings: RunSettings(repetitions: 0, warmup: 0, threads: 0, seed: 0, chatFormat: "unknown", kvType: "unknown"),
            load: LoadInfo(seconds: 0, quantizeSeconds: nil, memory: memory), cases: [], aggregate: BenchRunner.aggregate([]))
    }
}

/// What `ab` adds to a results document (`BenchResult.ab`).
public struct ABSummary: Sendable, Codable, Equatable {
    public struct SideInfo: Sendable, Codable, Equatable {
        public var binary: String
        /// The commit compiled into the binary, as its results state it.
        public var commit: String?
        public var dirty: Bool?
        public var buildConfiguration: String?
        /// Rounds it produced a result in.
        public var rounds: Int
        enum CodingKeys: String, CodingKey { case binary, commit, dirty, buildConfiguration = "build_configuration", rounds }
    }

    public struct Round: Sendable, Codable, Equatable {
        public var index: Int
        /// "AB": baseline first; "BA": candidate first.
        public var order: String
        public var baselineSeconds: Double?
        public var candidateSeconds: Double?
        public var baselineStatus: Int32?
        public var candidateStatus: Int32?
        enum CodingKeys: String, CodingKey {
            case index, order, baselineSeconds = "baseline_s", candidateSeconds = "candidate_s"
            case baselineStatus = "baseline_exit", candidateStatus = "candidate_exit"
        }
        public init(index: Int, order: String) {
            self.index = index
            self.order = order
        }
    }

    public var baseline: SideInfo
    public var candidate: SideInfo
    public var benchArguments: [String]
    public var roundsRequested: Int
    /// The most rounds the run could add while metrics were unsettled (absent in files
    /// written before rounds were added).
    public var roundsMax: Int?
    /// The metrics that were unsettled after the planned rounds, when rounds were added.
    public var extendedFor: [String]?
    public var maxSeconds: Double
    /// "rounds", "settled" (every metric settled after added rounds), "max rounds",
    /// "time budget", "failure" or "interrupted".
    public var stoppedBy: String
    public var seconds: Double
    /// The seed that drew each pair's order (absent in files written before the order was
    /// drawn: those ran AB, BA, AB, ...).
    public var orderSeed: UInt32?
    public var rounds: [Round]
    public var report: GateReport

    enum CodingKeys: String, CodingKey {
        case baseline, candidate, benchArguments = "bench_arguments", roundsRequested = "rounds_requested"
        case roundsMax = "rounds_max", extendedFor = "extended_for"
        case maxSeconds = "max_seconds", stoppedBy = "stopped_by", seconds, orderSeed = "order_seed", rounds, report
    }
}
