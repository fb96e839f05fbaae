import Foundation
import XCTest

@testable import QBText

/// Opening tokenizers from any path, and the BOS policy seen through the protocol.
final class TokenizerFactoryTests: XCTestCase {
    func testOpensEveryFixtureFormatByContent() throws {
        let cases: [(String, TokenizerFactory.Format, String)] = [
            ("llama3-tokenizer/tokenizer.model", .tiktoken, "BPETokenizer"),
            ("llama2-tokenizer/tokenizer.model", .sentencePiece, "SentencePieceTokenizer"),
            ("llama2-tokenizer/tokenizer.json", .tokenizerJSON, "BPETokenizer"),
            ("llama2-tokenizer/tokenizer.bin", .llama2c, "Llama2cTokenizer"),
            ("smollm2-tokenizer/tokenizer.json", .tokenizerJSON, "BPETokenizer"),
            ("llamacpp-vocab-tests/ggml-vocab-llama-spm.gguf", .gguf, "SentencePieceTokenizer"),
            ("stories260k/tok512.bin", .llama2c, "Llama2cTokenizer"),
        ]
        for (relative, format, type) in cases {
            let url = try TestSupport.fixture(relative)
            XCTAssertEqual(TokenizerFactory.detect(try Data(contentsOf: url)), format, relative)
            let tok = try TokenizerFactory.open(url.path)
            XCTAssertEqual("\(Swift.type(of: tok))", type, relative)
            XCTAssertEqual(tok.decode(tok.encode("Hello, world!"), skipSpecialTokens: true), "Hello, world!", relative)
        }
        // The llama2.c vocabulary size is counted from the file when not given.
        let bin = try TokenizerFactory.open(try TestSupport.fixture("llama2-tokenizer/tokenizer.bin").path)
        XCTAssertEqual(bin.vocabularySize, 32000)
        let tok512 = try TokenizerFactory.open(try TestSupport.fixture("stories260k/tok512.bin").path, vocabularySize: 512)
        XCTAssertEqual(tok512.vocabularySize, 512)
    }

    func testFoldersPreferTokenizerJSON() throws {
        let llama2 = try TestSupport.fixture("llama2-tokenizer")
        XCTAssertEqual(try TokenizerFactory.resolve(llama2.path), llama2.appendingPathComponent("tokenizer.json").path)
        XCTAssertTrue(try TokenizerFactory.open(llama2.path) is BPETokenizer)
        XCTAssertTrue(try TokenizerFactory.open(try TestSupport.fixture("llama3-tokenizer").path) is BPETokenizer)
        // A folder with one GGUF file and nothing else.
        let dir = try TestSupport.temporaryDirectory(self)
        try FileManager.default.copyItem(
            at: try TestSupport.fixture("llamacpp-vocab-tests/ggml-vocab-llama-spm.gguf"), to: dir.appendingPathComponent("m.gguf"))
        XCTAssertTrue(try TokenizerFactory.open(dir.path) is SentencePieceTokenizer)
        try FileManager.default.copyItem(at: dir.appendingPathComponent("m.gguf"), to: dir.appendingPathComponent("n.gguf"))
        assertError(try TokenizerFactory.open(dir.path), path: dir.path, mentions: "several")
        let empty = try TestSupport.temporaryDirectory(self)
        assertError(try TokenizerFactory.open(empty.path), path: empty.path, mentions: "no tokenizer")
    }

