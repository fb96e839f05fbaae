import QBSupport
import Foundation
import QBFormats
import XCTest

@testable import QBText

/// Malformed tiktoken, SentencePiece, GGUF and SentencePiece-style tokenizer.json files give
/// typed errors naming the file and what is wrong; hostile text and ids never trap.
final class BadTokenizerFileTests: XCTestCase {
    private func assertError(
        _ body: @autoclosure () throws -> Any, path: String, field: String? = nil, mentions: String? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let e = error as? TokenizerError else { return XCTFail("untyped error \(error)", file: file, line: line) }
            XCTAssertTrue(e.description.hasPrefix(path), e.description, file: file, line: line)
            if let field {
                guard case .malformed(_, let f, _) = e else { return XCTFail("expected malformed, got \(e)", file: file, line: line) }
                XCTAssertEqual(f, field, e.description, file: file, line: line)
            }
            if let mentions { XCTAssertTrue(e.description.contains(mentions), e.description, file: file, line: line) }
        }
    }

    // MARK: tiktoken ranks

    /// A valid rank file: the 256 bytes, then "ab" and "abc".
    private func ranks(extra: [String] = []) -> String {
        var lines = (0..<256).map { "\(Data([UInt8($0)]).base64EncodedString()) \($0)" }
        lines.append("\(Data("ab".utf8).base64EncodedString()) 256")
        lines.append("\(Data("abc".utf8).base64EncodedString()) 257")
        return (lines + extra).joined(separator: "\n") + "\n"
    }

    func testTiktokenGoodMinimalFile() throws {
        let tok = try Tiktoken.llama3(data: Data(ranks().utf8), path: "r.model")
        XCTAssertEqual(tok.vocabularySize, 258 + 256)
        XCTAssertEqual(tok.bosTokenID, 258)
        XCTAssertEqual(tok.encode("abcab", addSpecialTokens: false, parseSpecialTokens: false), [257, 256])
        XCTAssertEqual(tok.encode("<|eot_id|>", addSpecialTokens: false, parseSpecialTokens: true), [258 + 9])
        XCTAssertEqual(tok.decode([258, 257]), "<|begin_of_text|>abc")
        XCTAssertTrue(TokenizerFactory.detect(Data(ranks().utf8)) == .tiktoken)
    }

    func testTiktokenErrors() {
        let path = "bad/tokenizer.model"
        func check(_ text: String, field: String, mentions: String, line: UInt = #line) {
            assertError(try Tiktoken.llama3(data: Data(text.utf8), path: path), path: path, field: field, mentions: mentions, line: line)
        }
        check("", field: "(file)", mentions: "no ranks")
        check(ranks(extra: ["YWJjZA== x"]), field: "line 259", mentions: "rank")
        check(ranks(extra: ["YWJj!A== 258"]), field: "line 259", mentions: "base64")
        check(ranks(extra: ["YWJjZA=="]), field: "line 259", mentions: "base64 rank")
        check(ranks(extra: ["YWJjZA== 257"]), field: "line 259", mentions: "twice")
        check(ranks(extra: ["YWJj 300"]), field: "line 259", mentions: "repeats")
        check(ranks(extra: ["YWJjZA== 260"]), field: "(file)", mentions: "rank 258 is missing")
        check(ranks(extra: ["YWJjZA== 99999999"]), field: "line 259", mentions: "beyond")
        check(" 0\n", field: "line 1", mentions: "empty token")
        // Without every single byte, tiktoken's merge has nothing to start from.
        let noBytes = (1..<256).map { "\(Data([UInt8($0)]).base64EncodedString()) \($0 - 1)" }.joined(separator: "\n")
        check(noBytes, field: "(file)", mentions: "byte 0x0")
        assertError(try Tiktoken.llama3(contentsOf: URL(fileURLWithPath: "/nonexistent/tokenizer.model")), path: "/nonexistent/tokenizer.model")
    }

    func testTiktokenRandomCorruptionNeverTraps() {
        let good = [UInt8](ranks().utf8)
        var rng = SplitMix64(seed: 3)
        for _ in 0..<100 {
            var bytes = good
            for _ in 0..<Int(1 + rng.next() % 4) { bytes[Int(rng.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            if let tok = try? Tiktoken.llama3(data: Data(bytes), path: "r.model") {
                _ = tok.decode(tok.encode("abc ab <|eot_id|>", addSpecialTokens: true, parseSpecialTokens: true))
            }
        }
    }

    // MARK: SentencePiece models

    /// Protocol-buffer bytes for a SentencePiece model.
    private func proto(pieces: [(String, Float, Int)], modelType: Int = 2, normalizer: String = "identity", removeExtra: Bool = false) -> Data {
        func varint(_ v: UInt64) -> [UInt8] {
            var v = v, out: [UInt8] = []
            repeat {
                var b = UInt8(v & 0x7F)
                v >>= 7
                if v != 0 { b |= 0x80 }
                out.append(b)
            } while v != 0
            return out
        }
        func field(_ n: UInt64, _ bytes: [UInt8]) -> [UInt8] { varint(n << 3 | 2) + varint(UInt64(bytes.count)) + bytes }
        var out: [UInt8] = []
        for (piece, score, type) in pieces {
            var m = field(1, Array(piece.utf8))
            m += varint(2 << 3 | 5) + withUnsafeBytes(of: score.bitPattern.littleEndian, Array.init)
            m += varint(3 << 3) + varint(UInt64(type))
            out += field(1, m)
        }
        out += field(2, varint(3 << 3) + varint(UInt64(modelType)))
        out += field(3, field(1, Array(normalizer.utf8)) + varint(4 << 3) + varint(removeExtra ? 1 : 0))
        return Data(out)
    }

    private let smallPieces: [(String, Float, Int)] = [("<unk>", 0, 2), ("<s>", 0, 3), ("</s>", 0, 3), ("▁", -1, 1), ("a", -2, 1), ("b", -3, 1), ("▁a", -1.5, 1), ("ab", -0.5, 1)]

    func testSentencePieceGoodMinimalFile() throws {
        let data = proto(pieces: smallPieces)
        XCTAssertEqual(TokenizerFactory.detect(data), .sentencePiece)
        let tok = try SentencePieceModelFile.tokenizer(data: data, path: "s.model")
        // "▁ab": "ab" (-0.5) outscores "▁a" (-1.5); "é" has no piece and no byte pieces: unknown.
        XCTAssertEqual(tok.encode("ab", addSpecialTokens: false, parseSpecialTokens: false), [3, 7])
        XCTAssertEqual(tok.encode("é", addSpecialTokens: true, parseSpecialTokens: false), [1, 3, 0])
        XCTAssertEqual(tok.decode([1, 3, 7], skipSpecialTokens: true), "ab")
    }

    func testSentencePieceErrors() {
        let path = "bad/tokenizer.model"
        assertError(try SentencePieceModelFile.tokenizer(data: proto(pieces: smallPieces, modelType: 1), path: path), path: path, mentions: "Unigram")
        assertError(try SentencePieceModelFile.tokenizer(data: proto(pieces: smallPieces, normalizer: "nmt_nfkc", removeExtra: true), path: path), path: path, mentions: "normalization")
        assertError(try SentencePieceModelFile.tokenizer(data: proto(pieces: []), path: path), path: path, field: "pieces")
        assertError(try SentencePieceModelFile.tokenizer(data: proto(pieces: [("a", 0, 9)]), path: path), path: path, field: "pieces[0].type")
        let good = proto(pieces: smallPieces)
        for cut in stride(from: 1, to: good.count, by: 3) {
            if let tok = try? SentencePieceModelFile.tokenizer(data: good.prefix(cut), path: path) {
                _ = tok.decode(tok.encode("a b", addSpecialTokens: true, parseSpecialTokens: true))
            }
        }
        assertError(try SentencePieceModelFile.tokenizer(data: good.prefix(5), path: path), path: path)
    }

    // MARK: GGUF vocabularies

    private func gguf(_ meta: [(String, GGUFValue)], in dir: URL) throws -> String {
        var w = GGUFWriter()
        w.add("general.architecture", .string("llama"))
        for (k, v) in meta { w.add(k, v) }
        let url = dir.appendingPathComponent("v\(UUID().uuidString).gguf")
        try w.write(to: url)
        return url.path
    }

    func testGGUFErrors() throws {
        let dir = try TestSupport.temporaryDirectory(self)
        let tokens: GGUFValue = .array(.string, ["<unk>", "<s>", "</s>", "▁", "a"].map { .string($0) })
        func check(_ meta: [(String, GGUFValue)], field: String? = nil, mentions: String? = nil, line: UInt = #line) throws {
            let path = try gguf(meta, in: dir)
            assertError(try GGUFTokenizer.tokenizer(path: path), path: path, field: field, mentions: mentions, line: line)
            assertError(try TokenizerFactory.open(path), path: path, field: field, mentions: mentions, line: line)
        }
        try check([], field: "tokenizer.ggml.model")
        try check([("tokenizer.ggml.model", .string("bert")), ("tokenizer.ggml.tokens", tokens)], mentions: "bert")
        try check([("tokenizer.ggml.model", .string("llama"))], field: "tokenizer.ggml.tokens")
        try check([("tokenizer.ggml.model", .string("llama")), ("tokenizer.ggml.tokens", .array(.int32, [.int32(1)]))], field: "tokenizer.ggml.tokens[0]")
        try check([("tokenizer.ggml.model", .string("llama")), ("tokenizer.ggml.tokens", tokens), ("tokenizer.ggml.scores", .array(.float32, [.float32(0)]))], field: "tokenizer.ggml.scores")
        try check([("tokenizer.ggml.model", .string("llama")), ("tokenizer.ggml.tokens", tokens), ("tokenizer.ggml.bos_token_id", .uint32(99))], field: "tokenizer.ggml.bos_token_id")
        try check([("tokenizer.ggml.model", .string("gpt2")), ("tokenizer.ggml.tokens", tokens), ("tokenizer.ggml.pre", .string("mystery"))], mentions: "mystery")
        try check([("tokenizer.ggml.model", .string("gpt2")), ("tokenizer.ggml.tokens", tokens), ("tokenizer.ggml.merges", .array(.string, [.string("a z")]))], field: "tokenizer.ggml.merges[0]")
        try check([("tokenizer.ggml.model", .string("gpt2")), ("tokenizer.ggml.tokens", tokens), ("tokenizer.ggml.merges", .array(.string, [.string("a")]))], field: "tokenizer.ggml.merges[0]")
        // Not a GGUF file at all, and a truncated one.
        let bad = dir.appendingPathComponent("t.gguf")
        try Data("GGUF\u{3}\u{0}".utf8).write(to: bad)
        assertError(try TokenizerFactory.open(bad.path), path: bad.path, field: "(GGUF)")
        let real = try TestSupport.fixture("llamacpp-vocab-tests/ggml-vocab-llama-spm.gguf")
        try Data(contentsOf: real).prefix(100_000).write(to: bad)
        assertError(try TokenizerFactory.open(bad.path), path: bad.path, field: "(GGUF)")
    }

    // MARK: SentencePiece-style tokenizer.json

    func testSentencePieceJSONUnsupported() throws {
        let url = try TestSupport.fixture("llama2-tokenizer/tokenizer.json")
        let original = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        func variant(_ change: (inout [String: Any]) -> Void) throws -> Data {
            var o = original
            change(&o)
            return try JSONSerialization.data(withJSONObject: o)
        }
        let path = "bad/tokenizer.json"
        func check(_ data: Data, mentions: String, line: UInt = #line) {
            assertError(try BPETokenizer(json: data, path: path), path: path, mentions: mentions, line: line)
        }
        check(try variant { $0["decoder"] = ["type": "Metaspace", "replacement": "▁"] }, mentions: "Metaspace")
        check(try variant { $0["normalizer"] = ["type": "NFKC"] }, mentions: "NFKC")
        check(try variant { $0["normalizer"] = ["type": "Replace", "pattern": ["Regex": " +"], "content": "▁"] }, mentions: "regex")
        check(try variant { $0["decoder"] = ["type": "Sequence", "decoders": [["type": "Strip", "content": " ", "start": 1, "stop": 0], ["type": "Fuse"]]] }, mentions: "Strip")
        check(try variant { $0["pre_tokenizer"] = ["type": "ByteLevel"] }, mentions: "ByteLevel")
        check(try variant { $0["pre_tokenizer"] = ["type": "Metaspace", "replacement": "_"] }, mentions: "replacement")
    }

    /// #18.5: 34 chained doubling Replace steps would grow "a" to 16 GB; refused at load.
    func testNormalizerGrowthIsBounded() throws {
        let url = try TestSupport.fixture("llama2-tokenizer/tokenizer.json")
        var o = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        o["normalizer"] = ["type": "Sequence", "normalizers": Array(repeating: ["type": "Replace", "pattern": ["String": "a"], "content": "aa"], count: 34)]
        let path = "bad/tokenizer.json"
        assertError(try BPETokenizer(json: try JSONSerialization.data(withJSONObject: o), path: path), path: path, mentions: "normalizer")
        // The real export (Prepend "▁", Replace " " with "▁": three times) still loads.
        XCTAssertNoThrow(try BPETokenizer(json: Data(contentsOf: url), path: url.path))
    }

    // MARK: Hostile text and ids

    /// Invalid UTF-8 (as a decoder of raw input repairs it), lone special-token fragments
    /// and unknown special tokens, and ids out of range: no trap, and text round-trips.
    func testHostileTextAndIdsNeverTrap() throws {
        let tokenizers: [any Tokenizer] = [
            try FixtureTokenizers.llama3(), try FixtureTokenizers.llama2JSON(), try FixtureTokenizers.llama2GGUF(),
            try FixtureTokenizers.llama2Model(), try FixtureTokenizers.smolLM2(),
        ]
        let texts = [
            String(decoding: [0xFF, 0xC3, 0x28, 0xE2, 0x82, 0xED, 0xA0, 0x80, 0xF4, 0x90, 0x80, 0x80, 0x41], as: UTF8.self),
            "<|not_a_special_token|> <|reserved_special_token_999|> <|begin_of_text <s <unk </s",
            "\u{0}\u{0}\u{0}", String(repeating: "\u{301}", count: 50), String(repeating: " ", count: 5000),
            String(repeating: "9", count: 3000), String(repeating: "😀", count: 500),
        ]
        for tok in tokenizers {
            for text in texts {
                for parse in [false, true] {
                    let ids = tok.encode(text, addSpecialTokens: true, parseSpecialTokens: parse)
                    if !parse { XCTAssertEqual(tok.decode(ids, skipSpecialTokens: true), text, "\(type(of: tok))") }
                }
            }
            let n = TokenID(tok.vocabularySize)
            _ = tok.decode([-1, .min, .max, n, n + 1, 0, 1, 2])
            XCTAssertEqual(tok.bytes(for: -5, after: .max), [])
            XCTAssertNil(tok.tokenText(for: n))
            XCTAssertFalse(tok.isSpecial(.max))
        }
    }
}
