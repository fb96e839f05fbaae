import ArgumentParser
import Foundation
import QBGeneration
import QBModel

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Generate text greedily from a prompt, streaming it.")

    @OptionGroup var options: ModelOptions

    @Option(help: "The prompt text.")
    var prompt: String = ""

    @Option(name: .customLong("max-tokens"), help: "Most tokens to generate.")
    var maxTokens: Int = 128

    @Option(help: "KV cache size in positions (default: prompt plus max tokens, up to the model's context).")
    var ctx: Int?

    func run() throws {
        guard maxTokens >= 0 else { throw ValidationError("--max-tokens must not be negative") }
        let model = try options.loadModel()
        let tokenizer = try options.loadTokenizer(for: model)
        let pool = try options.makePool()
        let promptTokens = tokenizer.encode(prompt, addSpecialTokens: true, parseSpecialTokens: false)
        let contextLength = ctx ?? min(model.config.contextLength, promptTokens.count + maxTokens)
        guard contextLength >= 1, contextLength <= model.config.contextLength else {
            throw ValidationError("--ctx must be between 1 and the model's context (\(model.config.contextLength))")
        }
        guard promptTokens.count <= contextLength else {
            throw ValidationError("the prompt is \(promptTokens.count) tokens, longer than the context (\(contextLength))")
        }
        let state = model.makeState(contextLength: contextLength, pool: pool)
        let out = FileHandle.standardOutput
        out.write(Data(prompt.utf8))
        let summary = try Greedy.generate(
            model: model, tokenizer: tokenizer, prompt: promptTokens, maxTokens: maxTokens, state: state
        ) { piece in out.write(Data(piece.utf8)) }
        out.write(Data("\n".utf8))
        let decodeRate = summary.decodeSeconds > 0 ? Double(max(summary.generatedTokens.count - 1, 0)) / summary.decodeSeconds : 0
        let line = String(
            format: "[%d prompt tokens in %.3f s, %d generated at %.1f tok/s, finish: %@]\n",
            summary.promptTokens, summary.prefillSeconds, summary.generatedTokens.count, decodeRate,
            summary.finishReason.rawValue)
        FileHandle.standardError.write(Data(line.utf8))
    }
}
