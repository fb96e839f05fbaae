import Foundation
import QBEndpoint
import QBOpenAI
import QBRunner
import QBSupport
import QBTestSupport
import XCTest

/// A program started for a test (a server), stopped by its own pid when the test ends.
final class ServerProcess {
    let process = Process()
    let log: URL
    private(set) var port = 0

    /// Starts `executable args` and waits until `ready(log)` finds a port in its output.
    init(_ executable: URL, _ args: [String], log: URL, environment: [String: String] = [:], ready: (String) -> Int?) throws {
        self.log = log
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        process.executableURL = executable
        process.arguments = args
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let p = ready(text) {
                port = p
                return
            }
            guard process.isRunning else { break }
            usleep(100_000)
        }
        stop()
        throw StartFailure(log: String(((try? String(contentsOf: log, encoding: .utf8)) ?? "").suffix(2000)))
    }

    struct StartFailure: Error, CustomStringConvertible {
        let log: String
        var description: String { "the server did not start: \(log)" }
    }

    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    /// The port in the first `http://127.0.0.1:PORT` of `text`.
    static func port(in text: String, after marker: String) -> Int? {
        guard let r = text.range(of: marker) else { return nil }
        let digits = text[r.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }
}

/// `bench --endpoint` end to end: the real `quantbench` binary measuring real servers over
/// loopback (our `serve` on the tiny built-in model, llama.cpp's llama-server when
/// QB_LLAMA_CPP_BIN names its bin folder, and a small misbehaving server written in Python
/// for the streaming checks).
final class EndpointBenchTests: XCTestCase {
    var dir: URL!
    override func setUpWithError() throws { dir = try Fixtures.temporaryDirectory("endpoint") }
    override func tearDown() { if let dir { try? FileManager.default.removeItem(at: dir) } }

    static var binary: URL { TestProcess.product("quantbench") }

    struct Run { let status: Int32; let stdout: String; let stderr: String }

