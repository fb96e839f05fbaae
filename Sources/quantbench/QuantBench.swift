import ArgumentParser
import QBRunner

@main
struct QuantBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "quantbench",
        abstract: "A quantized LLM inference engine and the harness that measures it.",
        version: EnvironmentInfo.versionDescription,
        subcommands: [Generate.self, Inspect.self, MakeModel.self, Quantize.self, RooflineCommand.self, Bench.self, Compare.self, AB.self, Eval.self, Chat.self, Serve.self, Template.self, Tokenize.self, History.self, Import.self])
}
