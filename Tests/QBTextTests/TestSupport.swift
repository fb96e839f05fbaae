import Foundation
import XCTest
import QBTestSupport

@testable import QBText

/// Paths to third-party fixtures and the Python oracle.
enum TestSupport {
    /// The repository root (this file is Tests/QBTextTests/TestSupport.swift).
    static let repoRoot = Fixtures.repository

    /// A fixture under ../shared/fixtures, or an XCTSkip naming what is missing.
    static func fixture(_ relative: String) throws -> URL { try Fixtures.url(relative) }

    static let oracles = repoRoot.appendingPathComponent("Tests/QBTextTests/oracles")

    /// A fresh temporary directory, removed by the test case's teardown block.
    static func temporaryDirectory(_ test: XCTestCase) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("qbtext-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        test.addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url
    }

    /// Whether a missing oracle (python3 or its package) fails the test instead of skipping
    /// it: CI sets QB_REQUIRE_ORACLES=1 so a broken environment cannot pass silently.
    static var oraclesRequired: Bool { Oracle.required }

    /// The error a test fails with when an oracle is required but unavailable.
    struct OracleUnavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// Skips the test, or fails it when oracles are required.
    static func oracleUnavailable(_ message: String) -> Error {
        oraclesRequired ? OracleUnavailable(description: "oracle required (QB_REQUIRE_ORACLES=1) but unavailable: \(message)") : XCTSkip(message)
    }

