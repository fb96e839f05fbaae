import ArgumentParser
import QBGeneration
import QBText

/// The sampling flags, shared by every command that generates. They only fill in a
/// `SamplingParameters`; its `validate` owns the ranges and the error messages.
struct SamplingOptions: ParsableArguments {
    @Option(help: "Sampler: default (logit bias, penalties, top-k, top-p, min-p, temperature, as llama.cpp) or llama2c (llama2.c's run.c sampler and RNG; uses temperature, top-p and seed only).")
    var sampler: String?

    @Option(name: [.customLong("temperature"), .customLong("temp")], parsing: .unconditional, help: "Temperature; 0 is greedy (the default). --temp as llama.cpp and mlx-lm spell it.")
    var temperature: Double?

    @Option(name: .customLong("top-k"), parsing: .unconditional, help: "Keep the K most likely tokens; 0 keeps all (default 40).")
    var topK: Int?

    @Option(name: .customLong("top-p"), parsing: .unconditional, help: "Keep the most likely tokens up to this probability mass, in (0, 1]; 1 is off (default 0.95).")
    var topP: Double?

    @Option(name: .customLong("min-p"), parsing: .unconditional, help: "Drop tokens less likely than this times the most likely one, in [0, 1]; 0 is off (default 0.05).")
    var minP: Double?

    @Option(name: .customLong("repeat-penalty"), parsing: .unconditional, help: "Divide (multiply, if negative) the logits of recent tokens by this; 1 is off (default).")
    var repeatPenalty: Double?

    @Option(name: .customLong("repeat-last-n"), parsing: .unconditional, help: "How many recent tokens the penalties look at; 0 is off, -1 the whole sequence (default 64).")
    var repeatLastN: Int?

    @Option(name: .customLong("presence-penalty"), parsing: .unconditional, help: "Subtract this from the logits of tokens seen recently (default 0).")
    var presencePenalty: Double?

    @Option(name: .customLong("frequency-penalty"), parsing: .unconditional, help: "Subtract this times the count of each recent token from its logit (default 0).")
    var frequencyPenalty: Double?

    @Option(name: .customLong("logit-bias"), parsing: .unconditionalSingleValue, help: "ID=BIAS added to token ID's logit (repeatable); BIAS -inf bans the token.")
    var logitBias: [String] = []

    @Option(name: [.customShort("s"), .customLong("seed")], parsing: .unconditional, help: "Random seed (default 0); the same seed gives the same tokens on every run and machine.")
    var seed: UInt64?

    /// Checked before anything is loaded, so a bad flag fails fast with the usage line.
    func validate() throws {
        do {
            _ = try parameters()
        } catch let error as SamplingParameterError {
            throw ValidationError(error.description)
        }
    }

    /// The parameters these flags ask for (unset flags keep `SamplingParameters`' defaults),
    /// validated.
    func parameters() throws -> SamplingParameters {
        var p = SamplingParameters()
        if let s = sampler {
            guard let method = SamplingParameters.Method(rawValue: s) else {
                let choices = SamplingParameters.Method.allCases.map(\.rawValue).joined(separator: ", ")
                throw ValidationError("--sampler must be one of \(choices), got '\(s)'")
            }
            p.sampler = method
        }
        if let v = temperature { p.temperature = v }
        if let v = topK { p.topK = v }
        if let v = topP { p.topP = v }
        if let v = minP { p.minP = v }
        if let v = repeatPenalty { p.repeatPenalty = v }
        if let v = repeatLastN { p.repeatLastN = v }
        if let v = presencePenalty { p.presencePenalty = v }
        if let v = frequencyPenalty { p.frequencyPenalty = v }
        if let v = seed { p.seed = v }
        p.logitBias = try logitBias.map(Self.parseBias)
        if p.sampler == .llama2c {
            // Silently ignoring a flag the llama2c sampler has no use for would mislead.
            for (flag, given) in [("--top-k", topK != nil), ("--min-p", minP != nil), ("--repeat-last-n", repeatLastN != nil)] where given {
                throw ValidationError("\(flag) is not used by --sampler llama2c (it knows only --temperature, --top-p and --seed)")
            }
        }
        try p.validate()
        return p
    }

    /// Flags that were given but change nothing because the temperature is 0 (greedy).
    func ineffectiveAtTemperatureZero(_ p: SamplingParameters) -> [String] {
        guard p.temperature == 0 else { return [] }
        return [("--top-k", topK != nil), ("--top-p", topP != nil), ("--min-p", minP != nil), ("--seed", seed != nil)]
            .filter(\.1).map(\.0)
    }

    static func parseBias(_ text: String) throws -> LogitBias {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, let id = TokenID(parts[0]) else {
            throw ValidationError("--logit-bias must be ID=BIAS (e.g. 13=-2.5 or 2=-inf), got '\(text)'")
        }
        let value = parts[1].lowercased()
        if value == "-inf" || value == "-infinity" { return LogitBias(token: id, bias: -.infinity) }
        guard let bias = Float(parts[1]) else {
            throw ValidationError("--logit-bias must be ID=BIAS (e.g. 13=-2.5 or 2=-inf), got '\(text)'")
        }
        return LogitBias(token: id, bias: bias)
    }
}
