import ArgumentParser
import Foundation
import QBKernels
import QBModel
import QBRunner
import QBSupport

struct MakeModel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make-model",
        abstract: "Write a deterministic synthetic model (Llama, Qwen2 or Qwen3; random weights from a seed) with its own tokenizer.")

    @Option(help: "Shape: \(SyntheticModel.Preset.allCases.map(\.rawValue).joined(separator: ", ")).")
    var preset: String = SyntheticModel.Preset.tiny.rawValue

    @Option(help: "Random seed.")
    var seed: UInt64 = 0

    @Option(help: "Weights: f32, f16, bf16 for a Hugging Face folder; f32, f16, q8_0, q4_0 (or any GGUF --quant setting) for GGUF.")
    var dtype: String = "f32"

    @Option(help: "Output format: safetensors (a Hugging Face folder) or gguf (one file).")
    var format: String = "safetensors"

    @Option(help: "Output folder (safetensors) or file (gguf).")
    var out: String

    @Option(help: "Worker threads for conversion (default: every core).")
    var threads: Int?

    func run() throws {
        guard let p = SyntheticModel.Preset(rawValue: preset) else {
            throw ValidationError("unknown preset \(OutputGuard.shown(preset, limit: 40)); choose one of \(SyntheticModel.Preset.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard format == "safetensors" || format == "gguf" else {
            throw ValidationError("unknown format \(OutputGuard.shown(format, limit: 40)); choose safetensors or gguf")
        }
        try OutputGuard.check(output: out, kind: format == "gguf" ? .file : .folder, flag: "--out", inputs: [])
        // Progress on standard error; Ctrl-C or SIGTERM removes what was written, exit 130.
        let signals = WorkSignalHandlers(display: ProgressDisplay.automatic())
        defer { withExtendedLifetime(signals) {} }
        do {
            try make(p)
        } catch is WorkInterrupted {
            WorkSignalHandlers.exitNow()
        }
        print("wrote \(p.rawValue) (seed \(seed), \(dtype), \(format)) to \(out)")
    }

    func make(_ p: SyntheticModel.Preset) throws {
        switch format {
        case "safetensors":
            guard let d = DType(rawValue: dtype.uppercased()) else {
                throw ValidationError("unknown dtype \(OutputGuard.shown(dtype, limit: 40)) for safetensors; choose f32, f16 or bf16")
            }
            try ModelMaker.make(preset: p, seed: seed, dtype: d, to: URL(fileURLWithPath: out))
        case "gguf":
            let spec = try QuantSpec(dtype)
            guard !spec.isMLX else { throw ValidationError("\(dtype) is an MLX setting; GGUF takes f32, f16, bf16 or q*") }
            try ModelMaker.makeGGUF(
                preset: p, seed: seed, spec: spec, to: URL(fileURLWithPath: out),
                pool: ThreadPool(threads: threads ?? ThreadPool.defaultThreadCount))
        default:
            throw ValidationError("unknown format \(format); choose safetensors or gguf")
        }
    }
}
