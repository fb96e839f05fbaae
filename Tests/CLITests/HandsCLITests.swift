import Foundation
import XCTest
import QBTestSupport

/// The binary as a new user meets it: set-up, a copied binary, llama-bench's flags,
/// progress and interruption.
final class HandsCLITests: XCTestCase {
    var binary: URL { QuantbenchCLI.binary }
    typealias Run = QuantbenchCLI.Run

    func run(_ executable: URL, _ args: [String], cwd: URL? = nil, environment: [String: String] = [:]) throws -> Run {
        try QuantbenchCLI.run(executable, args, cwd: cwd, environment: environment)
    }

    func quantbench(_ args: [String], cwd: URL? = nil, environment: [String: String] = [:]) throws -> Run {
        try QuantbenchCLI.run(binary, args, cwd: cwd, environment: environment)
    }

    var dir: URL!
    override func setUpWithError() throws { dir = try Fixtures.temporaryDirectory("hands") }
    override func tearDown() { if let dir { try? FileManager.default.removeItem(at: dir) } }

    // MARK: - set-up

    /// script/setup installs every system library Package.swift links (its apt providers).
    func testSetupScriptCoversPackageSwiftProviders() throws {
        let manifest = try String(contentsOf: Fixtures.repository.appendingPathComponent("Package.swift"), encoding: .utf8)
        var providers: Set<String> = []
        var rest = manifest[...]
        while let r = rest.range(of: ".apt([") {
            let tail = rest[r.upperBound...]
            guard let end = tail.firstIndex(of: "]") else { break }
            for part in tail[..<end].split(separator: ",") {
                providers.insert(part.trimmingCharacters(in: CharacterSet(charactersIn: "\" \n")))
            }
            rest = tail[end...]
        }
        XCTAssertFalse(providers.isEmpty)
        let listed = try run(URL(fileURLWithPath: "/bin/bash"), [Fixtures.repository.appendingPathComponent("script/setup").path, "--list"])
        XCTAssertEqual(listed.status, 0, listed.stderr)
        let packages = Set(listed.stdout.split(separator: "\n").map(String.init))
        XCTAssertTrue(providers.isSubset(of: packages), "script/setup lacks \(providers.subtracting(packages))")
        XCTAssertTrue(packages.contains("pkg-config"))
        let dry = try run(URL(fileURLWithPath: "/bin/bash"), [Fixtures.repository.appendingPathComponent("script/setup").path, "--dry-run"])
        XCTAssertEqual(dry.status, 0, dry.stderr)
    }

    // MARK: - a binary that stands alone

