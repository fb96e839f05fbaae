import QBSupport
import Foundation
import XCTest

@testable import QBText

/// Seeded, deterministic texts built to stress tokenizers: emoji with joiners, modifiers
/// and flags, combining marks, CJK, right-to-left scripts with their digits and marks,
/// long whitespace and digit runs, mixed scripts, contractions, special-token markup.
enum UnicodeTextGenerator {
    /// Scalars newer than this may be classified differently by the references' Unicode
    /// tables (Oniguruma, Rust's regex) than by Swift's; they are left out of random picks.
    static func isStable(_ s: Unicode.Scalar) -> Bool {
        guard let age = s.properties.age else { return true }  // unassigned: "other" everywhere
        return age.major < 14 || (age.major == 14 && age.minor == 0)
    }

    static func scalar(in range: ClosedRange<UInt32>, _ rng: inout SplitMix64) -> String {
        for _ in 0..<16 {
            let v = range.lowerBound + UInt32(rng.next() % UInt64(range.count))
            if let s = Unicode.Scalar(v), isStable(s) { return String(s) }
        }
        return "x"
    }

    static func pick<T>(_ xs: [T], _ rng: inout SplitMix64) -> T { xs[Int(rng.next() % UInt64(xs.count))] }

    static func fragment(_ rng: inout SplitMix64) -> String {
        func repeated(_ s: [String], _ max: UInt64, _ rng: inout SplitMix64) -> String {
            (0...(rng.next() % max)).map { _ in pick(s, &rng) }.joined()
        }
        switch rng.next() % 16 {
        case 0:  // emoji: ZWJ sequences, skin tones, flags, keycaps, variation selectors
            return pick([
                "👨\u{200D}👩\u{200D}👧\u{200D}👦", "🏳️\u{200D}🌈", "👩🏽\u{200D}💻", "🧑🏿\u{200D}🤝\u{200D}🧑🏻", "👍🏽", "✊🏿",
                "🇫🇷", "🇯🇵🇺🇸", "1️⃣", "#️⃣", "❤️", "☺︎", "😀😃😄", "🫠", "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}",
            ], &rng)
        case 1:  // combining marks on Latin and other bases
            let base = pick(["a", "e", "o", "n", "x", "Z", "ı", "α", "и", " ", "1", "'"], &rng)
            return base + repeated(["\u{301}", "\u{300}", "\u{308}", "\u{303}", "\u{327}", "\u{20DD}", "\u{1AB0}", "\u{36F}", "\u{489}"], 4, &rng)
        case 2:  // CJK ideographs, kana, hangul, an astral ideograph
            return repeated(["中", "文", "日本語", "漢字", "カタカナ", "ひらがな", "한국어", "텍스트", "𠀀", "𪚥", "〇", "、", "。"], 6, &rng)
                + scalar(in: 0x4E00...0x9FFF, &rng) + scalar(in: 0xAC00...0xD7A3, &rng)
        case 3:  // right-to-left scripts, their digits and direction marks
            return repeated(["مرحبا", "بالعالم", "שלום", "עולם", "١٢٣", "۴۵۶", "\u{200F}", "\u{200E}", "\u{202B}", "\u{202C}", "ـ", "ّ", " "], 6, &rng)
        case 4:  // long whitespace runs
            return repeated([" ", "  ", "    ", "\t", "\n", "\r\n", "\r", "\u{00A0}", "\u{3000}", "\u{2009}", "\u{2028}", "\u{0085}", "\u{000B}"], 30, &rng)
        case 5:  // long digit runs, several numeral systems
            return repeated(["0", "1", "23", "456", "7890", "１２", "٣", "४५", "๓", "½", "²", "Ⅻ"], 30, &rng)
        case 6:  // mixed scripts in one word
            return repeated(["Hello", "мир", "κόσμος", "世界", "दुनिया", "โลก", "سلام", "Welt", "ſ", "İ", "ß", "ﬁ"], 4, &rng)
        case 7:  // contractions and apostrophes
            return pick(["'s", "'S", "'ll", "'LL", "'re", "'Ve", "'d", "'m", "'t", "n't", "'x", "''", "’s", "'ſ"], &rng)
        case 8:  // punctuation runs
            return repeated([".", ",", "!", "?", "...", "—", "-", "_", "(", ")", "\"", "«", "»", "¿", "¡", "…", "·", "•", "/", "\\"], 8, &rng)
        case 9:  // special-token markup, real and near misses
            return pick(["<s>", "</s>", "<unk>", "<|begin_of_text|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|reserved_special_token_99|>", "<|", "|>", "<s", "s>"], &rng)
        case 10:  // any stable BMP scalar
            return scalar(in: 0x20...0xFFFD, &rng)
        case 11:  // any stable astral scalar
            return scalar(in: 0x10000...0x2FFFF, &rng)
        case 12:  // Indic and Southeast Asian scripts with their marks
            return repeated(["हिन्दी", "क्षत्रिय", "ไทย", "ภาษา", "ខ្មែរ", "မြန်မာ", "தமிழ்", "ශ්‍රී"], 3, &rng)
        case 13:  // control characters and invisibles
            return pick(["\u{0}", "\u{1}", "\u{7F}", "\u{200B}", "\u{FEFF}", "\u{200D}", "\u{2060}", "\u{FE0F}", "\u{E000}", "\u{F0000}"], &rng)
        default:  // plain words
            return pick([" the", " quick", "brown", " fox", "Jumps", " OVER", " a", "lazy", "dog", " ", "x"], &rng)
        }
    }

