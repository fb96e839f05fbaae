import Foundation
import QBSupport
import XCTest
import QBTestSupport

@testable import QBText

/// Corrupt and unsupported files give typed errors naming the file, never a crash.
final class BadInputTests: XCTestCase {
    // MARK: tokenizer.bin

    private func bin(maxLength: Int32 = 8, tokens: [(Float, Int32, [UInt8])]) -> Data {
        var d = Data()
        func int32(_ v: Int32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        int32(maxLength)
        for (score, length, bytes) in tokens {
            withUnsafeBytes(of: score.bitPattern.littleEndian) { d.append(contentsOf: $0) }
            int32(length)
            d.append(contentsOf: bytes)
        }
        return d
    }

    private func assertMalformed(_ body: @autoclosure () throws -> Any, path: String, field expected: String? = nil, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let error = error as? TokenizerError else { return XCTFail("untyped error \(error)", file: file, line: line) }
            switch error {
            case .malformed(let p, let field, _):
                XCTAssertEqual(p, path, file: file, line: line)
                if let expected { XCTAssertEqual(field, expected, "\(error)", file: file, line: line) }
            default:
                XCTFail("expected malformed, got \(error)", file: file, line: line)
            }
            XCTAssertTrue(error.description.contains(path), file: file, line: line)
        }
    }

    func testLlama2cGoodMinimalFile() throws {
        let data = bin(tokens: [(0, 5, Array("<unk>".utf8)), (0, 3, Array("<s>".utf8)), (0, 4, Array("</s>".utf8)), (-1, 1, [0x61])])
        let tok = try Llama2cTokenizer(data: data, vocabularySize: 4, path: "t.bin")
        // No " " in the vocabulary: no dummy prefix; bytes without a token in range are dropped.
        XCTAssertEqual(tok.encode("aa"), [1, 3, 3])
        XCTAssertEqual(tok.encode("é"), [1])
        XCTAssertEqual(tok.decode([1, 3, 3]), "aa")
    }

    func testLlama2cTruncatedAndNegative() {
        let path = "bad/tokenizer.bin"
        let good: [(Float, Int32, [UInt8])] = [(0, 1, [0x61]), (0, 1, [0x62]), (0, 1, [0x63])]
        let full = bin(tokens: good)
        assertMalformed(try Llama2cTokenizer(data: Data(), vocabularySize: 3, path: path), path: path, field: "max_token_length")
        assertMalformed(try Llama2cTokenizer(data: full.prefix(2), vocabularySize: 3, path: path), path: path, field: "max_token_length")
        // Every truncation point of a valid file is an error, never a trap.
        for cut in 4..<full.count {
            assertMalformed(try Llama2cTokenizer(data: full.prefix(cut), vocabularySize: 3, path: path), path: path)
        }
        XCTAssertNoThrow(try Llama2cTokenizer(data: full, vocabularySize: 3, path: path))
        // Vocabulary larger than the file.
        assertMalformed(try Llama2cTokenizer(data: full, vocabularySize: 4, path: path), path: path, field: "token[3]")
        assertMalformed(try Llama2cTokenizer(data: bin(maxLength: -1, tokens: good), vocabularySize: 3, path: path), path: path, field: "max_token_length")
        assertMalformed(try Llama2cTokenizer(data: bin(maxLength: .max, tokens: good), vocabularySize: 3, path: path), path: path, field: "max_token_length")
        assertMalformed(try Llama2cTokenizer(data: bin(tokens: [(0, 1, [0x61]), (0, -4, []), (0, 1, [0x63])]), vocabularySize: 3, path: path), path: path, field: "token[1].length")
        assertMalformed(try Llama2cTokenizer(data: bin(tokens: [(0, 1, [0x61]), (0, .max, []), (0, 1, [0x63])]), vocabularySize: 3, path: path), path: path, field: "token[1].length")
        assertMalformed(try Llama2cTokenizer(data: bin(tokens: [(0, 1, [0x61]), (0, 1000, [1, 2]), (0, 1, [0x63])]), vocabularySize: 3, path: path), path: path, field: "token[1]")
        for size in [0, 2, -1, Int.max] {
            assertMalformed(try Llama2cTokenizer(data: full, vocabularySize: size, path: path), path: path, field: "vocab_size")
        }
    }