    func testUnknownFormatsAndMissingPaths() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        let junk = dir.appendingPathComponent("tokenizer.model")
        try Data("this is not a tokenizer\n".utf8).write(to: junk)
        assertError(try TokenizerFactory.open(junk.path), path: junk.path, mentions: "format")
        try Data().write(to: junk)
        assertError(try TokenizerFactory.open(junk.path), path: junk.path, mentions: "format")
        assertError(try TokenizerFactory.open("/nonexistent/tokenizer.json"), path: "/nonexistent/tokenizer.json", mentions: "no such")
    }

    func assertError(_ body: @autoclosure () throws -> Any, path: String, mentions: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let e = error as? TokenizerError else { return XCTFail("untyped error \(error)", file: file, line: line) }
            XCTAssertTrue(e.description.hasPrefix(path), e.description, file: file, line: line)
            XCTAssertTrue(e.description.contains(mentions), e.description, file: file, line: line)
        }
    }

    /// BOS and EOS as each model declares them, and no double BOS from rendered prompts.
    func testBOSPolicyAndRenderedPrompts() throws {
        let llama3 = try FixtureTokenizers.llama3()
        XCTAssertEqual(llama3.bosTokenID, 128000)
        XCTAssertTrue(llama3.addsBOS)
        XCTAssertEqual(llama3.eosTokenIDs, [128001, 128008, 128009])
        XCTAssertEqual(llama3.encode("Hi"), [128000, 13347])
        XCTAssertEqual(llama3.encode("Hi", addSpecialTokens: false, parseSpecialTokens: false), [13347])
        let rendered = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
        let ids = llama3.encode(rendered: rendered)
        XCTAssertEqual(ids.filter { $0 == 128000 }.count, 1)
        XCTAssertEqual(ids.first, 128000)
        // Without BOS in the text, it is added; with addSpecialTokens false, never.
        XCTAssertEqual(llama3.encode(rendered: "<|start_header_id|>user").first, 128000)
        XCTAssertEqual(llama3.encode(rendered: "<|start_header_id|>user", addSpecialTokens: false).first, 128006)
        // Special-token text is plain text unless asked.
        XCTAssertGreaterThan(llama3.encode("<|eot_id|>", addSpecialTokens: false, parseSpecialTokens: false).count, 1)

        let smol = try FixtureTokenizers.smolLM2()
        XCTAssertFalse(smol.addsBOS)
        XCTAssertEqual(smol.encode(rendered: "<|im_start|>user\nHi<|im_end|>").first, 1)

        for tok in [try FixtureTokenizers.llama2GGUF(), try FixtureTokenizers.llama2Model() as any Tokenizer] {
            XCTAssertEqual(tok.bosTokenID, 1)
            XCTAssertTrue(tok.addsBOS)
            XCTAssertEqual(tok.eosTokenIDs, [2])
            XCTAssertEqual(tok.encode("hello world"), [1, 22172, 3186])
            // llama.cpp: text after a special token gets its own space prefix.
            XCTAssertEqual(tok.encode(rendered: "<s>[INST] hi [/INST]"), tok.encode("[INST] hi [/INST]"))
            XCTAssertEqual(tok.encode("<s>", addSpecialTokens: false, parseSpecialTokens: true), [1])
            XCTAssertNotEqual(tok.encode("<s>", addSpecialTokens: false, parseSpecialTokens: false), [1])
        }
        // Hugging Face's Llama 2 file matches its normalized `<s>` as "▁<s>": one BOS still.
        let json = try FixtureTokenizers.llama2JSON()
        XCTAssertEqual(json.encode(rendered: "<s>[INST] hi [/INST]").filter { $0 == 1 }.count, 1)

        // add_bos_token / add_eos_token from tokenizer_config.json.
        let url = try TestSupport.fixture("llama2-tokenizer/tokenizer.json")
        let withEOS = try BPETokenizer(json: try Data(contentsOf: url), config: TokenizerConfig(addBOSToken: false, addEOSToken: true, eosToken: "</s>"), path: url.path)
        XCTAssertFalse(withEOS.addsBOS)
        XCTAssertTrue(withEOS.addsEOS)
        XCTAssertEqual(withEOS.encode("hello"), [22172, 2])
    }

    func testChatTemplateAndTokenTextThroughTheProtocol() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        try SyntheticTokenizer.write(to: dir, vocabularySize: 512)
        let tok = try TokenizerFactory.open(dir.path)
        XCTAssertEqual(tok.chatTemplate, SyntheticTokenizer.chatTemplate)
        XCTAssertEqual(tok.tokenText(for: 0x20), "Ġ")
        XCTAssertNil(tok.tokenText(for: -1))
        XCTAssertNil(try FixtureTokenizers.llama3().chatTemplate)
    }
}