    /// Runs an oracle script (default: the Hugging Face `tokenizers` one) on `request`;
    /// skips the test when python3 or the package is not available (fails it when
    /// QB_REQUIRE_ORACLES=1). Scripts exit with status 3 when their package is missing.
    static func oracle(_ request: [String: Any], script: String = "hf_oracle.py") throws -> [String: Any] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qbtext-oracle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let requestURL = dir.appendingPathComponent("request.json")
        let responseURL = dir.appendingPathComponent("response.json")
        try JSONSerialization.data(withJSONObject: request).write(to: requestURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", oracles.appendingPathComponent(script).path, requestURL.path, responseURL.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do {
            try process.run()
        } catch {
            throw oracleUnavailable("cannot start python3: \(error)")
        }
        let log = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        switch process.terminationStatus {
        case 0:
            break
        case 127:
            throw oracleUnavailable("python3 not found: \(log)")
        case 3:
            throw oracleUnavailable("Python package for \(script) missing: \(log)")
        default:
            XCTFail("oracle failed (status \(process.terminationStatus)): \(log)")
            throw XCTSkip("oracle failed")
        }
        let data = try Data(contentsOf: responseURL)
        guard let response = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            XCTFail("oracle response is not an object")
            throw XCTSkip("oracle failed")
        }
        return response
    }

    static func ids(_ any: Any?) -> [[TokenID]] {
        guard let lists = any as? [[Any]] else { return [] }
        return lists.map { $0.compactMap { ($0 as? NSNumber).map { TokenID(truncating: $0) } } }
    }

    /// Texts exercising every branch of the split patterns and the BPE merges.
    static let variedTexts: [String] = [
        "",
        " ",
        "a",
        "Hello world",
        "Hello, world! How are you today?",
        "The quick brown fox jumps over the lazy dog.",
        "  leading spaces and trailing spaces   ",
        "multiple     spaces\tand\ttabs\t\tdouble",
        "line one\nline two\n\nline four\r\nwindows\rold mac",
        "trailing newline\n",
        "\n\n\n",
        "   \n   \n  x",
        " \t \n\t x \t",
        "numbers 1 12 123 1234 12345 123456 1234567",
        "3.14159 and 1,000,000 and -42 and 0x1F and 1e10",
        "version 2.0.1-beta+build.7",
        "I'm you're he's we've they'll it'd I'M YOU'RE HE'S WE'VE THEY'LL IT'D",
        "don't won't can't shouldn't 'tis 'twas rock'n'roll",
        "'s 't 're 've 'm 'll 'd 'S 'T 'RE 'Ve 'mM",
        "the ſ case: 'ſ and 'ſo",
        "func encode(_ text: String) -> [Int32] {\n    return text.utf8.map { Int32($0) }\n}",
        "def f(x):\n    if x > 0:\n        return x ** 2  # square\n    return None\n",
        "for (int i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
        "<html><body class=\"main\">Hi &amp; bye</body></html>",
        "path/to/file_name.swift:42:7: error: expected ';'",
        "https://example.com/a?b=c&d=e#frag",
        "café naïve résumé Zürich Ångström façade",
        "e\u{301} combining acute, n\u{303} tilde, a\u{308}\u{304} stacked",
        "Ελληνικά κείμενα και αριθμοί 123",
        "Русский текст: Привет, мир!",
        "中文文本测试，包含标点。日本語のテキスト、カタカナ。한국어 텍스트입니다.",
        "混合English和中文123数字",
        "العربية: مرحبا بالعالم ١٢٣٤٥",
        "עברית: שלום עולם",
        "हिन्दी पाठ और संख्या १२३",
        "ไทย ภาษาไทย",
        "emoji 😀😃😄 and 👍🏽 and flags 🇫🇷🇯🇵",
        "family 👨‍👩‍👧‍👦 and woman technologist 👩🏻‍💻 and rainbow 🏳️‍🌈",
        "math ½ ¾ x² y³ ∑ ∞ ≠ ≤ Ⅻ ⅷ ①②③",
        "nbsp\u{00A0}here and ideographic\u{3000}space and nel\u{0085}x and ls\u{2028}ps\u{2029}end",
        "zero\u{200B}width and bom\u{FEFF}and joiner\u{200D}x",
        "control \u{01}\u{02}\u{7F} bytes and \u{1C}\u{1F} separators",
        "punctuation!!! ??? ... --- ___ *** ((())) [[[]]] {{{}}}",
        "!!!\n\n???\r\n",
        "a  b   c    d",
        "end with spaces and newline  \n",
        "12345678901234567890",
        "tab\tafter\t\t\tnumbers\t1\t22\t333",
        "Mixed CASE WoRdS and camelCaseIdentifiers and snake_case_names",
        "$100.00 €50 £30 ¥1000 ₹500",
        "ＦＵＬＬＷＩＤＴＨ ｆｕｌｌ ｗｉｄｔｈ １２３",
    ]
}

extension TestSupport {
    /// Deterministic pseudo-random texts built from fragments that stress the split
    /// patterns' edge cases (runs of mixed whitespace, apostrophes, digits, marks, emoji,
    /// special-token markup).
    static func randomTexts(count: Int, seed: UInt64) -> [String] {
        let fragments = [
            "a", "Z", "word", " the", "Über", "ſ", "é", "e\u{301}", "中", "日本", "한", "ب", "ש", "ไ",
            "0", "7", "42", "1234", "٣", "½", "²", "Ⅻ",
            " ", "  ", "\t", "\n", "\r\n", "\r", "\u{00A0}", "\u{3000}", "\u{2028}", "\u{0085}", "\u{200B}",
            "'", "'s", "'S", "'ll", "'LL", "'re", "'Ve", "'d", "'m", "'t", "'x",
            ".", ",", "!", "?", "...", "-", "_", "(", ")", "\"", "#", "$", "%", "&", "*", "/", "\\", "@", "`", "~", "|",
            "😀", "👍🏽", "👨‍👩‍👧", "🇫🇷", "\u{1}", "\u{7F}",
            "<|im_start|>", "<|im_end|>", "<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>", "<|", "|>",
        ]
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return (0..<count).map { _ in
            let n = Int(next() % 24)
            return (0..<n).map { _ in fragments[Int(next() % UInt64(fragments.count))] }.joined()
        }
    }
}
