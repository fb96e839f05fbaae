import Foundation
import XCTest

@testable import QBText

final class SyntheticTokenizerTests: XCTestCase {
    func testCorpusSizeAndTraining() {
        let size = SyntheticCorpus.text.utf8.count
        XCTAssertGreaterThan(size, 5_000)
        XCTAssertLessThan(size, 20_000)
        let training = SyntheticTokenizer.training
        XCTAssertGreaterThanOrEqual(training.merges.count, SyntheticTokenizer.defaultMerges, "the text should give at least the default merges")
        // Ids are dense: each merge creates the next id or reuses an existing token.
        for (i, merge) in training.merges.enumerated() {
            XCTAssertEqual(training.tokens[merge.result], training.tokens[merge.left] + training.tokens[merge.right], "merge \(i)")
        }
        // Training is a pure function of its input.
        XCTAssertEqual(BPETrainer.train(text: SyntheticCorpus.text, maxMerges: 50).merges, Array(training.merges.prefix(50)))
    }

    func testTrainerTieBreakAndStop() {
        // "ab" and "cd" both occur twice; (a, b) has the smaller ids and goes first.
        let result = BPETrainer.train(text: "ab\nab\ncd\ncd", maxMerges: 10)
        XCTAssertEqual(result.merges.first, BPETrainer.Merge(left: 0x61, right: 0x62, result: 256))
        XCTAssertEqual(result.tokens[256], Array("ab".utf8))
        XCTAssertEqual(result.merges.count, 2)
        XCTAssertEqual(result.merges.last, BPETrainer.Merge(left: 0x63, right: 0x64, result: 257))
        XCTAssertEqual(BPETrainer.train(text: "xyz", maxMerges: 10).merges, [], "no pair repeats")
    }

    func testLayoutAndSpecialIDs() throws {
        let ids = SyntheticTokenizer.specialTokenIDs(vocabularySize: 128256)
        XCTAssertEqual(ids.bos, 128000)
        XCTAssertEqual(ids.endOfText, 128001)
        XCTAssertEqual(ids.endOfTurn, 128009)
        XCTAssertEqual(ids.endOfMessage, 128008)
        XCTAssertEqual(ids.eos, [128001, 128008, 128009])
        XCTAssertEqual(SyntheticTokenizer.specialTokens.count, 256)
        XCTAssertEqual(SyntheticTokenizer.specialTokens.last, "<|reserved_special_token_247|>")

        let dir = try TestSupport.temporaryDirectory(self)
        let written = try SyntheticTokenizer.write(to: dir, vocabularySize: 1024)
        let tok = try BPETokenizer(contentsOf: dir.appendingPathComponent("tokenizer.json"))
        XCTAssertEqual(tok.vocabularySize, 1024)
        XCTAssertEqual(tok.bosTokenID, written.bos)
        XCTAssertEqual(tok.bosTokenID, 768)
        XCTAssertEqual(tok.eosTokenIDs, [written.endOfTurn])
        XCTAssertTrue(tok.addsBOS)
        XCTAssertEqual(tok.chatTemplate, SyntheticTokenizer.chatTemplate)
        XCTAssertEqual(tok.token(for: 0x41), "A")
        XCTAssertEqual(tok.token(for: 0x20), "Ġ")
        XCTAssertEqual(tok.id(forToken: "<|eot_id|>"), 777)
        XCTAssertTrue(tok.isSpecial(777))
        XCTAssertFalse(tok.isSpecial(700))
        // 1024 - 512 = 512 new tokens fit; the rest of the middle is padding.
        let merges = SyntheticTokenizer.mergeCount(vocabularySize: 1024, requested: 1000)
        let learned = SyntheticTokenizer.training.tokenCount(afterMerges: merges)
        XCTAssertGreaterThanOrEqual(merges, 512)
        XCTAssertEqual(learned, 768)
        XCTAssertEqual(SyntheticTokenizer.mergeCount(vocabularySize: 512, requested: 1000), 0)
        XCTAssertEqual(SyntheticTokenizer.mergeCount(vocabularySize: 128256, requested: 1000), 1000)
        XCTAssertEqual(SyntheticTokenizer.mergeCount(vocabularySize: 128256, requested: 0), 0)
        let padded = try SyntheticTokenizer.tokenizerJSON(vocabularySize: 1024, merges: 100)
        XCTAssertTrue(padded.contains("\"<|pad_0|>\": \(SyntheticTokenizer.training.tokenCount(afterMerges: 100))"))
        // Padding entries are never produced.
        let text = SyntheticCorpus.text
        let encoded = tok.encode(text, addSpecialTokens: true, parseSpecialTokens: true)
        XCTAssertTrue(encoded.allSatisfy { $0 < 256 + 512 || $0 == written.bos })
        XCTAssertEqual(tok.decode(Array(encoded.dropFirst())), text)
        // Learned merges compress their own training text well.
        XCTAssertLessThan(Double(encoded.count), Double(text.utf8.count) / 2.5)
    }

