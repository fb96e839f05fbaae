import Foundation
import XCTest
import QBTestSupport

@testable import QBText

/// A Qwen2 / Qwen2.5 / Qwen3 GGUF's tokenizer: `tokenizer.ggml.model = gpt2` with
/// `tokenizer.ggml.pre = qwen2` (the Llama 3 split with single digits), read from llama.cpp's
/// vocab-only `ggml-vocab-qwen2.gguf` and checked against things we did not write:
/// llama.cpp's test vectors for it, transformers' Qwen2.5 ids, and llama-tokenize itself.
///
/// The vocabulary (5.9 MB) is not in ../shared/fixtures; it is looked for in
/// `QB_LLAMA_CPP_VOCABS` (a folder holding llama.cpp's `models/ggml-vocab-*.gguf`, which CI
/// takes from the llama-cpp-python source package), the fixture folder, then llama.cpp's
/// `models/` beside `QB_LLAMA_CPP_BIN` (its `build/bin`). Missing, the tests skip with the
/// reason, or fail when QB_REQUIRE_ORACLES=1.
final class QwenGGUFTokenizerTests: XCTestCase {
    static let vocabName = "ggml-vocab-qwen2.gguf"

    static func vocabulary() throws -> URL {
        let env = ProcessInfo.processInfo.environment
        var candidates: [URL] = []
        if let d = env["QB_LLAMA_CPP_VOCABS"], !d.isEmpty { candidates.append(URL(fileURLWithPath: d).appendingPathComponent(vocabName)) }
        candidates.append(Fixtures.shared.appendingPathComponent("llamacpp-vocab-tests/\(vocabName)"))
        if let b = env["QB_LLAMA_CPP_BIN"], !b.isEmpty {
            candidates.append(URL(fileURLWithPath: b).appendingPathComponent("../../models/\(vocabName)").standardizedFileURL)
        }
        if let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) { return found }
        throw TestSupport.oracleUnavailable(
            "\(vocabName) not found (looked in \(candidates.map(\.path).joined(separator: ", "))); set QB_LLAMA_CPP_VOCABS to llama.cpp's models/ folder")
    }

    static func tokenizer() throws -> (any Tokenizer, URL) {
        let url = try vocabulary()
        return (try GGUFTokenizer.tokenizer(path: url.path), url)
    }

    /// The fixture's .inp/.out (llama.cpp at c392e50) and, when the vocabulary comes with its
    /// own pair (a newer llama.cpp: one input changed, "Führer" to "Äpfel"), those too.
    func testLlamaCppVectorsExactly() throws {
        let (tok, url) = try Self.tokenizer()
        let bpe = try XCTUnwrap(tok as? BPETokenizer, "a gpt2 GGUF vocabulary reads as byte-level BPE")
        XCTAssertEqual(bpe.preTokenizer.stages, [.split(.qwen2)], "tokenizer.ggml.pre = qwen2 selects Qwen2's split")
        XCTAssertFalse(tok.addsBOS, "Qwen adds no BOS (llama.cpp's default for gpt2 vocabularies)")

        var sets: [(String, [TokenizerCase])] = []
        do {
            sets.append(("fixture", try FixtureVectors.llamaCpp("qwen2")))
        } catch let skip as XCTSkip {
            throw TestSupport.oracleUnavailable("llama.cpp's qwen2 vectors: \(skip)")
        }
        let inp = URL(fileURLWithPath: url.path + ".inp"), out = URL(fileURLWithPath: url.path + ".out")
        if FileManager.default.fileExists(atPath: inp.path), FileManager.default.fileExists(atPath: out.path) {
            sets.append(("beside the vocabulary", try FixtureVectors.llamaCpp(inp: inp, out: out, name: "qwen2")))
        }
        for (label, cases) in sets {
            XCTAssertGreaterThanOrEqual(cases.count, 40, "\(label): the .inp/.out pairs were read")
            var same = 0
            for c in cases {
                let ids = tok.encode(c.text, addSpecialTokens: false, parseSpecialTokens: false)
                XCTAssertEqual(ids, c.ids, "\(label) \(c.name): \(c.text.debugDescription)")
                if ids == c.ids { same += 1 }
                // Byte-level BPE decodes back to the exact text.
                XCTAssertEqual(tok.decode(ids, skipSpecialTokens: false), c.text, "\(label) \(c.name): round trip")
            }
            print("llama.cpp qwen2 vectors (\(label)): \(same)/\(cases.count) identical")
        }
    }

    /// transformers' ids (Qwen/Qwen2.5-0.5B, add_special_tokens, no BOS for Qwen) for the
    /// swift-transformers multilingual inputs: every script, emoji sequences, numbers.
    /// Qwen2 and Qwen2.5 share the byte-level vocabulary below id 151643.
    func testQwen25TransformersMultilingualBaseline() throws {
        let (tok, _) = try Self.tokenizer()
        let cases = try FixtureVectors.multilingual(baseline: "multilingual_baseline_qwen2_5.json")
        XCTAssertGreaterThanOrEqual(cases.count, 80)
        var same = 0
        for c in cases {
            let ids = tok.encode(c.text, addSpecialTokens: true, parseSpecialTokens: false)
            XCTAssertEqual(ids, c.ids, "\(c.name): \(c.text.debugDescription)")
            if ids == c.ids { same += 1 }
        }
        print("transformers Qwen2.5 multilingual: \(same)/\(cases.count) identical")
    }

    /// Seeded random texts built from pieces that exercise each alternative of the split
    /// (contractions in any case and the long s, letters after one non-letter, single
    /// digits of every N* category, punctuation runs before newlines, whitespace runs before
    /// text, CJK, combining marks, ZWJ emoji, a special token) against `llama-tokenize` on
    /// the same vocabulary (special tokens parsed, as llama-tokenize does by default).
    func testSeededTextsAgainstLlamaTokenize() throws {
        let (tok, url) = try Self.tokenizer()
        guard let bin = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !bin.isEmpty else {
            throw XCTSkip("QB_LLAMA_CPP_BIN is not set (llama.cpp's bin folder): checked against the fixed vectors only")
        }
        let tool = URL(fileURLWithPath: bin).appendingPathComponent("llama-tokenize")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else { throw XCTSkip("no llama-tokenize in \(bin)") }
        let pieces = [
            "a", "Z", "the", "HELLO", "é", "ſ", "ǅ", "日本", "中文字", "ไทย", "ß", "12", "7", "٣", "²", "½", "Ⅻ",
            " ", "  ", "\t", "\n", "\r\n", "\n\n", " \n ", "\u{a0}", "\u{3000}", "\u{2009}",
            "'s", "'LL", "'Re", "'d", "'x", "’s", "!", "?!", "...", "--", "(", ")", "{}", "\"", "$", "€",
            "😀", "👨‍👩‍👧", "🚀️", "\u{301}", "e\u{301}", "\u{200d}", "<|endoftext|>", "_", "#", "@", "0", "999", "x1y2",
        ]
        var rng = SeededGenerator(for: "QwenGGUFTokenizerTests/testSeededTextsAgainstLlamaTokenize")
        let dir = try TestSupport.temporaryDirectory(self)
        let file = dir.appendingPathComponent("text.txt")
        var same = 0
        let count = 40
        for _ in 0..<count {
            var text = (0..<Int.random(in: 1...25, using: &rng)).map { _ in pieces.randomElement(using: &rng) ?? "" }.joined()
            // llama-tokenize refuses a prompt of whitespace alone.
            if text.allSatisfy(\.isWhitespace) { text = "x" + text }
            try Data(text.utf8).write(to: file)
            let r = try runLlamaCppTool(tool, ["-m", url.path, "-f", file.path, "--ids", "--log-disable"])
            XCTAssertEqual(r.status, 0, "llama-tokenize on \(text.debugDescription)")
            let last = r.stdout.split(separator: "\n").last.map(String.init) ?? ""
            let theirs = last.trimmingCharacters(in: CharacterSet(charactersIn: "[] \r"))
                .split(separator: ",").compactMap { TokenID($0.trimmingCharacters(in: .whitespaces)) }
            let ours = tok.encode(text, addSpecialTokens: true, parseSpecialTokens: true)
            XCTAssertEqual(ours, theirs, "ids of \(text.debugDescription) (seed \(rng.seed))")
            if ours == theirs { same += 1 }
        }
        print("llama-tokenize qwen2, seed \(rng.seed): \(same)/\(count) identical")
    }
}