    /// A copy of the binary in an empty folder, run from another empty folder, finds the
    /// built-in suites and the chat smoke script.
    func testCopiedBinaryRunsBuiltInSuiteFromAnyFolder() throws {
        let bin = dir.appendingPathComponent("bin"), work = dir.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let copy = bin.appendingPathComponent("quantbench")
        try FileManager.default.copyItem(at: binary, to: copy)
        let env = ["XDG_CACHE_HOME": dir.appendingPathComponent("cache").path]
        let r = try run(
            copy, ["bench", "--suite", "smoke", "--repetitions", "1", "--warmup", "0", "--no-db", "--out", "smoke.json"],
            cwd: work, environment: env)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: work.appendingPathComponent("smoke.json").path), r.stderr)
        XCTAssertTrue(r.stdout.contains("smoke"), r.stdout)
        let chat = try run(copy, ["chat", "--smoke", "Prompts/chat-smoke.txt", "--max-tokens", "8"], cwd: work, environment: env)
        XCTAssertEqual(chat.status, 0, chat.stderr + chat.stdout)
        // `ab` hands both binaries a path: the built-in suite is written out for them
        // (this once failed with "no suite named 'smoke' (looked in no Prompts folder)").
        let ab = try run(
            copy, ["ab", "--baseline", copy.path, "--candidate", copy.path, "--model", "builtin:tiny", "--suite", "smoke",
                   "--rounds", "2", "--max-rounds", "2", "--repetitions", "1", "--warmup", "0", "--out", "ab.json"],
            cwd: work, environment: env)
        XCTAssertTrue(ab.status == 0 || ab.status == 1, "exit \(ab.status): " + ab.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: work.appendingPathComponent("ab.json").path), ab.stderr)
        XCTAssertFalse(ab.stderr.contains("no suite named"), ab.stderr)
    }

    // MARK: - llama-bench's conventions

    /// `-m a,b -t 1,2 -p 8 -n 4 -r 2 -o sql` sweeps the cross product; the SQL loads into
    /// sqlite3 (Python's module) with llama-bench's fields; `-o md` is llama-bench's table.
    func testBenchSweepsTheCrossProductAndWritesLlamaBenchSQL() throws {
        let a = dir.appendingPathComponent("a"), b = dir.appendingPathComponent("b.gguf")
        XCTAssertEqual(try quantbench(["make-model", "--preset", "tiny", "--seed", "1", "--out", a.path]).status, 0)
        let made = try quantbench(["make-model", "--preset", "tiny", "--seed", "2", "--format", "gguf", "--dtype", "q8_0", "--out", b.path])
        XCTAssertEqual(made.status, 0, made.stderr)
        let r = try quantbench(
            ["bench", "-m", "\(a.path),\(b.path)", "-t", "1,2", "-p", "8", "-n", "4", "-r", "2", "--warmup", "0", "-o", "sql",
             "--no-db", "--out", dir.appendingPathComponent("sweep.json").path], cwd: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        let sql = dir.appendingPathComponent("out.sql")
        try r.stdout.write(to: sql, atomically: true, encoding: .utf8)
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(":memory:")
            db.executescript(open(sys.argv[1]).read())
            for row in db.execute("SELECT model_filename, n_threads, n_prompt, n_gen, avg_ts, stddev_ts, type_k FROM llama_bench ORDER BY rowid"):
                print("|".join(str(v) for v in row))
            """
        let py = try run(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, sql.path])
        XCTAssertEqual(py.status, 0, py.stderr)
        let rows = py.stdout.split(separator: "\n").map { $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init) }
        XCTAssertEqual(rows.count, 8, "2 models x 2 thread counts x 2 tests: \(py.stdout)")
        XCTAssertEqual(rows.map { $0[1] }, ["1", "1", "2", "2", "1", "1", "2", "2"])
        XCTAssertEqual(rows.map { $0[2] }, ["8", "0", "8", "0", "8", "0", "8", "0"])
        XCTAssertTrue(rows.allSatisfy { (Double($0[4]) ?? 0) > 0 && $0[6] == "f16" }, py.stdout)
        XCTAssertTrue(rows[0][0].hasSuffix("/a") && rows[4][0].hasSuffix("b.gguf"), py.stdout)
        for i in 1...4 { XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("sweep-\(i).json").path)) }

        // `-n 0`, as llama-bench reads it: no generation test.
        let md = try quantbench(["bench", "-m", b.path, "--kv-type", "f16,q8_0", "-p", "8", "-n", "0", "-r", "1", "--warmup", "0",
                                 "--no-db", "--out", dir.appendingPathComponent("md.json").path])
        XCTAssertEqual(md.status, 0, md.stderr)
        let lines = md.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, 4, md.stdout)
        XCTAssertEqual(lines.first?.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) },
                       ["model", "size", "params", "backend", "threads", "type_k", "type_v", "test", "t/s"])
        XCTAssertTrue(lines[3].contains("q8_0"), md.stdout)

        let bad = try quantbench(["bench", "-p", "8", "-o", "xml"])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains("-o/--output"), bad.stderr)
        let none = try quantbench(["bench", "-p", "0", "-n", "0"])
        XCTAssertNotEqual(none.status, 0)
        XCTAssertTrue(none.stderr.contains("--pp and --tg name no test"), none.stderr)
    }

    /// `generate -m M -p TEXT -n N -s SEED --temp T -t 1` as llama.cpp spells them, and its
    /// JSON uses bench's key names.
    func testGenerateShortFlagsAndBenchKeyNames() throws {
        let r = try quantbench(["generate", "-p", "The", "-n", "4", "-s", "7", "--temp", "0.8", "-t", "1", "--json"])
        XCTAssertEqual(r.status, 0, r.stderr)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let timings = try XCTUnwrap(doc["timings"] as? [String: Any])
        for key in ["prefill_s", "decode_s", "decode_tokens_per_s", "token_timestamps_s"] { XCTAssertNotNil(timings[key], key) }
        XCTAssertNil(timings["decode_tokens_per_second"])
        XCTAssertEqual(doc["generated_tokens"] as? Int, 4)
        XCTAssertEqual(doc["threads"] as? Int, 1)
    }

    // MARK: - progress and interruption

    /// SIGINT or SIGTERM at seeded random moments of `make-model` (a 0.5B preset to GGUF
    /// and to a Hugging Face folder): exit status 130 and nothing left in the folder, no
    /// partial file, no hidden temporary folder.
    func testInterruptedMakeModelLeavesNothingAndExits130() throws {
        var rng = SeededGenerator(for: "HandsCLITests.testInterruptedMakeModelLeavesNothingAndExits130")
        let plans: [(format: String, out: String, signal: Int32)] = [
            ("gguf", "m.gguf", SIGINT), ("gguf", "m.gguf", SIGTERM), ("safetensors", "hf", SIGINT),
        ]
        for plan in plans {
            let work = dir.appendingPathComponent("run-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            let delay = Double.random(in: 0.3...12, using: &rng)
            print("signal \(plan.signal) after \(String(format: "%.2f", delay)) s of make-model --format \(plan.format)")
            let args = ["make-model", "--preset", "qwen2.5-0.5b", "--format", plan.format, "--dtype", plan.format == "gguf" ? "q4_0" : "f16",
                        "--out", work.appendingPathComponent(plan.out).path]
            let (p, finishedFirst, hung, stderr) = try signalled(args, in: work, signal: plan.signal, after: delay)
            XCTAssertFalse(hung, "make-model still running 30 s after the signal\n\(stderr)")
            if finishedFirst { continue }  // too late to interrupt; nothing to check
            XCTAssertEqual(p.terminationReason, .exit, stderr)
            XCTAssertEqual(p.terminationStatus, 130, stderr)
            let left = try FileManager.default.contentsOfDirectory(atPath: work.path)
            XCTAssertEqual(left, [], "left behind after \(delay) s: \(left)\n\(stderr)")
            XCTAssertTrue(stderr.contains("interrupted"), stderr)
        }
    }

    /// Runs quantbench `args` in `folder` and sends `signal` after `delay` seconds. A process
    /// that ignores it would hang the suite: after 30 s more it is killed (`hung`).
    func signalled(_ args: [String], in folder: URL, signal: Int32, after delay: Double) throws
        -> (process: Process, finishedFirst: Bool, hung: Bool, stderr: String) {
        let p = Process()
        p.executableURL = binary
        p.arguments = args
        p.currentDirectoryURL = folder
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let box = DataBox(), group = DispatchGroup()
        DispatchQueue.global().async(group: group) { box.data = err.fileHandleForReading.readDataToEndOfFile() }
        Thread.sleep(forTimeInterval: delay)
        let finishedFirst = !p.isRunning
        kill(p.processIdentifier, signal)
        let deadline = Date().addingTimeInterval(30)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        let hung = p.isRunning
        if hung { kill(p.processIdentifier, SIGKILL) }
        p.waitUntilExit()
        group.wait()
        return (p, finishedFirst, hung, String(decoding: box.data, as: UTF8.self))
    }

    /// Every other writer interrupted at a seeded random moment: quantize to GGUF and to an
    /// MLX folder, bench --out and eval --out on a 125M model. Whatever the moment, the work
    /// folder afterwards holds exactly its inputs (no output, no partial or hidden file), and
    /// the process ends with status 130 (or, signalled before its handlers were installed,
    /// by the signal itself); a run that finished before the signal must have written its
    /// whole output.
    func testInterruptedWritersLeaveOnlyTheirInputs() throws {
        var rng = SeededGenerator(for: "HandsCLITests.testInterruptedWritersLeaveOnlyTheirInputs")
        let source = dir.appendingPathComponent("src")
        let made = try quantbench(["make-model", "--preset", "ci-125m", "--dtype", "f16", "--out", source.path])
        XCTAssertEqual(made.status, 0, made.stderr)
        let text = dir.appendingPathComponent("text.txt")
        try String(repeating: "Once upon a time a small robot counted the stars above the quiet town. ", count: 200)
            .write(to: text, atomically: true, encoding: .utf8)
        let inputs = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
        // (what, arguments, the output it makes when it finishes, signal, latest moment)
        let plans: [(String, [String], String, Int32, Double)] = [
            ("quantize to GGUF", ["quantize", "-m", source.path, "--quant", "q4_0", "--out", "q.gguf"], "q.gguf", SIGINT, 1),
            ("quantize to MLX", ["quantize", "-m", source.path, "--quant", "mlx-q4-g64", "--out", "mlx"], "mlx", SIGTERM, 1),
            ("bench --out", ["bench", "-m", source.path, "--pp", "64", "--tg", "16", "-r", "2", "--no-db", "--out", "b.json"], "b.json", SIGINT, 2.5),
            ("eval --out", ["eval", "-m", source.path, "--quants", "f32,q8_0", "--text", text.path, "--ctx", "128", "--max-tokens", "1024",
                            "--repetitions", "1", "--no-db", "--out", "e.json"], "e.json", SIGTERM, 4),
        ]
        for (what, args, output, sig, latest) in plans {
            let delay = Double.random(in: 0.05...latest, using: &rng)
            print("signal \(sig) after \(String(format: "%.2f", delay)) s of \(what)")
            let (p, finishedFirst, hung, stderr) = try signalled(args, in: dir, signal: sig, after: delay)
            XCTAssertFalse(hung, "\(what): still running 30 s after signal \(sig)\n\(stderr)")
            let left = Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)).subtracting(inputs)
            print("  \(what): \(finishedFirst ? "finished before the signal" : "ended \(p.terminationReason == .exit ? "with status" : "by signal") \(p.terminationStatus)"); new entries: \(left.sorted())")
            // A signal that lands after the output was renamed into place, as the process
            // returns, finds nothing left to stop: exit 0 with the whole output is that case.
            let completed = p.terminationReason == .exit && p.terminationStatus == 0
            if finishedFirst || completed {
                XCTAssertEqual(p.terminationStatus, 0, "\(what) finished before the signal: \(stderr)")
                XCTAssertTrue(left.contains(output), "\(what) finished without \(output): \(left)")
                for name in left { try FileManager.default.removeItem(at: dir.appendingPathComponent(name)) }
                continue
            }
            let byExit = p.terminationReason == .exit && p.terminationStatus == 130
            let bySignal = p.terminationReason == .uncaughtSignal && p.terminationStatus == sig
            XCTAssertTrue(byExit || bySignal, "\(what) after \(delay) s: ended \(p.terminationReason == .exit ? "exit" : "signal") \(p.terminationStatus)\n\(stderr)")
            XCTAssertEqual(left, [], "\(what): left behind after \(delay) s: \(left.sorted())\n\(stderr)")
            for name in left { try? FileManager.default.removeItem(at: dir.appendingPathComponent(name)) }
        }
    }

    /// Not on a terminal, long work prints plain progress lines with its size.
    func testMakeModelPrintsProgressLines() throws {
        let r = try quantbench(["make-model", "--preset", "qwen2.5-0.5b", "--format", "gguf", "--dtype", "q4_0",
                                "--out", dir.appendingPathComponent("p.gguf").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("writing model.safetensors ("), r.stderr)
        XCTAssertTrue(r.stderr.contains("writing p.gguf ("), r.stderr)
        XCTAssertTrue(r.stderr.contains("%), "), "a periodic line with a share done: \(r.stderr)")
        XCTAssertFalse(r.stderr.contains(".tmp-"), r.stderr)
    }

    // MARK: - eval compares files

    /// `eval --models a.gguf,b/ --reference ref.gguf`: files quantized elsewhere in one
    /// table against one reference, with llama-perplexity's KL statistics.
    func testEvalComparesFilesAgainstAReference() throws {
        let hf = dir.appendingPathComponent("hf"), ref = dir.appendingPathComponent("ref.gguf")
        let q8 = dir.appendingPathComponent("q8.gguf"), mlx = dir.appendingPathComponent("mlx4")
        XCTAssertEqual(try quantbench(["make-model", "--preset", "tiny", "--seed", "9", "--out", hf.path]).status, 0)
        for (q, out) in [("f32", ref), ("q8_0", q8), ("mlx-q4-g64", mlx)] {
            let r = try quantbench(["quantize", "-m", hf.path, "--quant", q, "--out", out.path])
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        let text = dir.appendingPathComponent("text.txt")
        try String(repeating: "Once upon a time there was a little robot who liked to count numbers 1 2 3. ", count: 30)
            .write(to: text, atomically: true, encoding: .utf8)
        let json = dir.appendingPathComponent("eval.json")
        let r = try quantbench(["eval", "--models", "\(q8.path),\(mlx.path)", "--reference", ref.path, "--text", text.path,
                                "--ctx", "64", "--repetitions", "1", "--no-db", "--out", json.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.contains("| setting | PPL ratio | mean KL | median KL |"), r.stdout)
        let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        XCTAssertEqual(doc["reference"] as? String, "ref.gguf")
        let settings = try XCTUnwrap(doc["settings"] as? [[String: Any]])
        XCTAssertEqual(settings.map { $0["name"] as? String }, ["ref.gguf", "q8.gguf", "mlx4"])
        for s in settings.dropFirst() {
            let v = try XCTUnwrap(s["vs_reference"] as? [String: Any], "\(s)")
            let kl = try XCTUnwrap(v["kl_divergence"] as? [String: Any])
            for key in ["mean", "se", "median", "p99", "p99.9", "max"] { XCTAssertNotNil(kl[key] as? Double, key) }
            for key in ["rms_delta_p", "rms_delta_p_se", "same_top_p", "same_top_p_se", "ppl_ratio", "ppl_ratio_se"] {
                XCTAssertNotNil(v[key] as? Double, key)
            }
            XCTAssertGreaterThan(kl["mean"] as? Double ?? 0, 0)
            XCTAssertNotNil(s["source"] as? String)
        }
        let svg = try String(contentsOf: dir.appendingPathComponent("eval.svg"), encoding: .utf8)
        XCTAssertTrue(svg.contains("bits per weight"), "the chart's x axis")
        // The files scored on llama-perplexity's windows (the merge of the two eval
        // reworks): 2 chunks of 64, each scoring positions 32..62.
        let lpJSON = dir.appendingPathComponent("eval-lp.json")
        let lp = try quantbench(["eval", "--models", q8.path, "--reference", ref.path, "--text", text.path, "--windows", "llama-perplexity",
                                 "--chunks", "2", "--ctx", "64", "--repetitions", "1", "--no-db", "--out", lpJSON.path])
        XCTAssertEqual(lp.status, 0, lp.stderr)
        let lpDoc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: lpJSON)) as? [String: Any])
        let window = try XCTUnwrap(lpDoc["window"] as? [String: Any])
        XCTAssertEqual(window["mode"] as? String, "llama-perplexity")
        XCTAssertEqual(window["predicted_tokens"] as? Int, 2 * (64 / 2 - 1))
        let lpSettings = try XCTUnwrap(lpDoc["settings"] as? [[String: Any]])
        XCTAssertEqual(lpSettings.map { $0["name"] as? String }, ["ref.gguf", "q8.gguf"])
        XCTAssertNotNil(lpSettings.last?["vs_reference"] as? [String: Any])
        XCTAssertTrue(lp.stdout.contains("PPL = "), "llama-perplexity's final line per entry")
        // --kl-base compares one model with llama.cpp's logits; the file comparison's options
        // are refused rather than ignored.
        let mixed = try quantbench(["eval", "--kl-base", ref.path, "--models", q8.path, "--no-db"])
        XCTAssertNotEqual(mixed.status, 0)
        XCTAssertTrue(mixed.stderr.contains("--kl-base"), mixed.stderr)
        // A file with another vocabulary (stories260K's 512 ids) is refused, naming it.
        guard let other = try? Fixtures.path("stories260k/stories260K.bin") else { return }
        let bad = try quantbench(["eval", "--models", other, "--reference", ref.path, "--text", text.path, "--no-db",
                                  "--out", dir.appendingPathComponent("bad.json").path])
        XCTAssertNotEqual(bad.status, 0)
        XCTAssertTrue(bad.stderr.contains(other), bad.stderr)
    }

    // MARK: - compare reads two eval results

    /// Two real `eval` runs of one model and text: `compare` puts each setting's figures
    /// side by side with their errors, flags a difference beyond them, and refuses files of
    /// another kind or another text. Before: `compare` took only bench results ("not a
    /// quantbench bench result"), exit 2 for any eval file.
    func testCompareReadsTwoEvalResults() throws {
        let hf = dir.appendingPathComponent("hf")
        XCTAssertEqual(try quantbench(["make-model", "--preset", "tiny", "--seed", "5", "--out", hf.path]).status, 0)
        let text = dir.appendingPathComponent("text.txt"), other = dir.appendingPathComponent("other.txt")
        try String(repeating: "Once upon a time there was a little robot who liked to count numbers 1 2 3. ", count: 30)
            .write(to: text, atomically: true, encoding: .utf8)
        try String(repeating: "A different story about a cat that sat on a mat and slept all day long. ", count: 30)
            .write(to: other, atomically: true, encoding: .utf8)
        func eval(_ text: URL, _ out: String) throws -> URL {
            let json = dir.appendingPathComponent(out)
            let r = try quantbench(["eval", "-m", hf.path, "--quants", "f32,q8_0,q4_0", "--text", text.path, "--ctx", "64",
                                    "--repetitions", "1", "--no-db", "--out", json.path])
            XCTAssertEqual(r.status, 0, r.stderr)
            return json
        }
        let a = try eval(text, "a.json"), b = try eval(text, "b.json")

        // The same measurement twice: every quality figure the same, exit 0.
        let same = try quantbench(["compare", a.path, b.path])
        XCTAssertEqual(same.status, 0, same.stderr + same.stdout)
        for row in ["| q8_0 | perplexity |", "| q8_0 | mean KL (nats) |", "| q4_0 | same top p |", "| q4_0 | RMS Δp |", "| f32 | perplexity |"] {
            XCTAssertTrue(same.stdout.contains(row), "\(row) in \(same.stdout)")
        }
        XCTAssertTrue(same.stdout.contains(" ± "), "uncertainties shown")
        XCTAssertFalse(same.stdout.contains("WORSE"), same.stdout)
        XCTAssertTrue(same.stdout.contains("No quality figure is worse beyond its uncertainty."), same.stdout)

        // q4_0's mean KL raised far past its error: flagged, exit 1 (0 with --report-only).
        var doc = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: b)) as? [String: Any])
        var settings = try XCTUnwrap(doc["settings"] as? [[String: Any]])
        let q4 = try XCTUnwrap(settings.firstIndex { $0["name"] as? String == "q4_0" })
        var vs = try XCTUnwrap(settings[q4]["vs_reference"] as? [String: Any])
        var kl = try XCTUnwrap(vs["kl_divergence"] as? [String: Any])
        let mean = try XCTUnwrap(kl["mean"] as? Double), se = try XCTUnwrap(kl["se"] as? Double)
        XCTAssertGreaterThan(se, 0, "eval records the KL's error")
        kl["mean"] = mean + 10 * se
        vs["kl_divergence"] = kl
        settings[q4]["vs_reference"] = vs
        doc["settings"] = settings
        let worse = dir.appendingPathComponent("worse.json")
        try JSONSerialization.data(withJSONObject: doc).write(to: worse)
        let flagged = try quantbench(["compare", a.path, worse.path])
        XCTAssertEqual(flagged.status, 1, flagged.stderr)
        let klRow = try XCTUnwrap(flagged.stdout.split(separator: "\n").first { $0.hasPrefix("| q4_0 | mean KL (nats) |") })
        XCTAssertTrue(klRow.contains("**WORSE**"), String(klRow))
        let untouched = try XCTUnwrap(flagged.stdout.split(separator: "\n").first { $0.hasPrefix("| q8_0 | mean KL (nats) |") })
        XCTAssertTrue(untouched.hasSuffix("| same |"), "only the changed figure is flagged: \(untouched)")
        // Speeds of one repetition have no interval: shown, never judged.
        let decode = try XCTUnwrap(flagged.stdout.split(separator: "\n").first { $0.hasPrefix("| q8_0 | decode t/s |") })
        XCTAssertTrue(decode.hasSuffix("| – |"), String(decode))
        XCTAssertEqual(try quantbench(["compare", "--report-only", a.path, worse.path]).status, 0)

        // A NaN never passes: exit 2 naming the setting and figure.
        settings[q4]["mean_nll"] = "nan"
        doc["settings"] = settings
        let nan = dir.appendingPathComponent("nan.json")
        try JSONSerialization.data(withJSONObject: doc).write(to: nan)
        let invalid = try quantbench(["compare", "--report-only", a.path, nan.path])
        XCTAssertEqual(invalid.status, 2, invalid.stdout)
        XCTAssertTrue(invalid.stderr.contains("q4_0 perplexity"), invalid.stderr)

        // Another text: refused naming the field. A bench result beside an eval result: refused.
        let c = try eval(other, "c.json")
        let text2 = try quantbench(["compare", a.path, c.path])
        XCTAssertEqual(text2.status, 2)
        XCTAssertTrue(text2.stderr.contains(c.path) && text2.stderr.contains("text.hash"), text2.stderr)
        XCTAssertEqual(text2.stderr.split(separator: "\n").count, 1, text2.stderr)
        let bench = dir.appendingPathComponent("bench.json")
        try Data(#"{"schema": "quantbench.bench", "schema_version": 1}"#.utf8).write(to: bench)
        for (x, y) in [(a, bench), (bench, a)] {
            let kinds = try quantbench(["compare", x.path, y.path])
            XCTAssertEqual(kinds.status, 2)
            XCTAssertTrue(kinds.stderr.contains("'quantbench.eval'") && kinds.stderr.contains("'quantbench.bench'"), kinds.stderr)
        }
    }
}
