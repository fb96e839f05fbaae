import Foundation
import XCTest
import QBFormats
import QBTestSupport

/// #22's cases through the real binary: outputs never destroy inputs, NaN and "nothing to
/// sample" never pass as success, running out of memory is one line, errors read like the
/// rest. Each test failed on the code before the fix (noted per test).
final class NothingLostCLITests: XCTestCase {
    var binary: URL { TestProcess.product("quantbench") }

    struct Run {
        let status: Int32
        let reason: Process.TerminationReason
        let stdout: Data
        let stderr: String
        let seconds: Double
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs the binary (through `bash -c` with `limits`, e.g. "ulimit -v 300000", when given)
    /// in `cwd`, killing it after `timeout` seconds.
    func quantbench(_ args: [String], cwd: URL? = nil, limits: String? = nil, stdin: String? = nil, timeout: Double = 120) throws -> Run {
        let p = Process()
        if let limits {
            p.executableURL = URL(fileURLWithPath: "/bin/bash")  // ulimit -f counts KiB in bash, 512 bytes in dash
            p.arguments = ["-c", "\(limits); exec \"$0\" \"$@\"", binary.path] + args
        } else {
            p.executableURL = binary
            p.arguments = args
        }
        p.currentDirectoryURL = cwd ?? dir
        let out = Pipe(), err = Pipe(), input = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = input
        let start = Date()
        try p.run()
        if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
        try? input.fileHandleForWriting.close()
        let killer = DispatchWorkItem { if p.isRunning { kill(p.processIdentifier, SIGKILL) } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        // Both pipes drained at once: a long error must not block the child on a full pipe.
        let errorText = ErrorBox()
        let reader = Thread { errorText.data = err.fileHandleForReading.readDataToEndOfFile() }
        reader.start()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        while !errorText.done { usleep(1000) }
        let e = errorText.data
        killer.cancel()
        return Run(status: p.terminationStatus, reason: p.terminationReason, stdout: o,
                   stderr: String(decoding: e, as: UTF8.self), seconds: Date().timeIntervalSince(start))
    }

    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-nolost-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func makeTiny(_ name: String = "m") throws -> URL {
        let out = dir.appendingPathComponent(name)
        let r = try quantbench(["make-model", "--preset", "tiny", "--out", out.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        return out
    }

    func contents(_ url: URL) -> [String: Data] {
        var all: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] {
            all[name] = FileManager.default.contents(atPath: url.appendingPathComponent(name).path)
        }
        return all
    }

    /// One clear line naming `what`, exit status non-zero, no signal, no Foundation text.
    func assertOneLineError(_ r: Run, naming what: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.reason, .exit, "exited, not killed: \(r.stderr)", file: file, line: line)
        XCTAssertNotEqual(r.status, 0, r.stderr, file: file, line: line)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "one line: \(r.stderr)", file: file, line: line)
        XCTAssertTrue(r.stderr.contains(what), "names \(what): \(r.stderr)", file: file, line: line)
        XCTAssertFalse(r.stderr.contains("NSCocoaErrorDomain") || r.stderr.contains("Error Domain="), r.stderr, file: file, line: line)
    }

    // Before: replaced the weights, deleted tokenizer.json, exit 1 with NSCocoaErrorDomain 260.
    func testQuantizeIntoItsOwnModelFolderIsRefusedAndTheModelKept() throws {
        let m = try makeTiny()
        let before = contents(m)
        let r = try quantbench(["quantize", "--model", m.path, "--quant", "mlx-q4-g64", "--out", m.path])
        assertOneLineError(r, naming: "--out")
        XCTAssertEqual(contents(m), before, "the model folder is untouched")
        // Through a symlink, and a folder inside the model.
        let link = dir.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: m)
        for out in [link.path, link.appendingPathComponent("sub").path] {
            let r2 = try quantbench(["quantize", "--model", m.path, "--quant", "mlx-q4-g64", "--out", out])
            assertOneLineError(r2, naming: "--out")
        }
        XCTAssertEqual(contents(m), before)
    }

