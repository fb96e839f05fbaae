import ArgumentParser
import Foundation
import QBKernels
import QBModel
import QBRunner

struct MakeModel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make-model",
        abstract: "Write a deterministic synthetic Llama model (random weights from a seed) with its own tokenizer.")

    @Option(help: "Shape: \(SyntheticModel.Preset.allCases.map(\.rawValue).joined(separator: ", ")).")
    var preset: String = SyntheticModel.Preset.tiny.rawValue

    @Option(help: "Random seed.")
    var seed: UInt64 = 0

    @Option(help: "Weight dtype: f32, f16, bf16.")
    var dtype: String = "f32"

    @Option(help: "Output folder.")
    var out: String

    func run() throws {
        guard let p = SyntheticModel.Preset(rawValue: preset) else {
            throw ValidationError("unknown preset \(preset); choose one of \(SyntheticModel.Preset.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let d = DType(rawValue: dtype.uppercased()) else {
            throw ValidationError("unknown dtype \(dtype); choose f32, f16 or bf16")
        }
        try ModelMaker.make(preset: p, seed: seed, dtype: d, to: URL(fileURLWithPath: out))
        print("wrote \(p.rawValue) (seed \(seed), \(d.rawValue)) to \(out)")
    }
}
