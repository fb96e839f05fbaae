import Foundation
import XCTest
import QBTestSupport

/// The `quantbench` binary as a user runs it: real processes, exit codes and output.
final class CLITests: XCTestCase {
    static let root = Fixtures.repository
    static let fixtures = Fixtures.shared

    var binary: URL { QuantbenchCLI.binary }

    typealias Run = QuantbenchCLI.Run

    func quantbench(_ args: [String], environment: [String: String] = [:]) throws -> Run {
        try QuantbenchCLI.run(binary, args, environment: environment)
    }

    var dir: URL!
    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }
    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    func testBadModelPathsGiveOneClearLineAndExitNonZero() throws {
        let garbage = dir.appendingPathComponent("garbage.bin")
        try Data((0..<100).map { UInt8($0) }).write(to: garbage)
        for args in [["inspect", "--model", "/nonexistent/model"], ["generate", "--model", garbage.path, "--tokenizer", garbage.path]] {
            let r = try quantbench(args)
            XCTAssertEqual(r.reason, .exit, "exited, not killed by a signal: \(args)")
            XCTAssertNotEqual(r.status, 0, "\(args)")
            let lines = r.stderr.split(separator: "\n")
            XCTAssertEqual(lines.count, 1, "one line: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains(args[2]), "names the file: \(r.stderr)")
        }
    }

    func testMakeModelInspectGenerate() throws {
        let out = dir.appendingPathComponent("tiny")
        let made = try quantbench(["make-model", "--preset", "tiny", "--seed", "3", "--dtype", "bf16", "--out", out.path])
        XCTAssertEqual(made.status, 0, made.stderr)
        for file in ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: out.appendingPathComponent(file).path), file)
        }
        let inspect = try quantbench(["inspect", "--model", out.path])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        XCTAssertTrue(inspect.stdout.contains("BF16"), inspect.stdout)
        XCTAssertTrue(inspect.stdout.contains("model.layers.1.mlp.down_proj.weight"), inspect.stdout)
        XCTAssertTrue(inspect.stdout.contains("16.000 bits per weight"), inspect.stdout)
        let gen = try quantbench(["generate", "--model", out.path, "--prompt", "Hello", "--max-tokens", "8", "--threads", "2"])
        XCTAssertEqual(gen.status, 0, gen.stderr)
        XCTAssertTrue(gen.stdout.hasPrefix("Hello"), gen.stdout)
        XCTAssertTrue(gen.stderr.contains("8 generated") || gen.stderr.contains("finish: eos"), gen.stderr)
    }

    func testDefaultModelIsMadeOnFirstUse() throws {
        let cache = dir.appendingPathComponent("cache")
        let r = try quantbench(["generate", "--prompt", "The", "--max-tokens", "4"], environment: ["XDG_CACHE_HOME": cache.path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: cache.appendingPathComponent("quantbench/models/tiny-seed0/model.safetensors").path))
        let again = try quantbench(["generate", "--prompt", "The", "--max-tokens", "4"], environment: ["XDG_CACHE_HOME": cache.path])
        XCTAssertEqual(again.stdout, r.stdout, "deterministic")
    }

    func testStories260KGreedyFromTheCommandLine() throws {
        let dir = Self.fixtures.appendingPathComponent("stories260k")
        let expected = dir.appendingPathComponent("expected_generations.json")
        guard FileManager.default.fileExists(atPath: expected.path) else { throw XCTSkip("fixture \(dir.path) is missing") }
        let cases = try JSONSerialization.jsonObject(with: Data(contentsOf: expected)) as! [String: Any]
        let greedy = (cases["cases"] as! [[String: Any]]).first { ($0["temperature"] as? Double) == 0 }!
        let r = try quantbench([
            "generate", "--model", dir.appendingPathComponent("stories260K.bin").path,
            "--tokenizer", dir.appendingPathComponent("tok512.bin").path, "--max-tokens", "200",
        ])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdout, (greedy["expected_stdout"] as! String) + "\n")

        // A sampled case: llama2.c's own RNG and top-p procedure, from the command line.
        let sampled = (cases["cases"] as! [[String: Any]]).first { ($0["top_p"] as? Double) == 0.95 && ($0["prompt"] as? String) == "" }!
        let s = try quantbench([
            "generate", "--model", dir.appendingPathComponent("stories260K.bin").path,
            "--tokenizer", dir.appendingPathComponent("tok512.bin").path, "--max-tokens", "200",
            "--sampler", "llama2c", "--temperature", "1", "--top-p", "0.95", "--seed", "42", "--kv-type", "f32",
        ])
        XCTAssertEqual(s.status, 0, s.stderr)
        XCTAssertEqual(s.stdout, (sampled["expected_stdout"] as! String) + "\n")
    }
}