    func testDeterministicFiles() throws {
        let a = try TestSupport.temporaryDirectory(self)
        let b = try TestSupport.temporaryDirectory(self)
        try SyntheticTokenizer.write(to: a, vocabularySize: 2000, merges: 300)
        try SyntheticTokenizer.write(to: b, vocabularySize: 2000, merges: 300)
        for name in ["tokenizer.json", "tokenizer_config.json"] {
            let x = try Data(contentsOf: a.appendingPathComponent(name))
            let y = try Data(contentsOf: b.appendingPathComponent(name))
            XCTAssertEqual(x, y, name)
        }
        XCTAssertEqual(try SyntheticTokenizer.tokenizerJSON(vocabularySize: 600, merges: 10), try SyntheticTokenizer.tokenizerJSON(vocabularySize: 600, merges: 10))
        // Both files are valid JSON.
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: a.appendingPathComponent("tokenizer.json"))) as? [String: Any]
        let model = json?["model"] as? [String: Any]
        XCTAssertEqual((model?["merges"] as? [Any])?.count, 300)
        XCTAssertEqual((model?["vocab"] as? [String: Any])?.count, 2000 - 256)
        let config = try TokenizerConfig(contentsOf: a.appendingPathComponent("tokenizer_config.json"))
        XCTAssertEqual(config.addBOSToken, true)
        XCTAssertEqual(config.bosToken, "<|begin_of_text|>")
        XCTAssertEqual(config.eosToken, "<|eot_id|>")
    }

    func testRejectsTooSmallVocabularies() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        for size in [0, 256, 511, -5] {
            XCTAssertThrowsError(try SyntheticTokenizer.write(to: dir, vocabularySize: size)) { error in
                guard case TokenizerError.malformed(let path, let field, _)? = error as? TokenizerError else {
                    return XCTFail("unexpected \(error)")
                }
                XCTAssertTrue(path.hasSuffix("tokenizer.json"))
                XCTAssertEqual(field, "vocabularySize")
            }
        }
        XCTAssertNoThrow(try SyntheticTokenizer.write(to: dir, vocabularySize: 512))
    }

    /// Our BPETokenizer and the `tokenizers` package agree on the synthetic tokenizer.json.
    func testMatchesHuggingFace() throws {
        for size in [512, 1024, 128256] {
            let dir = try TestSupport.temporaryDirectory(self)
            try SyntheticTokenizer.write(to: dir, vocabularySize: size)
            let url = dir.appendingPathComponent("tokenizer.json")
            let tok = try BPETokenizer(contentsOf: url)
            let texts = TestSupport.variedTexts + BPETokenizerTests.specialTexts + [String(SyntheticCorpus.text.prefix(3000))]
                + TestSupport.randomTexts(count: 200, seed: UInt64(size))
            for (add, parse) in [(true, true), (false, false)] {
                let response = try TestSupport.oracle([
                    "mode": "encode", "tokenizer": url.path, "texts": texts,
                    "add_special_tokens": add, "parse_special_tokens": parse,
                ])
                let expected = TestSupport.ids(response["ids"])
                let decoded = response["decoded"] as? [String] ?? []
                XCTAssertEqual(expected.count, texts.count)
                var same = 0
                for (i, text) in texts.enumerated() where i < expected.count {
                    let ids = tok.encode(text, addSpecialTokens: add, parseSpecialTokens: parse)
                    XCTAssertEqual(ids, expected[i], "vocab \(size) add=\(add) parse=\(parse): \(text.debugDescription)")
                    if ids == expected[i] { same += 1 }
                    if i < decoded.count { XCTAssertEqual(tok.decode(ids), decoded[i]) }
                }
                print("synthetic vocab \(size) add=\(add) parse=\(parse): \(same)/\(texts.count) identical to tokenizers")
            }
        }
    }

    /// The chat template renders the Llama 3 layout (checked with Python's jinja2 when it
    /// is installed).
    func testChatTemplateRenders() throws {
        let template = SyntheticTokenizer.chatTemplate
        XCTAssertTrue(template.contains("<|start_header_id|>"))
        let script = """
            import json, sys
            try:
                import jinja2
            except ImportError:
                sys.exit(3)
            t = jinja2.Environment().from_string(json.load(open(sys.argv[1]))["chat_template"])
            sys.stdout.write(t.render(bos_token="<|begin_of_text|>", add_generation_prompt=True,
                messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]))
            """
        let dir = try TestSupport.temporaryDirectory(self)
        try SyntheticTokenizer.write(to: dir, vocabularySize: 512)
        let scriptURL = dir.appendingPathComponent("render.py")
        try script.write(to: scriptURL, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", scriptURL.path, dir.appendingPathComponent("tokenizer_config.json").path]
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch { throw TestSupport.oracleUnavailable("python3 unavailable") }
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationStatus != 0 { throw TestSupport.oracleUnavailable("python3 with jinja2 unavailable") }
        XCTAssertEqual(out, "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")
    }
}
