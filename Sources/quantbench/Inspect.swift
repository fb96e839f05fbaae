import ArgumentParser
import QBModel
import QBRunner
import QBText

struct Inspect: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a model's architecture, tensors, dtypes, bits per weight and sizes, and its tokenizer.")

    @OptionGroup var options: ModelOptions

    func run() throws {
        let model = try options.loadModel(pool: options.makePool())
        print(ModelReport.describe(model))
        // A model without a tokenizer is still worth inspecting: say so rather than fail.
        do {
            let tok = try options.loadTokenizer(for: model)
            let eos = tok.eosTokenIDs.sorted().map(String.init).joined(separator: ", ")
            print("tokenizer: \(type(of: tok)), \(tok.vocabularySize) ids, BOS \(tok.bosTokenID.map(String.init) ?? "none")\(tok.addsBOS ? " (added)" : ""), EOS [\(eos)]")
        } catch {
            print("tokenizer: none (\(error))")
        }
    }
}
