import ArgumentParser
import Foundation
import QBGeneration
import QBModel
import QBText

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Generate text from a prompt, streaming it (greedy unless --temperature says otherwise).")

    @OptionGroup var options: ModelOptions
    @OptionGroup var sampling: SamplingOptions

    @Option(name: [.customShort("p"), .customLong("prompt")], help: "The prompt text.")
    var prompt: String = ""

    @Option(name: [.customShort("n"), .customLong("max-tokens")], help: "Most tokens to generate (llama.cpp's -n).")
    var maxTokens: Int = 128

    @Option(help: "KV cache size in positions (default: prompt plus max tokens, up to the model's context).")
    var ctx: Int?

    @Option(name: .customLong("stop"), help: "Stop when the output contains this text, which is not printed (repeatable).")
    var stop: [String] = []

    @Flag(help: "Print one JSON object (text, token ids, finish reason, timings, parameters) instead of streaming text.")
    var json = false

    /// Token counts (`--max-tokens`, `--ctx`) beyond this are typos, not contexts: 16 M.
    static let maximumTokens = 1 << 24

    func run() throws {
        guard (0...Self.maximumTokens).contains(maxTokens) else {
            throw ValidationError("--max-tokens must be between 0 and \(Self.maximumTokens)")
        }
        if let ctx, !(1...Self.maximumTokens).contains(ctx) {
            throw ValidationError("--ctx must be between 1 and \(Self.maximumTokens)")
        }
        let samplingParameters = try sampling.parameters()
        let parameters = GenerationParameters(maxTokens: maxTokens, stop: stop, sampling: samplingParameters)
        let pool = try options.makePool()
        let prepared = try options.load(pool: pool)
        let model = prepared.model, tokenizer = prepared.tokenizer
        try parameters.validate(vocabularySize: model.config.vocabSize)
        let promptTokens = tokenizer.encode(prompt, addSpecialTokens: true, parseSpecialTokens: false)
        let contextLength = ctx ?? min(model.config.contextLength, promptTokens.count + maxTokens)
        guard contextLength >= 1, contextLength <= model.config.contextLength else {
            throw ValidationError("--ctx must be between 1 and the model's context (\(model.config.contextLength))")
        }
        guard promptTokens.count <= contextLength else {
            throw ValidationError("the prompt is \(promptTokens.count) tokens, longer than the context (\(contextLength))")
        }
        let ignored = sampling.ineffectiveAtTemperatureZero(samplingParameters)
        if !ignored.isEmpty {
            let note = "note: --temperature is 0 (greedy), so \(ignored.joined(separator: ", ")) have no effect\n"
            FileHandle.standardError.write(Data(note.utf8))
        }

        let state = model.makeState(contextLength: contextLength, pool: pool, kvType: prepared.kvType)
        let out = FileHandle.standardOutput
        if !json { out.write(Data(prompt.utf8)) }
        var text = ""
        var cached: [TokenID] = []
        let summary = try GenerationLoop.run(
            model: model, tokenizer: tokenizer, state: state, cachedTokens: &cached, prompt: .tokens(promptTokens),
            parameters: parameters,
            onEvent: { event in
                guard case .text(let piece) = event else { return }
                text += piece
                if !json { out.write(Data(piece.utf8)) }
            })

        if json {
            let report = GenerateReport(
                prompt: prompt, text: text, promptTokenIds: promptTokens, tokens: summary.generatedTokens,
                finishReason: summary.finishReason.rawValue, stopString: summary.stopString,
                promptTokens: summary.promptTokens, generatedTokens: summary.generatedTokens.count,
                contextLength: contextLength, threads: pool.threadCount, parameters: parameters,
                timings: .init(summary))
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            encoder.keyEncodingStrategy = .convertToSnakeCase
            out.write(try encoder.encode(report))
            out.write(Data("\n".utf8))
            return
        }
        out.write(Data("\n".utf8))
        let line = String(
            format: "[%d prompt tokens in %.3f s, %d generated at %.1f tok/s, finish: %@]\n",
            summary.promptTokens, summary.prefillSeconds, summary.generatedTokens.count,
            summary.decodeTokensPerSecond, summary.finishReason.rawValue)
        FileHandle.standardError.write(Data(line.utf8))
    }
}

/// `generate --json`: everything a script needs to check or time a run.
struct GenerateReport: Encodable {
    struct Timings: Encodable {
        let prefillSeconds: Double
        let timeToFirstTokenSeconds: Double?
        let decodeSeconds: Double
        let totalSeconds: Double
        let decodeTokensPerSecond: Double
        let tokenTimestampsSeconds: [Double]

        /// The names bench's results use for the same figures (`prefill_s`, `ttft_s`,
        /// `decode_s`, `decode_tokens_per_s`, `token_timestamps_s`), so one script reads both.
        enum CodingKeys: String, CodingKey {
            case prefillSeconds = "prefill_s", timeToFirstTokenSeconds = "ttft_s", decodeSeconds = "decode_s"
            case totalSeconds = "total_s", decodeTokensPerSecond = "decode_tokens_per_s"
            case tokenTimestampsSeconds = "token_timestamps_s"
        }

        init(_ s: GenerationSummary) {
            prefillSeconds = s.prefillSeconds
            timeToFirstTokenSeconds = s.timeToFirstToken
            decodeSeconds = s.decodeSeconds
            totalSeconds = s.totalSeconds
            decodeTokensPerSecond = s.decodeTokensPerSecond
            tokenTimestampsSeconds = s.tokenTimestamps
        }
    }

    let prompt: String
    let text: String
    let promptTokenIds: [TokenID]
    let tokens: [TokenID]
    let finishReason: String
    let stopString: String?
    let promptTokens: Int
    let generatedTokens: Int
    let contextLength: Int
    let threads: Int
    let parameters: GenerationParameters
    let timings: Timings
}
