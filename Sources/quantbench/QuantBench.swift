import ArgumentParser

@main
struct QuantBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quantbench",
        abstract: "A quantized LLM inference engine and the harness that measures it.",
        subcommands: [Generate.self, Inspect.self, MakeModel.self, Quantize.self, RooflineCommand.self, Bench.self, Compare.self, Eval.self, Chat.self, Template.self, Tokenize.self, History.self, Import.self])
}