    func testLlama2cRandomBytesNeverTrap() {
        var rng = SeededGenerator(for: "BadInputTests.testLlama2cRandomBytesNeverTrap")
        for _ in 0..<300 {
            let count = Int.random(in: 0..<200, using: &rng)
            let data = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) })
            if let tok = try? Llama2cTokenizer(data: data, vocabularySize: 3, path: "r.bin") {
                _ = tok.decode(tok.encode("hello, wörld"))
            }
        }
    }

    func testLlama2cMissingFile() {
        XCTAssertThrowsError(try Llama2cTokenizer(path: "/nonexistent/tokenizer.bin", vocabularySize: 512)) { error in
            guard case TokenizerError.unreadable(let path, _)? = error as? TokenizerError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "/nonexistent/tokenizer.bin")
        }
    }

    // MARK: tokenizer.json

    /// A small valid byte-level tokenizer.json to corrupt piece by piece.
    private func json(vocab: String? = nil, merges: String = #"["a b"]"#, modelType: String = "BPE", preTokenizer: String? = nil, decoder: String = #"{"type": "ByteLevel"}"#, extra: String = "") -> Data {
        var bytes: [String] = []
        for b in 0..<256 {
            if let s = Unicode.Scalar(ByteLevel.scalarForByte[b]) { bytes.append("\(JSONWriter.quoted(String(Character(s)))): \(b)") }
        }
        let v = vocab ?? "{" + bytes.joined(separator: ", ") + #", "ab": 256}"#
        let pre = preTokenizer ?? #"{"type": "ByteLevel", "add_prefix_space": false, "use_regex": true}"#
        return Data("""
            {"added_tokens": [{"id": 257, "content": "<|end|>", "special": true}], \(extra)
             "pre_tokenizer": \(pre), "decoder": \(decoder), "post_processor": null,
             "model": {"type": "\(modelType)", "vocab": \(v), "merges": \(merges)}}
            """.utf8)
    }

    func testJSONGoodMinimalFile() throws {
        let tok = try BPETokenizer(json: json(), path: "t.json")
        XCTAssertEqual(tok.vocabularySize, 258)
        XCTAssertEqual(tok.encode("abc <|end|>", addSpecialTokens: true, parseSpecialTokens: true), [256, 0x63, 0x20, 257])
        XCTAssertEqual(tok.encode("abc <|end|>", addSpecialTokens: true, parseSpecialTokens: false).last, 0x3E)
        XCTAssertEqual(tok.eosTokenIDs, [257])
        XCTAssertEqual(tok.decode([256, 257]), "ab<|end|>")
    }

    func testJSONErrors() {
        let path = "bad/tokenizer.json"
        func check(_ data: Data, field: String? = nil, line: UInt = #line) {
            assertMalformed(try BPETokenizer(json: data, path: path), path: path, field: field, line: line)
        }
        check(Data("not json at all".utf8), field: "(file)")
        check(Data("[1, 2, 3]".utf8), field: "(file)")
        check(Data(#"{"model": {"type": "BPE", "merges": []}}"#.utf8), field: "model.vocab")
        check(Data(#"{"model": {"type": "BPE", "vocab": [1, 2], "merges": []}}"#.utf8), field: "model.vocab")
        check(Data(#"{"added_tokens": []}"#.utf8), field: "model")
        check(json(merges: #"["a zz"]"#), field: "model.merges[0]")
        check(json(merges: #"["a"]"#), field: "model.merges[0]")
        check(json(merges: #"[["a", "b", "c"]]"#), field: "model.merges[0]")
        check(json(merges: #"["a b", "b c"]"#), field: "model.merges[1]")  // "bc" not in vocab
        check(json(vocab: #"{"a": -1}"#), field: #"model.vocab["a"]"#)
        check(json(vocab: #"{"a": 1.5}"#), field: #"model.vocab["a"]"#)
        check(json(vocab: #"{"a": "x"}"#), field: #"model.vocab["a"]"#)
        check(json(vocab: #"{"a": 99999999999}"#), field: #"model.vocab["a"]"#)
        check(json(vocab: #"{"a": 4000000, "b": 1, "ab": 2}"#), field: "model.vocab")
        check(json(extra: #""normalizer": 5,"#), field: "normalizer")
    }

    func testJSONUnsupported() {
        let path = "bad/tokenizer.json"
        func check(_ data: Data, mentions: String, line: UInt = #line) {
            XCTAssertThrowsError(try BPETokenizer(json: data, path: path), line: line) { error in
                guard case TokenizerError.unsupported(let p, let feature)? = error as? TokenizerError else {
                    return XCTFail("expected unsupported, got \(error)", line: line)
                }
                XCTAssertEqual(p, path, line: line)
                XCTAssertTrue(feature.contains(mentions), "\(feature)", line: line)
            }
        }
        check(json(modelType: "Unigram"), mentions: "Unigram")
        check(json(modelType: "WordPiece"), mentions: "WordPiece")
        check(json(preTokenizer: #"{"type": "Sequence", "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated"}, {"type": "ByteLevel", "use_regex": false}]}"#), mentions: #"\w+"#)
        check(json(preTokenizer: #"{"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated"}"#), mentions: "literal")
        check(json(preTokenizer: #"{"type": "Metaspace"}"#), mentions: "Metaspace")
        check(json(preTokenizer: #"{"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Digits"}]}"#), mentions: "after ByteLevel")
        check(json(preTokenizer: #"{"type": "Sequence", "pretokenizers": [{"type": "Digits"}]}"#), mentions: "ByteLevel")
        check(json(extra: #""normalizer": {"type": "NFC"},"#), mentions: "NFC")
        check(json(decoder: #"{"type": "WordPiece"}"#), mentions: "WordPiece")
        check(json(decoder: "null"), mentions: "decoder")
    }

    func testJSONMissingFileAndConfig() throws {
        XCTAssertThrowsError(try BPETokenizer(path: "/nonexistent/tokenizer.json")) { error in
            guard case TokenizerError.unreadable(let path, _)? = error as? TokenizerError else { return XCTFail("\(error)") }
            XCTAssertEqual(path, "/nonexistent/tokenizer.json")
        }
        assertMalformed(try TokenizerConfig(data: Data("{,}".utf8), path: "c.json"), path: "c.json", field: "(file)")
        assertMalformed(try TokenizerConfig(data: Data(#"{"add_bos_token": "yes"}"#.utf8), path: "c.json"), path: "c.json", field: "add_bos_token")
        assertMalformed(try TokenizerConfig(data: Data(#"{"bos_token": 5}"#.utf8), path: "c.json"), path: "c.json", field: "bos_token")
        let config = try TokenizerConfig(data: Data(#"{"bos_token": {"content": "<s>", "lstrip": false}, "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]}"#.utf8), path: "c.json")
        XCTAssertEqual(config.bosToken, "<s>")
        XCTAssertEqual(config.chatTemplate, "D")
    }

    func testJSONRandomCorruptionNeverTraps() throws {
        let good = json()
        var rng = SeededGenerator(for: "BadInputTests.testJSONRandomCorruptionNeverTraps")
        for _ in 0..<200 {
            var bytes = [UInt8](good)
            for _ in 0..<Int.random(in: 1...5, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            if Bool.random(using: &rng) { bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &rng))) }
            if let tok = try? BPETokenizer(json: Data(bytes), path: "r.json") {
                _ = tok.decode(tok.encode("ab abc <|end|> x", addSpecialTokens: true, parseSpecialTokens: true))
            }
        }
    }

    /// Arbitrary text, including lone surrogates' replacement and control characters, encodes
    /// and decodes without trapping and round-trips through the byte-level vocabulary.
    func testArbitraryTextRoundTrips() throws {
        let tok = try BPETokenizer(json: json(), path: "t.json")
        var rng = SeededGenerator(for: "BadInputTests.testArbitraryTextRoundTrips")
        for _ in 0..<200 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0..<40, using: &rng) {
                let v = UInt32.random(in: 0..<0x30000, using: &rng)
                if let s = Unicode.Scalar(v) { scalars.append(s) }
            }
            let text = String(scalars)
            XCTAssertEqual(tok.decode(tok.encode(text, addSpecialTokens: false, parseSpecialTokens: false)), text)
        }
        // Invalid UTF-8 in a decoded id sequence becomes U+FFFD.
        XCTAssertEqual(tok.decode([0xC3]), "\u{FFFD}")
        XCTAssertEqual(tok.decode([0xFF, 0x41]), "\u{FFFD}A")
    }
}