    static func texts(count: Int, seed: UInt64) -> [String] {
        var rng = SplitMix64(seed: seed)
        return (0..<count).map { _ in
            (0..<Int(1 + rng.next() % 12)).map { _ in fragment(&rng) }.joined()
        }
    }
}

/// The generated texts through every tokenizer, against the Python references: `tiktoken`
/// (Llama 3), `tokenizers` (SmolLM2, Llama 2) and `sentencepiece` (Llama 2's model, and the
/// llama.cpp-style GGUF path, which must agree with it).
final class UnicodePropertyTests: XCTestCase {
    static let texts = UnicodeTextGenerator.texts(count: 600, seed: 2024)

    func testGeneratorIsDeterministic() {
        XCTAssertEqual(UnicodeTextGenerator.texts(count: 50, seed: 9), UnicodeTextGenerator.texts(count: 50, seed: 9))
        XCTAssertNotEqual(UnicodeTextGenerator.texts(count: 50, seed: 9), UnicodeTextGenerator.texts(count: 50, seed: 10))
    }

    func testLlama3MatchesTiktoken() throws {
        let tok = try FixtureTokenizers.llama3()
        let model = try TestSupport.fixture("llama3-tokenizer/tokenizer.model")
        let texts = Self.texts + TestSupport.variedTexts
        let a = try OracleComparison.tiktoken(tok, model, texts, parseSpecialTokens: false)
        let b = try OracleComparison.tiktoken(tok, model, texts, parseSpecialTokens: true)
        XCTAssertEqual(a + b, 2 * texts.count)
    }

    /// A whole book-length text (the benchmark's), id for id.
    func testLlama3MatchesTiktokenOnTinyShakespeare() throws {
        let tok = try FixtureTokenizers.llama3()
        let model = try TestSupport.fixture("llama3-tokenizer/tokenizer.model")
        let file = try TestSupport.fixture("eval-text/tinyshakespeare.txt")
        let response = try TestSupport.oracle(["mode": "encode_file", "model": model.path, "file": file.path], script: "tiktoken_oracle.py")
        let expected = (response["ids"] as? [Any] ?? []).compactMap { ($0 as? NSNumber).map { TokenID(truncating: $0) } }
        let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        let ids = tok.encode(text, addSpecialTokens: false, parseSpecialTokens: false)
        XCTAssertEqual(ids.count, expected.count)
        if let i = zip(ids, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
            XCTFail("first difference at id \(i)")
        }
        XCTAssertEqual(tok.decode(ids), text)
    }

    func testSmolLM2MatchesTokenizers() throws {
        let url = try TestSupport.fixture("smollm2-tokenizer/tokenizer.json")
        let tok = try FixtureTokenizers.smolLM2()
        try OracleComparison.hf(tok, url, Self.texts, addSpecialTokens: true, parseSpecialTokens: true)
        try OracleComparison.hf(tok, url, Self.texts, addSpecialTokens: false, parseSpecialTokens: false)
        // The GGUF copy of the vocabulary gives the same ids.
        let gguf = try FixtureTokenizers.smolLM2GGUF()
        for text in Self.texts {
            for parse in [false, true] {
                XCTAssertEqual(
                    gguf.encode(text, addSpecialTokens: true, parseSpecialTokens: parse),
                    tok.encode(text, addSpecialTokens: true, parseSpecialTokens: parse), text.debugDescription)
            }
        }
    }

    func testLlama2JSONMatchesTokenizers() throws {
        let url = try TestSupport.fixture("llama2-tokenizer/tokenizer.json")
        let tok = try FixtureTokenizers.llama2JSON()
        try OracleComparison.hf(tok, url, Self.texts, addSpecialTokens: true, parseSpecialTokens: true)
        try OracleComparison.hf(tok, url, Self.texts, addSpecialTokens: false, parseSpecialTokens: false)
    }

    func testLlama2ModelAndGGUFMatchSentencePiece() throws {
        let model = try TestSupport.fixture("llama2-tokenizer/tokenizer.model")
        try OracleComparison.sentencePiece(try FixtureTokenizers.llama2Model(), model, Self.texts)
        try OracleComparison.sentencePiece(try FixtureTokenizers.llama2GGUF(), model, Self.texts)
    }

    /// Without special-token markup, the three Llama 2 readers agree with each other.
    func testLlama2ReadersAgree() throws {
        let json = try FixtureTokenizers.llama2JSON()
        let gguf = try FixtureTokenizers.llama2GGUF()
        let model = try FixtureTokenizers.llama2Model()
        for text in Self.texts {
            let ids = json.encode(text, addSpecialTokens: true, parseSpecialTokens: false)
            XCTAssertEqual(gguf.encode(text, addSpecialTokens: true, parseSpecialTokens: false), ids, text.debugDescription)
            XCTAssertEqual(model.encode(text, addSpecialTokens: true, parseSpecialTokens: false), ids, text.debugDescription)
            XCTAssertEqual(json.decode(ids, skipSpecialTokens: true), text)
            XCTAssertEqual(gguf.decode(ids, skipSpecialTokens: true), text)
        }
    }
}
