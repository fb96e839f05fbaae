import QBSupport
import Foundation
import XCTest

@testable import QBText

/// The streaming detokenizer emits exactly the full decode, one whole piece of text at a
/// time, for every fixture text, every tokenizer, and adversarial id sequences.
final class StreamingDetokenizerTests: XCTestCase {
    static let tokenizers: [(String, @Sendable () throws -> any Tokenizer)] =
        ExactnessTests.llama3 + ExactnessTests.llama2Trio + ExactnessTests.smolLM2 + [
            ("Llama 2 tokenizer.bin (llama2.c)", { @Sendable () throws -> any Tokenizer in
                try Llama2cTokenizer(contentsOf: try TestSupport.fixture("llama2-tokenizer/tokenizer.bin"), vocabularySize: 32000)
            })
        ]

    /// Streams `ids` and checks the chunks against the full decode.
    private func assertStreams(
        _ tok: any Tokenizer, _ ids: [TokenID], skipSpecialTokens: Bool, _ label: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        var stream = StreamingDetokenizer(tokenizer: tok, skipSpecialTokens: skipSpecialTokens)
        var chunks: [String] = []
        for id in ids { chunks.append(stream.push(id)) }
        chunks.append(stream.finish())
        let full = tok.decode(ids, skipSpecialTokens: skipSpecialTokens)
        XCTAssertEqual(chunks.joined(), full, label, file: file, line: line)
        // Chunks are whole text: a replacement character appears in a chunk only as often
        // as the full decode has one.
        let streamed = chunks.reduce(0) { $0 + $1.unicodeScalars.filter { $0 == "\u{FFFD}" }.count }
        XCTAssertEqual(streamed, full.unicodeScalars.filter { $0 == "\u{FFFD}" }.count, label, file: file, line: line)
    }

    func testStreamEqualsFullDecodeForEveryFixtureText() throws {
        let texts = try FixtureVectors.allTexts()
        for (name, make) in Self.tokenizers {
            let tok = try make()
            for text in texts {
                let ids = tok.encode(text, addSpecialTokens: true, parseSpecialTokens: false)
                assertStreams(tok, ids, skipSpecialTokens: true, "\(name): \(text.debugDescription)")
                assertStreams(tok, ids, skipSpecialTokens: false, "\(name) with specials: \(text.debugDescription)")
                // Skipping specials, the stream gives back the text itself.
                var stream = StreamingDetokenizer(tokenizer: tok)
                let streamed = ids.map { stream.push($0) }.joined() + stream.finish()
                XCTAssertEqual(streamed, text, name)
            }
        }
    }

    /// Random id sequences (byte tokens, pieces holding part of a character, special and
    /// unknown ids) are the cases a model can produce and no encoder would.
    func testStreamEqualsFullDecodeForRandomIds() throws {
        var rng = SplitMix64(seed: 7)
        for (name, make) in Self.tokenizers {
            let tok = try make()
            let n = UInt64(tok.vocabularySize)
            // Ids whose pieces are single bytes or partial UTF-8 are the interesting ones.
            let partial = (0..<TokenID(tok.vocabularySize)).filter { id in
                let b = tok.bytes(for: id, after: nil)
                return b.count <= 2 || !UTF8Scan.isValid(b)
            }
            for round in 0..<300 {
                let length = Int(rng.next() % 24)
                let ids: [TokenID] = (0..<length).map { _ in
                    switch rng.next() % 10 {
                    case 0: return TokenID(truncatingIfNeeded: Int64(rng.next() % (n + 10)) - 5)
                    case 1...6 where !partial.isEmpty: return partial[Int(rng.next() % UInt64(partial.count))]
                    default: return TokenID(rng.next() % n)
                    }
                }
                assertStreams(tok, ids, skipSpecialTokens: round % 2 == 0, "\(name): \(ids)")
            }
        }
    }

