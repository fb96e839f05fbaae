import ArgumentParser
import Foundation
import QBSupport
import QBText

/// `quantbench tokenize`: ids (and pieces) of a text under any tokenizer the engine reads,
/// or the encoding speed on it.
struct Tokenize: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Encode text with a tokenizer and print the ids, or time the encoding (--benchmark).")

    @Option(help: "Tokenizer: tokenizer.json, tokenizer.model (tiktoken or SentencePiece), tokenizer.bin, a .gguf file, or a folder.")
    var tokenizer: String

    @Option(help: "The text to encode.")
    var text: String?

    @Option(help: "A file whose contents to encode (invalid UTF-8 is replaced by U+FFFD).")
    var file: String?

    @Flag(help: "Print one JSON object with `ids` and `pieces` (the vocabulary's token texts).")
    var json = false

    @Flag(inversion: .prefixedNo, help: "Add the special tokens the model declares (BOS).")
    var addSpecial = true

    @Flag(help: "Parse special-token text (<|eot_id|>, <s>) as special tokens.")
    var parseSpecial = false

    @Flag(help: "Time encoding instead (median of --runs, single-threaded, without special tokens).")
    var benchmark = false

    @Option(help: "Timed runs for --benchmark.")
    var runs: Int = 5

    func validate() throws {
        guard (text == nil) != (file == nil) else { throw ValidationError("give exactly one of --text and --file") }
        guard runs >= 1 else { throw ValidationError("--runs must be at least 1") }
    }

    func run() throws {
        let input: String
        if let file {
            do {
                input = String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
            } catch {
                throw ValidationError("cannot read \(file): \(FoundationErrorText.reason(error))")
            }
        } else {
            input = text ?? ""
        }
        let tok = try TokenizerFactory.open(tokenizer)
        if benchmark {
            let r = TokenizerBenchmark.run(tok, text: input, runs: runs)
            if json {
                print(try Self.json(r))
            } else {
                print(String(
                    format: "%@: %d bytes -> %d tokens; median of %d runs %.4f s: %.2f MB/s, %.0f tokens/s",
                    "\(type(of: tok))", r.bytes, r.tokens, r.seconds.count, r.medianSeconds, r.megabytesPerSecond, r.tokensPerSecond))
            }
            return
        }
        let ids = tok.encode(input, addSpecialTokens: addSpecial, parseSpecialTokens: parseSpecial)
        if json {
            print(try Self.json(Output(ids: ids, pieces: ids.map { tok.tokenText(for: $0) ?? "" })))
        } else {
            print(ids.map(String.init).joined(separator: " "))
        }
    }

    struct Output: Encodable {
        let ids: [TokenID]
        let pieces: [String]
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
