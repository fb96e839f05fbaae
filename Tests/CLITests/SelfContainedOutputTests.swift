import Foundation
import XCTest
import QBTestSupport

/// What `quantize` and `make-model` write opens in the format's own tools as it is,
/// checked by those tools: mlx-lm loads and generates from the MLX folder of a GGUF file
/// (tokenizer and template included), llama.cpp runs our GGUF files with their tokenizer
/// and chat template. Skipped with the reason when mlx-lm or llama.cpp is missing
/// (`QB_LLAMA_CPP_BIN` names llama.cpp's bin folder).
final class SelfContainedOutputTests: XCTestCase {

    var dir: URL!
    override func setUpWithError() throws { dir = try Fixtures.temporaryDirectory("outputs") }
    override func tearDown() { if let dir { try? FileManager.default.removeItem(at: dir) } }

    func quantbench(_ args: [String]) throws -> QuantbenchCLI.Run {
        let r = try QuantbenchCLI.quantbench(args)
        XCTAssertEqual(r.status, 0, "quantbench \(args.joined(separator: " ")): \(r.stderr)")
        return r
    }

    /// llama.cpp's bin folder, built beside the project (never inside it) and named by
    /// QB_LLAMA_CPP_BIN, as the other llama.cpp oracle tests find it.
    static var llamaCppBin: URL? {
        guard let c = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !c.isEmpty,
            ["llama-tokenize", "llama-simple", "llama-cli"].allSatisfy({ FileManager.default.isExecutableFile(atPath: c + "/" + $0) })
        else { return nil }
        return URL(fileURLWithPath: c)
    }

    func requireLlamaCpp() throws -> URL {
        guard let bin = Self.llamaCppBin else {
            // llama.cpp is built beside the project by hand, never by CI: a skip, even when the
            // Python oracles are required.
            throw XCTSkip("llama.cpp's llama-tokenize, llama-simple and llama-cli not found (set QB_LLAMA_CPP_BIN to its bin folder)")
        }
        return bin
    }