    // Before: overwrote the source GGUF silently, exit 0 (and the hard link likewise).
    func testQuantizeOverItsSourceFileOrAHardLinkOfItIsRefused() throws {
        let m = try makeTiny()
        let q = dir.appendingPathComponent("q.gguf")
        XCTAssertEqual(try quantbench(["quantize", "--model", m.path, "--quant", "q8_0", "--out", q.path]).status, 0)
        let original = try Data(contentsOf: q)
        let hard = dir.appendingPathComponent("hard.gguf")
        XCTAssertEqual(link(q.path, hard.path), 0)
        for out in [q.path, hard.path, "./q.gguf"] {
            let r = try quantbench(["quantize", "--model", q.path, "--quant", "q4_0", "--out", out])
            assertOneLineError(r, naming: "is the input")
            XCTAssertEqual(try Data(contentsOf: q), original, out)
        }
        // A different output still works and leaves no temporary files.
        let other = dir.appendingPathComponent("out/q4.gguf")
        XCTAssertEqual(try quantbench(["quantize", "--model", q.path, "--quant", "q4_0", "--out", other.path]).status, 0)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: other.deletingLastPathComponent().path), ["q4.gguf"])
    }

    // Before: ran the whole suite, then failed with NSCocoaErrorDomain 516; results lost.
    func testBenchUnwritableOutputFailsBeforeTheSuiteRuns() throws {
        let m = try makeTiny()
        let afile = dir.appendingPathComponent("afile")
        try Data("x".utf8).write(to: afile)
        let suite = Fixtures.prompts.appendingPathComponent("smoke.yaml").path
        let r = try quantbench(["bench", "--model", m.path, "--suite", suite, "--out", afile.appendingPathComponent("x.json").path])
        assertOneLineError(r, naming: "afile")
        XCTAssertLessThan(r.seconds, 5, "refused before loading and running")
        // An input as the output.
        let r2 = try quantbench(["bench", "--model", m.path, "--suite", suite, "--out", m.appendingPathComponent("config.json").path])
        assertOneLineError(r2, naming: "--out")
    }

    // Before: four runs in the same second left one result file.
    func testBenchRunsStartedTogetherLeaveOneFileEach() throws {
        let m = try makeTiny()
        let suite = Fixtures.prompts.appendingPathComponent("smoke.yaml").path
        // Started together (no pipes to drain: output goes to files).
        var processes: [Process] = []
        for i in 0..<4 {
            let p = Process()
            p.executableURL = binary
            p.arguments = ["bench", "--model", m.path, "--suite", suite, "--threads", "1", "--repetitions", "1", "--warmup", "0"]
            p.currentDirectoryURL = dir
            p.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
            XCTAssertTrue(FileManager.default.createFile(atPath: dir.appendingPathComponent("err\(i)").path, contents: nil))
            p.standardError = FileHandle(forWritingAtPath: dir.appendingPathComponent("err\(i)").path)
            processes.append(p)
        }
        for p in processes { try p.run() }
        for p in processes { p.waitUntilExit() }
        XCTAssertEqual(processes.map(\.terminationStatus), [0, 0, 0, 0])
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("results").path)
        XCTAssertEqual(files.filter { $0.hasSuffix(".json") }.count, 4, "\(files)")
        XCTAssertEqual(files.filter { $0.hasSuffix(".md") }.count, 4, "\(files)")
    }

    // Before: on a full disk the .md was replaced and the .json was not (a mismatched pair).
    func testAFullDiskLeavesThePreviousResultsPair() throws {
        let m = try makeTiny()
        let suite = Fixtures.prompts.appendingPathComponent("smoke.yaml").path
        let out = dir.appendingPathComponent("r.json"), md = dir.appendingPathComponent("r.md")
        let args = ["bench", "--model", m.path, "--suite", suite, "--out", out.path, "--repetitions", "1", "--warmup", "0", "--threads", "1"]
        XCTAssertEqual(try quantbench(args).status, 0)
        let (json0, md0) = (try Data(contentsOf: out), try Data(contentsOf: md))
        XCTAssertGreaterThan(json0.count, md0.count + 2048, "the JSON is the larger file")
        // A file-size limit between the two sizes: the summary fits, the JSON does not.
        let blocks = md0.count / 1024 + 2
        let r = try quantbench(args, limits: "ulimit -f \(blocks)")
        XCTAssertEqual(r.reason, .exit, r.stderr)
        XCTAssertNotEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try Data(contentsOf: out), json0)
        XCTAssertEqual(try Data(contentsOf: md), md0, "the summary still matches the JSON")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }, [], "no temporary files")
    }

    // Before: `compare a.json b.json --junit a.json` replaced the baseline with JUnit XML
    // (exit 0), and `--summary b.json` the new results with Markdown.
    func testCompareNeverWritesOverItsResults() throws {
        let m = try makeTiny()
        let suite = Fixtures.prompts.appendingPathComponent("smoke.yaml").path
        let a = dir.appendingPathComponent("a.json"), b = dir.appendingPathComponent("b.json")
        let bench = try quantbench(["bench", "--model", m.path, "--suite", suite, "--out", a.path, "--repetitions", "1", "--warmup", "0", "--threads", "1"])
        XCTAssertEqual(bench.status, 0, bench.stderr)
        try FileManager.default.copyItem(at: a, to: b)
        let original = try Data(contentsOf: a)
        for (flag, target) in [("--junit", a), ("--summary", b), ("--junit", b), ("--summary", a)] {
            let r = try quantbench(["compare", a.path, b.path, flag, target.path])
            assertOneLineError(r, naming: flag)
            XCTAssertEqual(r.status, 2, "a bad output is not a regression (1): \(r.stderr)")
            XCTAssertTrue(r.stdout.isEmpty, "refused before comparing")
            XCTAssertEqual(try Data(contentsOf: target), original, "\(flag) \(target.lastPathComponent) kept")
        }
        // Under a file: refused before comparing, not after.
        let afile = dir.appendingPathComponent("afile")
        try Data("x".utf8).write(to: afile)
        let r = try quantbench(["compare", a.path, b.path, "--junit", afile.appendingPathComponent("j.xml").path])
        assertOneLineError(r, naming: "afile")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stdout.isEmpty, "refused before comparing")
    }

    // Before: `ab --junit OLD` replaced the baseline binary with JUnit XML after all the
    // rounds, and `--out afile/x.json` failed only after all the rounds.
    func testABOutputsAreCheckedBeforeTheRounds() throws {
        let m = try makeTiny()
        let old = dir.appendingPathComponent("old-quantbench")
        try FileManager.default.copyItem(at: binary, to: old)
        let original = try Data(contentsOf: old)
        let afile = dir.appendingPathComponent("afile")
        try Data("x".utf8).write(to: afile)
        let common = ["ab", "--baseline", old.path, "--candidate", binary.path, "--model", m.path, "--pp", "8", "--tg", "4",
                      "--rounds", "2", "--repetitions", "1", "--warmup", "0"]
        for (flag, target, names) in [
            ("--junit", old.path, "--junit"), ("--summary", m.appendingPathComponent("config.json").path, "--summary"),
            ("--out", afile.appendingPathComponent("x.json").path, "afile"),
        ] {
            let r = try quantbench(common + [flag, target])
            assertOneLineError(r, naming: names)
            XCTAssertEqual(r.status, 2, r.stderr)
            XCTAssertLessThan(r.seconds, 10, "refused before the first round")
        }
        XCTAssertEqual(try Data(contentsOf: old), original, "the baseline binary is kept")
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: old.path))
    }

    // Before: wrote NUL bytes (token 0), exit 0.
    func testEveryTokenBannedIsAnError() throws {
        let m = try makeTiny()
        let bans = (0..<1024).flatMap { ["--logit-bias", "\($0)=-inf"] }
        let r = try quantbench(["generate", "--model", m.path, "--prompt", "hi", "--max-tokens", "4"] + bans)
        assertOneLineError(r, naming: "logit-bias")
        XCTAssertFalse(r.stdout.contains(0), "no NUL bytes written")
    }

    /// The tiny model with layer 1's down projection all NaN.
    func makeNaNModel() throws -> URL {
        let m = try makeTiny("nan")
        let file = m.appendingPathComponent("model.safetensors")
        var data = try Data(contentsOf: file)
        let n = data.prefix(8).withUnsafeBytes { Int($0.loadUnaligned(as: UInt64.self)) }
        let header = try XCTUnwrap(JSONSerialization.jsonObject(with: data.subdata(in: 8..<(8 + n))) as? [String: Any])
        let entry = try XCTUnwrap(header["model.layers.1.mlp.down_proj.weight"] as? [String: Any])
        let offsets = try XCTUnwrap(entry["data_offsets"] as? [Int])
        let nan = withUnsafeBytes(of: Float.nan.bitPattern.littleEndian) { Data($0) }
        for at in stride(from: 8 + n + offsets[0], to: 8 + n + offsets[1], by: 4) { data.replaceSubrange(at..<(at + 4), with: nan) }
        try data.write(to: file)
        return m
    }

    // Before: generated blanks, exit 0.
    func testNaNWeightsStopGenerationNamingTheLayer() throws {
        let m = try makeNaNModel()
        let r = try quantbench(["generate", "--model", m.path, "--prompt", "hello", "--max-tokens", "4"])
        XCTAssertEqual(r.reason, .exit)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("layer 1"), r.stderr)
        XCTAssertTrue(r.stderr.contains("NaN"), r.stderr)
    }

    // Before: ran until killed (the chart's axis loop never ended on NaN), ignoring SIGTERM.
    func testEvalOfANaNModelEndsWithAnError() throws {
        let m = try makeNaNModel()
        let text = dir.appendingPathComponent("text.txt")
        try Data(String(repeating: "the quick brown fox jumps over the lazy dog ", count: 40).utf8).write(to: text)
        let r = try quantbench(
            ["eval", "--model", m.path, "--quants", "f32,q8_0", "--text", text.path, "--ctx", "64", "--out", dir.appendingPathComponent("e.json").path],
            timeout: 60)
        XCTAssertEqual(r.reason, .exit, "ended by itself")
        XCTAssertNotEqual(r.status, 0)
        XCTAssertLessThan(r.seconds, 60)
        XCTAssertTrue(r.stderr.contains("NaN"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.appendingPathComponent("e.json").path), "no result claims a score")
    }

    // Before: "Fatal error: failed to allocate ..." and a backtrace, SIGABRT.
    func testOutOfMemoryIsOneLineAndAnExitStatus() throws {
        // The tiny model declaring a 4M-position context: its KV cache at full length is 2 GiB.
        let m = try makeTiny()
        let config = m.appendingPathComponent("config.json")
        let text = try String(contentsOf: config, encoding: .utf8)
            .replacingOccurrences(of: #""max_position_embeddings" : 2048"#, with: #""max_position_embeddings" : 4194304"#)
        try Data(text.utf8).write(to: config)
        let r = try quantbench(["generate", "--model", m.path, "--prompt", "hi", "--max-tokens", "2", "--ctx", "4194304"],
                               limits: "ulimit -v 1000000", timeout: 30)
        XCTAssertEqual(r.reason, .exit, "not killed by a signal: \(r.stderr)")
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("out of memory"), r.stderr)
        XCTAssertTrue(r.stderr.contains("KV cache"), "names what was being allocated: \(r.stderr)")
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertFalse(r.stderr.contains("Backtrac") || r.stderr.contains("Thread 0"), r.stderr)
    }

    // Before: 26 s (release build) for 2,000 turns, quadratic.
    func testResumingALongHistoryIsFast() throws {
        let m = try makeTiny()
        var lines = ""
        for i in 0..<2000 {
            lines += #"{"role":"user","content":"question number \#(i) about foxes"}"# + "\n"
            lines += #"{"role":"assistant","content":"answer number \#(i) about dogs"}"# + "\n"
        }
        let history = dir.appendingPathComponent("h.jsonl")
        try Data(lines.utf8).write(to: history)
        let r = try quantbench(["chat", "--model", m.path, "--resume", history.path, "--max-tokens", "4"], stdin: "hello\n", timeout: 60)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.text.contains("dropped the oldest"), r.text)
        XCTAssertLessThan(r.seconds, 6, "linear in the history (under 3 s in a release build)")
    }

    // Before: loaded, then failed as "the prompt is empty".
    func testAnEmptyVocabularyIsRefusedAtLoad() throws {
        let m = try makeTiny()
        let file = m.appendingPathComponent("tokenizer.json")
        var json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        var model = try XCTUnwrap(json["model"] as? [String: Any])
        model["vocab"] = [String: Int]()
        model["merges"] = [String]()
        json["model"] = model
        json["added_tokens"] = [Any]()
        json["post_processor"] = NSNull()
        try JSONSerialization.data(withJSONObject: json).write(to: file)
        let r = try quantbench(["generate", "--model", m.path, "--prompt", "hi", "--max-tokens", "2"])
        assertOneLineError(r, naming: "tokenizer.json")
        XCTAssertTrue(r.stderr.contains("vocabulary is empty"), r.stderr)
    }

    // Before: the 100 KB value was echoed whole.
    func testLongInvalidValuesAreCutInErrors() throws {
        let m = try makeTiny()
        let huge = String(repeating: "x", count: 100_000)
        let r = try quantbench(["quantize", "--model", m.path, "--quant", huge, "--out", dir.appendingPathComponent("o.gguf").path])
        assertOneLineError(r, naming: "--quant")
        XCTAssertLessThan(r.stderr.utf8.count, 1_000, "cut to a readable length")
    }

    // Before: `history --svg` over the database replaced it.
    func testChartOverItsDatabaseIsRefused() throws {
        let db = dir.appendingPathComponent("h.sqlite")
        try Data("not touched".utf8).write(to: db)
        let r = try quantbench(["history", "--db", db.path, "--svg", db.path])
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.stderr.contains("--svg"), r.stderr)
        XCTAssertEqual(try Data(contentsOf: db), Data("not touched".utf8))
    }

    // MARK: non-finite weights are never quantized (#22)

    /// The tiny model's safetensors rewritten through SafetensorsWriter with `value` at
    /// element `index` of `tensor`.
    func plant(_ value: Float, at index: Int, in tensor: String, folder m: URL) throws {
        let file = m.appendingPathComponent("model.safetensors")
        let source = try SafetensorsFile(path: file.path)
        let names = source.entries.keys.sorted()
        let raw = names.map { n -> SafetensorsWriter.RawTensor in
            let e = source.entries[n]!
            return .init(name: n, dtypeName: e.dtypeName, shape: e.shape, byteCount: e.range.count)
        }
        let copy = dir.appendingPathComponent("planted.safetensors")
        try SafetensorsWriter.writeRaw(path: copy.path, tensors: raw, metadata: source.metadata) { i, out in
            let e = source.entries[names[i]]!
            out.copyMemory(from: source.file.base + e.range.lowerBound, byteCount: e.range.count)
            if names[i] == tensor { out.storeBytes(of: value, toByteOffset: 4 * index, as: Float.self) }
        }
        XCTAssertEqual(rename(copy.path, file.path), 0, "planted file moved into place")
    }

    /// Everything in `dir` (hidden files too): a refused conversion leaves nothing behind.
    func listing() -> Set<String> { Set((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []) }

    // Before: every setting wrote its output with the NaN turned into finite codes, exit 0.
    func testQuantizeRefusesANaNWeightNamingTheTensorAndElement() throws {
        var rng = SeededGenerator(for: name)
        let m = try makeTiny()
        let tensor = "model.layers.0.self_attn.k_proj.weight"
        let count = try XCTUnwrap(SafetensorsFile(path: m.appendingPathComponent("model.safetensors").path).entries[tensor]).shape.reduce(1, *)
        let index = Int.random(in: 0..<count, using: &rng)
        try plant(.nan, at: index, in: tensor, folder: m)
        let before = listing()
        for quant in ["q8_0", "q4_0", "q4_k", "f16", "bf16", "mlx-q4-g64", "mlx-q8-g32"] {
            let out = dir.appendingPathComponent(quant.hasPrefix("mlx") ? "out-\(quant)" : "out-\(quant).gguf")
            let r = try quantbench(["quantize", "--model", m.path, "--quant", quant, "--out", out.path])
            assertOneLineError(r, naming: tensor)
            XCTAssertTrue(r.stderr.contains("NaN") && r.stderr.contains("(element \(index))"), "\(quant): \(r.stderr)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: out.path), "\(quant): no output")
            XCTAssertEqual(listing(), before, "\(quant): no partial or hidden file left")
        }
        // Loading with --quant converts through the same quantizers: refused there too.
        let g = try quantbench(["generate", "--model", m.path, "--quant", "q8_0", "--prompt", "hi", "--max-tokens", "2"])
        assertOneLineError(g, naming: tensor)
    }

    // Before: wrote q.gguf with the infinity's block quantized to finite codes, exit 0.
    func testQuantizeRefusesAnInfiniteGGUFWeight() throws {
        var rng = SeededGenerator(for: name)
        let src = dir.appendingPathComponent("src.gguf")
        XCTAssertEqual(try quantbench(["make-model", "--preset", "tiny", "--format", "gguf", "--dtype", "f32", "--out", src.path]).status, 0)
        let file = try GGUFFile(path: src.path)
        let tensor = "blk.1.ffn_down.weight"
        let target = try XCTUnwrap(file.tensor(tensor))
        let index = Int.random(in: 0..<target.elementCount, using: &rng)
        var w = GGUFWriter()
        for key in file.keys { w.add(key, file.metadata[key]!) }
        for t in file.tensors {
            w.tensors.append(.init(name: t.name, dims: t.dims, type: Int32(t.type)) { out in
                out.copyMemory(from: UnsafeRawBufferPointer(start: file.file.base + t.range.lowerBound, count: t.range.count))
                if t.name == tensor { out.storeBytes(of: -Float.infinity, toByteOffset: 4 * index, as: Float.self) }
            })
        }
        let planted = dir.appendingPathComponent("inf.gguf")
        try w.write(to: planted)
        let before = listing()
        for quant in ["q8_0", "q4_k", "f16", "mlx-q4-g64"] {
            let out = dir.appendingPathComponent(quant.hasPrefix("mlx") ? "q-\(quant)" : "q-\(quant).gguf")
            let r = try quantbench(["quantize", "--model", planted.path, "--quant", quant, "--out", out.path])
            assertOneLineError(r, naming: tensor)
            XCTAssertTrue(r.stderr.contains("-infinity") && r.stderr.contains("(element \(index))"), "\(quant): \(r.stderr)")
            XCTAssertEqual(listing(), before, "\(quant): no output, no partial file")
        }
        // The source without the infinity converts: the refusal is the planted value's.
        let clean = try quantbench(["quantize", "--model", src.path, "--quant", "q8_0", "--out", dir.appendingPathComponent("ok.gguf").path])
        XCTAssertEqual(clean.status, 0, clean.stderr)
    }
}


/// Standard error read on another thread.
final class ErrorBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = Data()
    private var finished = false
    var data: Data {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue; finished = true } }
    }
    var done: Bool { lock.withLock { finished } }
}