    func quantbench(_ args: [String]) throws -> Run {
        let p = Process()
        p.executableURL = Self.binary
        p.arguments = args
        p.currentDirectoryURL = dir
        let out = dir.appendingPathComponent("stdout-\(UUID().uuidString)"), err = dir.appendingPathComponent("stderr-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: out)
        p.standardError = try FileHandle(forWritingTo: err)
        try p.run()
        p.waitUntilExit()
        return Run(
            status: p.terminationStatus, stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// `quantbench serve` on the built-in tiny model (made in a private cache) on a free port.
    func serve(_ extra: [String] = []) throws -> ServerProcess {
        try ServerProcess(
            Self.binary, ["serve", "--port", "0"] + extra, log: dir.appendingPathComponent("serve-\(UUID().uuidString).log"),
            environment: ["XDG_CACHE_HOME": dir.appendingPathComponent("cache").path]
        ) { ServerProcess.port(in: $0, after: "on http://127.0.0.1:") }
    }

    func load(_ path: URL) throws -> BenchResult { try ResultsFile.load(path: path.path) }

    /// A port nothing listens on: bound, then released.
    func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        XCTAssertTrue(bound)
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    // MARK: - against quantbench serve

    func testMeasuresServeAtSeveralConcurrencies() throws {
        let server = try serve(["--parallel", "4"])
        defer { server.stop() }
        let out = dir.appendingPathComponent("load.json")
        let r = try quantbench([
            "bench", "--endpoint", "http://127.0.0.1:\(server.port)", "--concurrency", "1,4", "--num-requests", "8",
            "--slo", "ttft=10,tpot=5", "--out", out.path, "--no-db",
        ])
        XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
        let result = try load(out)
        XCTAssertTrue(result.passed)
        XCTAssertEqual(result.cases.map(\.id), ["stream-equals-whole", "concurrency-1", "concurrency-4"])
        XCTAssertEqual(result.cases.map(\.kind), [.generate, .load, .load])
        // Streamed and non-streamed replies agree (greedy and seeded prompts).
        XCTAssertEqual(result.cases[0].checks.map(\.passed), [true, true], "\(result.cases[0].checks)")
        let e = try XCTUnwrap(result.endpoint)
        XCTAssertEqual(e.model, "tiny-seed0")
        XCTAssertEqual(e.serverModels, ["tiny-seed0"])
        for (level, c) in zip(e.levels, result.cases.filter { $0.kind == .load }) {
            XCTAssertEqual(level.sent, 8)
            XCTAssertEqual(level.completed, 8)
            XCTAssertEqual(level.errors, [:])
            XCTAssertEqual(level.streamViolations, [:])
            XCTAssertGreaterThan(level.outputTokensPerSecond, 0)
            XCTAssertEqual(level.goodRequests, 8, "generous SLOs: every request is good")
            for req in level.requests {
                XCTAssertEqual(req.status, 200)
                XCTAssertEqual(req.tokensFrom, "usage", "our server sends usage in the last chunk")
                let ttft = try XCTUnwrap(req.ttft), e2e = try XCTUnwrap(req.endToEnd)
                XCTAssertTrue(ttft > 0 && ttft <= e2e)
                XCTAssertEqual(req.interTokenLatencies.count, max(0, req.contentChunks - 1))
                XCTAssertLessThanOrEqual(req.contentChunks, req.outputTokens ?? 0)
            }
            for metric in ["ttft_s", "tpot_s", "end_to_end_s", "ttft_p90_s", "itl_p50_s", "requests_per_s", "output_tokens_per_s", "goodput_requests_per_s"] {
                let v = try XCTUnwrap(c.metrics[metric], "\(c.id) \(metric)")
                XCTAssertTrue(v.median.isFinite && v.median > 0, "\(c.id) \(metric) \(v.median)")
            }
        }
        // Chat cases went to the chat endpoint, text prompts to completions.
        XCTAssertEqual(Set(e.levels[0].requests.map(\.api)), ["chat", "completions"])
        // The Markdown summary is beside it, and `compare` reads the file like any other.
        let md = try String(contentsOf: out.deletingPathExtension().appendingPathExtension("md"), encoding: .utf8)
        XCTAssertTrue(md.contains("| concurrency-4 | 8 | 8 | 0 |"), md)
        let cmp = try quantbench(["compare", out.path, out.path])
        XCTAssertEqual(cmp.status, 0, cmp.stderr + cmp.stdout)
    }

    /// Gamma arrivals (burstiness 0.5): the same seed gives the same send times (to
    /// scheduling noise), and a cap on requests in flight is kept.
    func testRequestRateIsSeededPoisson() throws {
        let server = try serve()
        defer { server.stop() }
        func run(_ name: String) throws -> LoadLevel {
            let out = dir.appendingPathComponent(name)
            let r = try quantbench([
                "bench", "--endpoint", "http://127.0.0.1:\(server.port)/v1", "--request-rate", "20", "--concurrency", "2",
                "--num-requests", "12", "--seed", "7", "--warmup", "0", "--max-tokens", "4", "--unique-prompts", "--burstiness", "0.5", "--out", out.path, "--no-db",
            ])
            XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
            return try XCTUnwrap(load(out).endpoint?.levels.first)
        }
        let a = try run("a.json"), b = try run("b.json")
        XCTAssertEqual(a.caseID, "rate-20-max2")
        XCTAssertEqual(a.mode, "rate")
        XCTAssertEqual(a.seed, 7)
        XCTAssertEqual(a.burstiness, 0.5)
        XCTAssertEqual(a.completed, 12)
        XCTAssertEqual(try load(dir.appendingPathComponent("a.json")).endpoint?.uniquePrompts, true)
        // 12 arrivals at 20/s take about 0.6 s; both runs drew the same gaps.
        let starts = a.requests.map(\.startSeconds)
        XCTAssertEqual(starts, starts.sorted())
        XCTAssertGreaterThan(starts.last!, 0.1)
        for (x, y) in zip(a.requests, b.requests) { XCTAssertEqual(x.startSeconds, y.startSeconds, accuracy: 0.25) }
        for r in a.requests { XCTAssertLessThanOrEqual(r.outputTokens ?? 99, 4) }
    }

    /// `--request-records none` leaves the per-request list out of the results, not out of the
    /// figures; `failed` keeps only failed requests (none here).
    func testRequestRecordsCanBeLeftOut() throws {
        let server = try serve()
        defer { server.stop() }
        for (mode, expected) in [("all", 6), ("failed", 0), ("none", 0)] {
            let out = dir.appendingPathComponent("records-\(mode).json")
            let r = try quantbench([
                "bench", "--endpoint", "http://127.0.0.1:\(server.port)/v1", "--concurrency", "2", "--num-requests", "6",
                "--warmup", "0", "--max-tokens", "3", "--request-records", mode, "--out", out.path, "--no-db",
            ])
            XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
            let result = try load(out)
            let level = try XCTUnwrap(result.endpoint?.levels.first)
            XCTAssertEqual(level.completed, 6, mode)
            XCTAssertEqual(level.requests.count, expected, mode)
            XCTAssertEqual(level.distributions["ttft_s"]?.count, 6, "\(mode): the figures still use every request")
            let notes = try XCTUnwrap(result.cases.first { $0.id == "concurrency-2" }).notes
            XCTAssertEqual(notes.contains { $0.contains("per-request records left out") }, expected == 0, "\(mode): \(notes)")
        }
    }

    /// Prompts from a JSON Lines file: text lines to /completions, messages to chat, each
    /// with its own max_tokens.
    func testDatasetPrompts() throws {
        let data = dir.appendingPathComponent("prompts.jsonl")
        try Data((#"{"id": "story", "prompt": "Once upon a time", "max_tokens": 5}"# + "\n\n"
            + #"{"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}], "max_tokens": 3, "temperature": 0.5}"# + "\r\n").utf8)
            .write(to: data)
        let server = try serve()
        defer { server.stop() }
        let out = dir.appendingPathComponent("ds.json")
        let r = try quantbench([
            "bench", "--endpoint", "http://127.0.0.1:\(server.port)", "--dataset", data.path, "--num-requests", "4", "--warmup", "0",
            "--out", out.path, "--no-db",
        ])
        XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
        let result = try load(out)
        XCTAssertEqual(result.suite.name, "prompts")
        let level = try XCTUnwrap(result.endpoint?.levels.first)
        XCTAssertEqual(level.requests.map(\.prompt), ["story", "line-3", "story", "line-3"])
        XCTAssertEqual(level.requests.map(\.api), ["completions", "chat", "completions", "chat"])
        for req in level.requests { XCTAssertLessThanOrEqual(req.outputTokens ?? 99, req.api == "chat" ? 3 : 5) }
    }

    func testBadDatasetsNameFileLineAndField() throws {
        let cases: [(String, String)] = [
            ("{\"prompt\": \"a\"}\n{\"prompt\": 3}\n", ":2: prompt: expected a string"),
            ("{\"prompt\": \"a\", \"max_token\": 3}\n", ":1: unknown field 'max_token'"),
            ("{\"prompt\": \"a\", \"max_tokens\": 0}\n", ":1: max_tokens"),
            ("{\"prompt\": \"a\", \"temperature\": -1}\n", ":1: temperature"),
            ("{\"messages\": [{\"role\": \"robot\", \"content\": \"x\"}]}\n", ":1: messages[0].role"),
            ("{\"messages\": []}\n", ":1: messages"),
            ("{\"id\": \"x\"}\n", ":1: no prompt"),
            ("[1, 2]\n", ":1: expected a JSON object"),
            ("{\"prompt\": \"a\"\n", ":1: not valid JSON"),
            ("\n\n", ": no prompts"),
        ]
        for (i, (text, expected)) in cases.enumerated() {
            let file = dir.appendingPathComponent("bad\(i).jsonl")
            try Data(text.utf8).write(to: file)
            let r = try quantbench(["bench", "--endpoint", "http://127.0.0.1:1", "--dataset", file.path, "--no-db"])
            XCTAssertEqual(r.status, 2, "\(text): \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("--dataset \(file.path)\(expected)"), "\(text): \(r.stderr)")
        }
        let missing = try quantbench(["bench", "--endpoint", "http://127.0.0.1:1", "--dataset", dir.appendingPathComponent("none.jsonl").path, "--no-db"])
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderr.contains("none.jsonl: cannot read"), missing.stderr)
        let both = try quantbench(["bench", "--endpoint", "http://127.0.0.1:1", "--dataset", "x.jsonl", "--suite", "smoke", "--no-db"])
        XCTAssertNotEqual(both.status, 0)
        XCTAssertTrue(both.stderr.contains("--dataset and --suite are alternatives"), both.stderr)
    }

    // MARK: - failures

    func testEndpointDownIsExit2AndWritesNothing() throws {
        let port = try freePort()
        let out = dir.appendingPathComponent("down.json")
        let r = try quantbench(["bench", "--endpoint", "http://127.0.0.1:\(port)", "--out", out.path, "--no-db"])
        XCTAssertEqual(r.status, 2, r.stderr)
        XCTAssertTrue(r.stderr.contains("--endpoint http://127.0.0.1:\(port): cannot connect"), r.stderr)
        XCTAssertTrue(r.stderr.contains("refused"), r.stderr)
        XCTAssertFalse(r.stderr.contains("Fatal"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path))
    }

    func testBadFlagsNameTheFlag() throws {
        let cases: [([String], String)] = [
            (["--endpoint", "ftp://x"], "--endpoint 'ftp://x'"),
            (["--endpoint", "http://127.0.0.1:99999"], "port"),
            (["--endpoint", "https://example.com"], "https"),
            (["--concurrency", "2"], "--concurrency goes with --endpoint"),
            (["--endpoint", "http://127.0.0.1:1", "--threads", "2"], "--threads"),
            (["--endpoint", "http://127.0.0.1:1", "--slo", "ttft=fast"], "--slo ttft"),
            (["--endpoint", "http://127.0.0.1:1", "--slo", "latency=1"], "unknown objective"),
            (["--endpoint", "http://127.0.0.1:1", "--request-rate", "0"], "--request-rate"),
            (["--endpoint", "http://127.0.0.1:1", "--request-rate", "nan"], "--request-rate"),
            (["--endpoint", "http://127.0.0.1:1", "--request-rate", "1e-300"], "--request-rate"),
            (["--endpoint", "http://127.0.0.1:1", "--burstiness", "2"], "--burstiness goes with --request-rate"),
            (["--endpoint", "http://127.0.0.1:1", "--request-rate", "2", "--burstiness", "0"], "--burstiness must be"),
            (["--endpoint", "http://127.0.0.1:1", "--concurrency", "0"], "--concurrency"),
            (["--endpoint", "http://127.0.0.1:1", "--api", "embeddings"], "--api"),
            (["--endpoint", "http://127.0.0.1:1", "--max-error-rate", "2"], "--max-error-rate"),
            (["--endpoint", "http://127.0.0.1:1", "-m", "a,b"], "-m/--model"),
            (["--endpoint", "http://127.0.0.1:1", "--request-records", "some"], "--request-records"),
            (["--request-records", "none"], "--request-records goes with --endpoint"),
        ]
        for (args, expected) in cases {
            let r = try quantbench(["bench", "--no-db"] + args)
            XCTAssertTrue(r.status == 2 || r.status == 64, "\(args): exit \(r.status)")
            XCTAssertTrue(r.stderr.contains(expected), "\(args): \(r.stderr)")
        }
    }

    /// A server answering 404 to every request (a model it does not serve): each request is
    /// counted as failed by kind, and a run where every request failed is not a pass.
    func testAllRequestsFailingIsNotAPass() throws {
        let server = try serve()
        defer { server.stop() }
        let out = dir.appendingPathComponent("fail.json")
        let r = try quantbench([
            "bench", "--endpoint", "http://127.0.0.1:\(server.port)", "-m", "no-such-model", "--num-requests", "5",
            "--warmup", "0", "--max-error-rate", "1", "--out", out.path, "--no-db",
        ])
        XCTAssertEqual(r.status, 1, r.stderr)
        let result = try load(out)
        XCTAssertFalse(result.passed)
        let level = try XCTUnwrap(result.endpoint?.levels.first)
        XCTAssertEqual(level.completed, 0)
        XCTAssertEqual(level.errors, ["http_404": 5])
        XCTAssertTrue(level.requests[0].errorDetail?.contains("no-such-model") == true, "\(level.requests[0])")
        XCTAssertEqual(level.requestsPerSecond, 0)
        XCTAssertNil(result.cases[1].metrics["ttft_s"], "nothing measured, no figure")
        XCTAssertEqual(result.cases.map(\.status), [.failed, .failed])
        XCTAssertTrue(result.cases[0].checks[0].detail.contains("http_404"), result.cases[0].checks[0].detail)
    }

    /// A full queue answers 503: those requests are failures of kind http_503, the level
    /// fails unless --max-error-rate allows them, and the completed ones are still measured.
    func testOverloadedServerCounts503() throws {
        let server = try serve(["--parallel", "1", "--queue", "0"])
        defer { server.stop() }
        let out = dir.appendingPathComponent("busy.json")
        let r = try quantbench([
            "bench", "--endpoint", "http://127.0.0.1:\(server.port)", "--concurrency", "6", "--num-requests", "24",
            "--max-tokens", "48", "--warmup", "0", "--out", out.path, "--no-db",
        ])
        let result = try load(out)
        let level = try XCTUnwrap(result.endpoint?.levels.first)
        XCTAssertEqual(level.sent, 24)
        XCTAssertEqual(level.completed + (level.errors["http_503"] ?? 0), 24, "\(level.errors)")
        XCTAssertGreaterThan(level.errors["http_503"] ?? 0, 0, "6 clients on one slot and no queue: some are refused")
        XCTAssertGreaterThan(level.completed, 0)
        XCTAssertEqual(r.status, 1, "errors fail the level by default")
        XCTAssertNotNil(result.cases.first { $0.kind == .load }?.metrics["ttft_s"])
    }

    /// A server whose streams break the format: content after finish_reason, no [DONE],
    /// usage that does not add up, a malformed chunk. Each is counted and fails the level.
    func testStreamViolationsAreCaught() throws {
        let script = dir.appendingPathComponent("bad_server.py")
        try Data(Self.badServer.utf8).write(to: script)
        let server = try ServerProcess(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", script.path], log: dir.appendingPathComponent("bad.log")
        ) { ServerProcess.port(in: $0, after: "listening on ") }
        defer { server.stop() }
        let out = dir.appendingPathComponent("bad.json")
        let r = try quantbench([
            "bench", "--endpoint", "http://127.0.0.1:\(server.port)", "--num-requests", "4", "--warmup", "0",
            "--api", "chat", "--out", out.path, "--no-db",
        ])
        XCTAssertEqual(r.status, 1, r.stderr)
        let level = try XCTUnwrap(load(out).endpoint?.levels.first)
        XCTAssertEqual(level.completed, 4, "\(level.errors) \(level.requests.first.map { "\($0)" } ?? "")")
        for kind in ["content_after_finish", "missing_done", "usage_inconsistent", "malformed_chunk", "wrong_object"] {
            XCTAssertEqual(level.streamViolations[kind], 4, "\(kind): \(level.streamViolations)")
        }
        let check = try XCTUnwrap(load(out).cases.first { $0.kind == .load }?.checks.first { $0.name == "streams_well_formed" })
        XCTAssertFalse(check.passed)
    }

    static let badServer = #"""
        import json, sys
        from http.server import BaseHTTPRequestHandler, HTTPServer

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *a): pass
            def do_GET(self):
                body = json.dumps({"object": "list", "data": [{"id": "bad", "object": "model"}]}).encode()
                self.send_response(200); self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.send_response(200); self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close"); self.end_headers()
                def chunk(obj): self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\r\n\r\n"); self.wfile.flush()
                c = lambda content, finish=None: {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}
                chunk(c("Hello"))
                chunk(c(" there", "stop"))
                chunk(c(" more"))
                self.wfile.write(b"data: {not json\n\n")
                chunk({"object": "text_completion", "choices": [{"index": 0, "delta": {}, "finish_reason": None}]})
                chunk({"object": "chat.completion.chunk", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 9}})
                self.close_connection = True

        s = HTTPServer(("127.0.0.1", 0), H)
        print("listening on %d" % s.server_address[1], flush=True)
        s.serve_forever()
        """#

    // MARK: - against llama.cpp's llama-server

    func testMeasuresLlamaServer() throws {
        guard let bin = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !bin.isEmpty,
              FileManager.default.isExecutableFile(atPath: bin + "/llama-server") else {
            throw XCTSkip("llama.cpp's llama-server not found (set QB_LLAMA_CPP_BIN to its bin folder)")
        }
        let gguf = dir.appendingPathComponent("tiny.gguf")
        let made = try quantbench(["make-model", "--preset", "tiny", "--seed", "4", "--format", "gguf", "--dtype", "q8_0", "--out", gguf.path])
        XCTAssertEqual(made.status, 0, made.stderr)
        let server = try ServerProcess(
            URL(fileURLWithPath: bin + "/llama-server"),
            ["-m", gguf.path, "--host", "127.0.0.1", "--port", String(try freePort()), "-np", "2", "-t", "2", "-c", "2048"],
            log: dir.appendingPathComponent("llama.log")
        ) { text in
            text.contains("listening on") ? ServerProcess.port(in: text, after: "listening on http://127.0.0.1:") : nil
        }
        defer { server.stop() }
        let out = dir.appendingPathComponent("llama.json")
        let r = try quantbench([
            "bench", "--endpoint", "http://127.0.0.1:\(server.port)", "--concurrency", "2", "--num-requests", "6",
            "--out", out.path, "--no-db",
        ])
        XCTAssertEqual(r.status, 0, r.stderr + r.stdout)
        let level = try XCTUnwrap(load(out).endpoint?.levels.first)
        XCTAssertEqual(level.completed, 6)
        XCTAssertEqual(level.streamViolations, [:])
        XCTAssertTrue(level.requests.allSatisfy { $0.tokensFrom == "usage" }, "llama-server sends usage when asked")
    }
}

/// The pieces the runs above rest on, checked on their own.
final class EndpointPartsTests: XCTestCase {
    func testServerSentEventsAcrossFeedsAndLineEndings() {
        var p = ServerSentEvents()
        XCTAssertEqual(p.feed(Array("data: {\"a\":".utf8)), [])
        XCTAssertEqual(p.feed(Array("1}\r".utf8)), [])
        XCTAssertEqual(p.feed(Array("\n\r\n: comment\n\nevent: x\ndata:two\ndata: lines\n\ndata: [DONE]\n".utf8)), ["{\"a\":1}", "two\nlines"])
        XCTAssertTrue(p.hasPartialEvent)
        XCTAssertEqual(p.feed(Array("\n".utf8)), ["[DONE]"])
        XCTAssertFalse(p.hasPartialEvent)
    }

    /// A body in hand judged as a live stream (what the fuzzer drives): the same text and
    /// violations whatever size of piece the bytes arrive in.
    func testStreamCheckOfABodyInHand() {
        func chunk(_ content: String?, finish: String? = nil, usage: String? = nil) -> String {
            let delta = content.map { #"{"content":"\#($0)"}"# } ?? "{}"
            let choices = usage == nil ? #"[{"index":0,"delta":\#(delta),"finish_reason":\#(finish.map { "\"\($0)\"" } ?? "null")}]"# : "[]"
            return #"data: {"object":"chat.completion.chunk","choices":\#(choices)\#(usage.map { #","usage":\#($0)"# } ?? "")}"# + "\r\n\r\n"
        }
        let good = chunk("Hel") + chunk("lo", finish: "length") + chunk(nil, usage: #"{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}"#) + "data: [DONE]\n\n"
        for piece in [1, 3, 4096] {
            let (r, text) = StreamCheck.record(ofBody: Array(good.utf8), chat: true, maxTokens: 2, pieceSize: piece)
            XCTAssertEqual(text, "Hello", "piece size \(piece)")
            XCTAssertNil(r.error)
            XCTAssertEqual(r.violations, [], "piece size \(piece)")
            XCTAssertEqual(r.outputTokens, 2)
            XCTAssertEqual(r.finishReason, "length")
        }
        // Text after the finish, a second finish, a wrong length, an event after [DONE], a
        // body cut inside an event.
        let bad = chunk("a", finish: "stop") + chunk("b", finish: "stop") + chunk(nil, usage: #"{"prompt_tokens":3,"completion_tokens":2,"total_tokens":6}"#)
            + "data: [DONE]\n\n" + chunk("c") + "data: {\"choi"
        let (r, _) = StreamCheck.record(ofBody: Array(bad.utf8), chat: true, maxTokens: 2, pieceSize: 7)
        XCTAssertEqual(Set(r.violations), ["content_after_finish", "multiple_finish_reasons", "usage_inconsistent", "event_after_done", "partial_event"])
        XCTAssertEqual(StreamCheck.record(ofBody: [], chat: false, maxTokens: 4).record.error, "empty_stream")
    }

    func testTargets() throws {
        let a = try EndpointTarget("http://127.0.0.1:8080")
        XCTAssertEqual([a.host, String(a.port), a.basePath], ["127.0.0.1", "8080", "/v1"])
        let b = try EndpointTarget("http://localhost:9000/v1/")
        XCTAssertEqual([b.host, String(b.port), b.basePath], ["localhost", "9000", "/v1"])
        let c = try EndpointTarget("http://[::1]:8000/proxy/v1/chat/completions")
        XCTAssertEqual([c.host, String(c.port), c.basePath, c.hostHeader], ["::1", "8000", "/proxy/v1", "[::1]:8000"])
        XCTAssertEqual(try EndpointTarget("http://example.com").port, 80)
        for bad in ["", "127.0.0.1:8080", "http://", "http://:80", "http://h:0", "http://h:x", "http://h/v1?x=1", "https://h"] {
            XCTAssertThrowsError(try EndpointTarget(bad), bad) { XCTAssertTrue("\($0)".hasPrefix("--endpoint '\(bad)'"), "\($0)") }
        }
    }

    func testPromptsFromTheSmokeSuite() throws {
        let suite = try SuiteLoader.resolve("smoke")
        let (prompts, skipped) = EndpointPrompt.from(suite, api: .auto, maxTokens: nil)
        XCTAssertEqual(prompts.map(\.id), ["greedy", "sampled", "chat"])
        XCTAssertEqual(prompts.map(\.chat), [false, false, true])
        XCTAssertEqual(skipped.count, suite.cases.count - 3)
        let body = String(decoding: prompts[2].body(model: "m"), as: UTF8.self)
        XCTAssertTrue(body.hasPrefix(#"{"model":"m","messages":[{"role":"system""#), body)
        XCTAssertTrue(body.contains(#""stream":true,"stream_options":{"include_usage":true}"#), body)
        let prefixed = String(decoding: prompts[2].body(model: "m", prefix: "Request 1.7: "), as: UTF8.self)
        XCTAssertTrue(prefixed.contains(#"[{"role":"system","content":"Request 1.7: You are"#), prefixed)
        XCTAssertTrue(String(decoding: prompts[0].body(model: "m", prefix: "P "), as: UTF8.self).contains(#""prompt":"P Once upon a time""#))
        XCTAssertTrue(EndpointPrompt.from(suite, api: .completions, maxTokens: 5).prompts.allSatisfy { !$0.chat && $0.maxTokens == 5 })
    }

    /// Gaps average 1 / rate at every burstiness; their coefficient of variation is
    /// 1 / sqrt(shape) (1 for Poisson); the same seed draws the same gaps.
    func testArrivalGaps() {
        for shape in [0.25, 1, 4] {
            var g = ArrivalGaps(rate: 5, burstiness: shape, seed: 11)
            let xs = (0..<40_000).map { _ in g.next() }
            let mean = xs.reduce(0, +) / Double(xs.count)
            let sd = (xs.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(xs.count - 1)).squareRoot()
            XCTAssertEqual(mean, 0.2, accuracy: 0.2 * 0.05, "shape \(shape)")
            XCTAssertEqual(sd / mean, 1 / shape.squareRoot(), accuracy: 0.1 / shape.squareRoot(), "shape \(shape)")
            XCTAssertTrue(xs.allSatisfy { $0.isFinite && $0 >= 0 })
            var a = ArrivalGaps(rate: 5, burstiness: shape, seed: 3), b = ArrivalGaps(rate: 5, burstiness: shape, seed: 3)
            XCTAssertEqual((0..<50).map { _ in a.next() }, (0..<50).map { _ in b.next() })
        }
    }

    func testDistributionIgnoresNonFiniteAndEmpty() {
        XCTAssertNil(Distribution([]))
        XCTAssertNil(Distribution([.nan, .infinity]))
        let d = Distribution([1, 2, 3, 4, .nan])
        XCTAssertEqual(d?.count, 4)
        XCTAssertEqual(d?.median, 2.5)
        XCTAssertEqual(d?.max, 4)
    }
}