    /// A character split across byte tokens comes out whole, once, when its last byte
    /// arrives; SentencePiece's space is dropped after BOS and kept after a prompt.
    func testHoldsPartialCharactersAndHandlesLeadingSpace() throws {
        let llama2 = try FixtureTokenizers.llama2JSON()
        // 中 as three byte-fallback tokens, then "▁hello".
        var s = StreamingDetokenizer(tokenizer: llama2)
        XCTAssertEqual(s.push(1), "")
        XCTAssertEqual(s.push(0xE4 + 3), "")
        XCTAssertEqual(s.push(0xB8 + 3), "")
        XCTAssertEqual(s.push(0xAD + 3), "")  // a byte run is judged when it ends
        XCTAssertEqual(s.push(22172), "中 hello")
        XCTAssertEqual(s.finish(), "")
        // After BOS the first piece loses its space; continuing a prompt it keeps it.
        var fresh = StreamingDetokenizer(tokenizer: llama2, context: [1])
        XCTAssertEqual(fresh.push(22172), "hello")
        var continuing = StreamingDetokenizer(tokenizer: llama2, context: llama2.encode("Say"))
        XCTAssertEqual(continuing.push(22172), " hello")
        var afterPrevious = StreamingDetokenizer(tokenizer: llama2, previous: 1)
        XCTAssertEqual(afterPrevious.push(22172), "hello")
        var afterWord = StreamingDetokenizer(tokenizer: llama2, previous: 22172)
        XCTAssertEqual(afterWord.push(3186), " world")
        // An unfinished character at the end becomes U+FFFD, as the full decode has it.
        var cut = StreamingDetokenizer(tokenizer: llama2)
        XCTAssertEqual(cut.push(0xE4 + 3), "")
        XCTAssertEqual(cut.finish(), "\u{FFFD}")

        // Byte-level BPE: an emoji split over pieces is released when complete.
        let llama3 = try FixtureTokenizers.llama3()
        let emoji = llama3.encode("😀", addSpecialTokens: false, parseSpecialTokens: false)
        XCTAssertGreaterThan(emoji.count, 1)
        var b = StreamingDetokenizer(tokenizer: llama3)
        let chunks = emoji.map { b.push($0) }
        XCTAssertEqual(chunks.dropLast().joined(), "")
        XCTAssertEqual(chunks.last, "😀")
        // Special tokens: skipped, or written out.
        var skip = StreamingDetokenizer(tokenizer: llama3)
        XCTAssertEqual(skip.push(128009), "")
        var keep = StreamingDetokenizer(tokenizer: llama3, skipSpecialTokens: false)
        XCTAssertEqual(keep.push(128009), "<|eot_id|>")
    }

    /// A tokenizer from outside the module goes through `bytes(for:after:)`.
    func testForeignTokenizerFallsBackToBytes() {
        struct Bytes: Tokenizer {
            var vocabularySize: Int { 256 }
            var bosTokenID: TokenID? { nil }
            var eosTokenIDs: Set<TokenID> { [] }
            var addsBOS: Bool { false }
            func encode(_ text: String, addSpecialTokens: Bool, parseSpecialTokens: Bool) -> [TokenID] { text.utf8.map { TokenID($0) } }
            func bytes(for id: TokenID, after previous: TokenID?) -> [UInt8] { (0..<256).contains(id) ? [UInt8(id)] : [] }
            func decode(_ ids: [TokenID]) -> String { String(decoding: ids.flatMap { bytes(for: $0, after: nil) }, as: UTF8.self) }
            func isSpecial(_ id: TokenID) -> Bool { false }
        }
        let tok = Bytes()
        let ids = tok.encode("né😀", addSpecialTokens: false, parseSpecialTokens: false)
        var s = StreamingDetokenizer(tokenizer: tok)
        let chunks = ids.map { s.push($0) }
        XCTAssertEqual(chunks, ["n", "", "é", "", "", "", "😀"])
        XCTAssertEqual(tok.decode(ids, skipSpecialTokens: true), "né😀")
        XCTAssertNil(tok.tokenText(for: 1))
        XCTAssertEqual(tok.encode(rendered: "ab"), [0x61, 0x62])
    }
}

/// SplitMix64: a tiny seeded generator, so property tests are deterministic.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
