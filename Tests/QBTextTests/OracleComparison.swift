import Foundation
import XCTest

@testable import QBText

/// Id-for-id comparisons of a tokenizer with a Python reference implementation.
enum OracleComparison {
    /// Against the `tokenizers` package on a tokenizer.json: ids, and our decode of its ids
    /// against its decode (`skip_special_tokens=False`). Returns how many texts matched.
    @discardableResult
    static func hf(
        _ tok: any Tokenizer, _ url: URL, _ texts: [String], addSpecialTokens: Bool, parseSpecialTokens: Bool,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> Int {
        let response = try TestSupport.oracle([
            "mode": "encode", "tokenizer": url.path, "texts": texts,
            "add_special_tokens": addSpecialTokens, "parse_special_tokens": parseSpecialTokens,
        ])
        return compare(
            tok, texts, response, "tokenizers \(url.lastPathComponent) add=\(addSpecialTokens) parse=\(parseSpecialTokens)",
            addSpecialTokens: addSpecialTokens, parseSpecialTokens: parseSpecialTokens, file: file, line: line)
    }

    /// Against `tiktoken` with the Llama 3 ranks, pattern and special tokens (no BOS: tiktoken
    /// adds none).
    @discardableResult
    static func tiktoken(
        _ tok: any Tokenizer, _ model: URL, _ texts: [String], parseSpecialTokens: Bool,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> Int {
        let response = try TestSupport.oracle(
            ["mode": "encode", "model": model.path, "texts": texts, "parse_special_tokens": parseSpecialTokens],
            script: "tiktoken_oracle.py")
        return compare(
            tok, texts, response, "tiktoken parse=\(parseSpecialTokens)",
            addSpecialTokens: false, parseSpecialTokens: parseSpecialTokens, file: file, line: line)
    }

    /// Against the `sentencepiece` package on a SentencePiece tokenizer.model (no BOS,
    /// special-token text as plain text).
    @discardableResult
    static func sentencePiece(
        _ tok: any Tokenizer, _ model: URL, _ texts: [String], file: StaticString = #filePath, line: UInt = #line
    ) throws -> Int {
        let response = try TestSupport.oracle(["mode": "encode", "model": model.path, "texts": texts], script: "spm_oracle.py")
        return compare(
            tok, texts, response, "sentencepiece", addSpecialTokens: false, parseSpecialTokens: false,
            skipSpecialInDecode: true, file: file, line: line)
    }

    private static func compare(
        _ tok: any Tokenizer, _ texts: [String], _ response: [String: Any], _ label: String,
        addSpecialTokens: Bool, parseSpecialTokens: Bool, skipSpecialInDecode: Bool = false,
        file: StaticString, line: UInt
    ) -> Int {
        let expected = TestSupport.ids(response["ids"])
        let decoded = response["decoded"] as? [String] ?? []
        XCTAssertEqual(expected.count, texts.count, "\(label): oracle answered \(expected.count) of \(texts.count)", file: file, line: line)
        var same = 0
        for (i, text) in texts.enumerated() where i < expected.count {
            let ids = tok.encode(text, addSpecialTokens: addSpecialTokens, parseSpecialTokens: parseSpecialTokens)
            XCTAssertEqual(ids, expected[i], "\(label): ids for \(text.debugDescription)", file: file, line: line)
            if ids == expected[i] { same += 1 }
            if i < decoded.count {
                XCTAssertEqual(
                    tok.decode(expected[i], skipSpecialTokens: skipSpecialInDecode), decoded[i],
                    "\(label): decode of \(text.debugDescription)", file: file, line: line)
            }
        }
        print("\(label): \(same)/\(texts.count) identical")
        return same
    }
}