    /// GGUF → `quantize --quant mlx-q4-g64` → mlx_lm.load: the tokenizer encodes as ours,
    /// the chat template renders as ours, and it generates.
    func testMLXFolderFromGGUFOpensInMLXLM() throws {
        try Oracle.require(modules: ["mlx_lm", "tokenizers"])
        for preset in ["tiny", "tiny-qwen2"] {
            let gguf = dir.appendingPathComponent("\(preset).gguf"), mlx = dir.appendingPathComponent("\(preset)-mlx")
            _ = try quantbench(["make-model", "--preset", preset, "--seed", "4", "--format", "gguf", "--dtype", "q8_0", "--out", gguf.path])
            _ = try quantbench(["quantize", "-m", gguf.path, "--quant", "mlx-q4-g64", "--out", mlx.path])
            for f in ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"] {
                XCTAssertTrue(FileManager.default.fileExists(atPath: mlx.appendingPathComponent(f).path), "\(preset): \(f)")
            }
            let texts = ["Hello world", "It's 2025: 12345 tokens, don't   stop!\n\nNew line", "über café 東京"]
            let messages = dir.appendingPathComponent("messages.json")
            try Data(#"[{"role": "user", "content": "hi there"}]"#.utf8).write(to: messages)
            let script = """
                import json, sys
                from mlx_lm import load, generate
                model, tok = load(sys.argv[1])
                texts = json.loads(sys.argv[2])
                from tokenizers import Tokenizer
                reference = Tokenizer.from_file(sys.argv[1] + "/tokenizer.json")
                out = {"ids": [reference.encode(t).ids for t in texts], "mlx_ids": tok.encode(texts[0]),
                       "template": tok.apply_chat_template(json.load(open(sys.argv[3])), add_generation_prompt=True, tokenize=False)}
                out["generated"] = generate(model, tok, prompt=tok.encode("Hello"), max_tokens=4)
                print(json.dumps(out))
                """
            let textsJSON = String(decoding: try JSONSerialization.data(withJSONObject: texts), as: UTF8.self)
            let r = try Oracle.run(["-c", script, mlx.path, textsJSON, messages.path])
            XCTAssertEqual(r.status, 0, "mlx_lm on \(preset): \(r.stderr.suffix(2000))")
            let doc = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
            let theirs = try XCTUnwrap(doc["ids"] as? [[Int]])
            for (text, ids) in zip(texts, theirs) {
                let ours = try quantbench(["tokenize", "--tokenizer", gguf.path, "--text", text, "--json"])
                let oursIDs = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(ours.stdout.utf8)) as? [String: Any])?["ids"] as? [Int])
                XCTAssertEqual(ids, oursIDs, "\(preset): \(text)")
            }
            // mlx-lm's own tokenizer on text without digits (transformers splits digits of
            // this synthetic vocabulary apart where the tokenizers library does not).
            XCTAssertEqual(doc["mlx_ids"] as? [Int], theirs.first, preset)
            let template = try quantbench(["template", "--model", gguf.path, "--messages", messages.path, "--add-generation-prompt"]).stdout
            let theirTemplate = try XCTUnwrap(doc["template"] as? String)
            XCTAssertTrue(template == theirTemplate || template == theirTemplate + "\n", "\(preset): \(template) vs \(theirTemplate)")
            XCTAssertNotNil(doc["generated"] as? String)
        }
    }

    /// Our GGUF files (make-model, and quantize of a Hugging Face folder) run in llama.cpp
    /// as they are: llama-tokenize splits a prompt as we do, llama-simple continues it, llama-cli chats with the file's
    /// template.
    func testGGUFRunsInLlamaCpp() throws {
        let bin = try requireLlamaCpp()
        let made = dir.appendingPathComponent("made.gguf"), hf = dir.appendingPathComponent("hf"), quantized = dir.appendingPathComponent("q.gguf")
        _ = try quantbench(["make-model", "--preset", "tiny", "--seed", "5", "--format", "gguf", "--dtype", "q8_0", "--out", made.path])
        _ = try quantbench(["make-model", "--preset", "tiny-qwen3", "--seed", "5", "--out", hf.path])
        _ = try quantbench(["quantize", "-m", hf.path, "--quant", "q4_0", "--out", quantized.path])
        let prompt = "It's 2025: don't stop"
        for file in [made, quantized] {
            // llama.cpp tokenizes with the file's vocabulary as we do. The ids come from
            // llama-tokenize's standard output, not from llama-completion's --verbose-prompt
            // listing: llama-completion on this machine, busy, now and then exits 0 right
            // after its thread pool starts, having printed nothing (2 of 12 runs beside
            // three busy loops), which made this test fail now and then.
            let tokenized = try QuantbenchCLI.run(
                bin.appendingPathComponent("llama-tokenize"), ["-m", file.path, "-p", prompt, "--ids", "--log-disable"])
            XCTAssertEqual(tokenized.status, 0, tokenized.stderr.suffix(2000).description)
            let theirs = tokenized.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
                .trimmingCharacters(in: CharacterSet(charactersIn: "[]")).split(separator: ",")
                .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            // And generates from it (llama-simple: 14 of 14 fine under the same load).
            let completion = try QuantbenchCLI.run(bin.appendingPathComponent("llama-simple"), ["-m", file.path, "-n", "4", prompt])
            XCTAssertEqual(completion.status, 0, completion.stderr.suffix(2000).description)
            XCTAssertTrue(completion.stdout.contains(prompt), "stdout: \(completion.stdout) stderr: \(completion.stderr.suffix(2000))")
            let ours = try quantbench(["tokenize", "--tokenizer", file.path, "--text", prompt, "--json"])
            let oursIDs = try XCTUnwrap((try JSONSerialization.jsonObject(with: Data(ours.stdout.utf8)) as? [String: Any])?["ids"] as? [Int])
            XCTAssertEqual(theirs, oursIDs, file.lastPathComponent)
            // llama-cli chats with the template the file carries.
            let chat = try QuantbenchCLI.run(
                bin.appendingPathComponent("llama-cli"), ["-m", file.path, "-p", "Hi", "-n", "4", "--temp", "0", "-st", "-v"])
            XCTAssertEqual(chat.status, 0, chat.stderr.suffix(2000).description)
            XCTAssertTrue((chat.stdout + chat.stderr).contains("tokenizer.chat_template"), "the file carries its template")
        }
    }
}
