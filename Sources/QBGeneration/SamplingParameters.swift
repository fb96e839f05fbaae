import QBText

/// How the next token is chosen from the logits. One value type shared by every caller
/// (the `generate` command, later the runner and chat), validated in one place.
///
/// ## The default sampler's chain
///
/// Stages run in llama.cpp's default order (`common/sampling.cpp`: the logit-bias sampler
/// is added first, then `common_params_sampling.samplers` = penalties, DRY, top-n-σ,
/// top-k, typical-p, top-p, min-p, XTC, temperature, then `dist`). The stages we have, in
/// that order:
///
/// 1. **logit bias**: `bias` is added to the token's logit (`-infinity` bans it);
/// 2. **penalties** over the last `repeatLastN` ids of the sequence (prompt included, as
///    llama.cpp's CLI accepts prompt ids into its history): a token seen `c > 0` times has
///    its logit divided by `repeatPenalty` when positive, multiplied when not, then reduced
///    by `c * frequencyPenalty + presencePenalty`;
/// 3. **top-k**: the `topK` highest logits (0 = all);
/// 4. **top-p**: the shortest prefix of those, by descending probability (softmax at
///    temperature 1 over the top-k survivors), whose cumulative probability reaches `topP`
///    (1 = off);
/// 5. **min-p**: tokens whose probability is at least `minP` times the largest's, that is
///    `logit >= max + log(minP)` (0 = off);
/// 6. **temperature**: the survivors' logits are divided by `temperature`;
/// 7. **sample**: softmax over the survivors (in double precision) and one draw `u` from
///    `Xoshiro256StarStar` seeded with `seed` (`nextUnitDouble`); the first survivor whose
///    running sum of weights exceeds `u` times their total wins. Survivors are walked by
///    descending logit, ties by ascending id, when top-k or top-p is active, and by
///    ascending id otherwise.
///
/// `temperature == 0` is greedy: stages 1 and 2 still apply (as in llama.cpp), then the
/// highest logit wins, the lowest id on ties; nothing random is drawn.
///
/// ## The llama2.c sampler
///
/// `sampler = .llama2c` is llama2.c's `run.c` `sample()` exactly: argmax at temperature 0,
/// else logits divided by the temperature, softmax, one `random_f32` draw from
/// `Llama2cRandom` seeded with `seed`, then `sample_mult` when `topP` is 1 (run.c: `topp <= 0
/// || topp >= 1`) or `sample_topp` otherwise. It knows only `temperature`, `topP` and
/// `seed`: `topK` and `minP` are ignored, and penalties or logit biases are rejected by
/// `validate`, since run.c has nothing to honour them with.
public struct SamplingParameters: Sendable, Codable, Equatable {
    /// Which sampling procedure runs.
    public enum Method: String, Sendable, Codable, CaseIterable {
        /// The chain above.
        case `default`
        /// llama2.c's `run.c` sampler and RNG, for bit-exact replays of its outputs.
        case llama2c
    }

    public var sampler: Method
    /// 0 is greedy (the command line's default); llama.cpp's own default is 0.8.
    public var temperature: Double
    /// llama.cpp's default, 40. 0 keeps every token.
    public var topK: Int
    /// llama.cpp's default, 0.95. In (0, 1]; 1 is off.
    public var topP: Double
    /// llama.cpp's default, 0.05. In [0, 1]; 0 is off.
    public var minP: Double
    /// 1 is off. Must be positive.
    public var repeatPenalty: Double
    /// How many of the latest ids the penalties look at: llama.cpp's default 64; 0 turns the
    /// penalties off, -1 means the whole sequence.
    public var repeatLastN: Int
    public var presencePenalty: Double
    public var frequencyPenalty: Double
    /// Added to logits before anything else; several entries for one id add up.
    public var logitBias: [LogitBias]
    /// The RNG seed. Fixed (0) by default, unlike llama.cpp's random seed, so runs are
    /// reproducible unless a caller picks a different seed.
    public var seed: UInt64

    public init(
        sampler: Method = .default, temperature: Double = 0, topK: Int = 40, topP: Double = 0.95,
        minP: Double = 0.05, repeatPenalty: Double = 1, repeatLastN: Int = 64, presencePenalty: Double = 0,
        frequencyPenalty: Double = 0, logitBias: [LogitBias] = [], seed: UInt64 = 0
    ) {
        self.sampler = sampler
        self.temperature = temperature
        self.topK = topK
        self.topP = topP
        self.minP = minP
        self.repeatPenalty = repeatPenalty
        self.repeatLastN = repeatLastN
        self.presencePenalty = presencePenalty
        self.frequencyPenalty = frequencyPenalty
        self.logitBias = logitBias
        self.seed = seed
    }

    /// Greedy decoding (the defaults).
    public static let greedy = SamplingParameters()

    /// llama2.c's sampler with its own command-line defaults (temperature 1, top-p 0.9).
    public static func llama2c(temperature: Double = 1, topP: Double = 0.9, seed: UInt64) -> SamplingParameters {
        SamplingParameters(sampler: .llama2c, temperature: temperature, topP: topP, seed: seed)
    }

    /// Whether the penalty stage changes anything.
    var hasPenalties: Bool {
        repeatLastN != 0 && (repeatPenalty != 1 || presencePenalty != 0 || frequencyPenalty != 0)
    }

    /// Throws `SamplingParameterError` naming the first parameter out of range. With a
    /// `vocabularySize`, logit-bias ids are checked against it too.
    public func validate(vocabularySize: Int? = nil) throws {
        typealias E = SamplingParameterError
        guard temperature.isFinite, temperature >= 0 else {
            throw E.outOfRange(parameter: "temperature", value: "\(temperature)", allowed: "a finite number >= 0 (0 is greedy)")
        }
        guard topK >= 0 else {
            throw E.outOfRange(parameter: "top-k", value: "\(topK)", allowed: ">= 0 (0 keeps every token)")
        }
        guard topP > 0, topP <= 1 else {
            throw E.outOfRange(parameter: "top-p", value: "\(topP)", allowed: "in (0, 1] (1 turns it off)")
        }
        guard minP >= 0, minP <= 1 else {
            throw E.outOfRange(parameter: "min-p", value: "\(minP)", allowed: "in [0, 1] (0 turns it off)")
        }
        guard repeatPenalty.isFinite, repeatPenalty > 0 else {
            throw E.outOfRange(parameter: "repeat-penalty", value: "\(repeatPenalty)", allowed: "a finite number > 0 (1 turns it off)")
        }
        guard repeatLastN >= -1 else {
            throw E.outOfRange(parameter: "repeat-last-n", value: "\(repeatLastN)", allowed: ">= -1 (0 turns penalties off, -1 is the whole sequence)")
        }
        guard presencePenalty.isFinite else {
            throw E.outOfRange(parameter: "presence-penalty", value: "\(presencePenalty)", allowed: "a finite number")
        }
        guard frequencyPenalty.isFinite else {
            throw E.outOfRange(parameter: "frequency-penalty", value: "\(frequencyPenalty)", allowed: "a finite number")
        }
        for b in logitBias {
            guard b.token >= 0, vocabularySize.map({ Int(b.token) < $0 }) ?? true else {
                let range = vocabularySize.map { "0..<\($0)" } ?? ">= 0"
                throw E.outOfRange(parameter: "logit-bias", value: "token \(b.token)", allowed: "a token id in \(range)")
            }
            guard b.bias.isFinite || b.bias == -.infinity else {
                throw E.outOfRange(parameter: "logit-bias", value: "\(b.bias) for token \(b.token)", allowed: "a finite number or -inf")
            }
        }
        if let vocabularySize, vocabularySize > 0 {
            let banned = Set(logitBias.lazy.filter { $0.bias == -.infinity }.map(\.token))
            if banned.count >= vocabularySize {
                throw E.outOfRange(
                    parameter: "logit-bias", value: "-inf for all \(vocabularySize) tokens",
                    allowed: "a bias that leaves at least one token possible")
            }
        }
        if sampler == .llama2c {
            if repeatLastN != 0 && repeatPenalty != 1 { throw E.unsupported(parameter: "repeat-penalty", sampler: sampler) }
            if repeatLastN != 0 && presencePenalty != 0 { throw E.unsupported(parameter: "presence-penalty", sampler: sampler) }
            if repeatLastN != 0 && frequencyPenalty != 0 { throw E.unsupported(parameter: "frequency-penalty", sampler: sampler) }
            if !logitBias.isEmpty { throw E.unsupported(parameter: "logit-bias", sampler: sampler) }
        }
    }

    // Every key is optional in JSON, so a configuration names only what it changes.
    private enum CodingKeys: String, CodingKey {
        case sampler, temperature, topK = "top_k", topP = "top_p", minP = "min_p"
        case repeatPenalty = "repeat_penalty", repeatLastN = "repeat_last_n"
        case presencePenalty = "presence_penalty", frequencyPenalty = "frequency_penalty"
        case logitBias = "logit_bias", seed
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let d = SamplingParameters()
        sampler = try c.decodeIfPresent(Method.self, forKey: .sampler) ?? d.sampler
        temperature = try c.decodeIfPresent(Double.self, forKey: .temperature) ?? d.temperature
        topK = try c.decodeIfPresent(Int.self, forKey: .topK) ?? d.topK
        topP = try c.decodeIfPresent(Double.self, forKey: .topP) ?? d.topP
        minP = try c.decodeIfPresent(Double.self, forKey: .minP) ?? d.minP
        repeatPenalty = try c.decodeIfPresent(Double.self, forKey: .repeatPenalty) ?? d.repeatPenalty
        repeatLastN = try c.decodeIfPresent(Int.self, forKey: .repeatLastN) ?? d.repeatLastN
        presencePenalty = try c.decodeIfPresent(Double.self, forKey: .presencePenalty) ?? d.presencePenalty
        frequencyPenalty = try c.decodeIfPresent(Double.self, forKey: .frequencyPenalty) ?? d.frequencyPenalty
        logitBias = try c.decodeIfPresent([LogitBias].self, forKey: .logitBias) ?? d.logitBias
        seed = try c.decodeIfPresent(UInt64.self, forKey: .seed) ?? d.seed
    }
}

/// A fixed amount added to one token's logit.
public struct LogitBias: Sendable, Codable, Equatable {
    public var token: TokenID
    /// `-Float.infinity` bans the token.
    public var bias: Float

    public init(token: TokenID, bias: Float) {
        self.token = token
        self.bias = bias
    }

    // JSON has no infinity: a ban is written as the string "-inf".
    private enum CodingKeys: String, CodingKey { case token, bias }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        token = try c.decode(TokenID.self, forKey: .token)
        if let s = try? c.decode(String.self, forKey: .bias), s == "-inf" {
            bias = -.infinity
        } else {
            bias = try c.decode(Float.self, forKey: .bias)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(token, forKey: .token)
        if bias == -.infinity { try c.encode("-inf", forKey: .bias) } else { try c.encode(bias, forKey: .bias) }
    }
}

/// A sampling parameter outside what the sampler accepts. The description names the
/// parameter as the command line spells it.
public enum SamplingParameterError: Error, Equatable, CustomStringConvertible {
    case outOfRange(parameter: String, value: String, allowed: String)
    case unsupported(parameter: String, sampler: SamplingParameters.Method)

    public var description: String {
        switch self {
        case .outOfRange(let p, let v, let allowed):
            return "\(p) must be \(allowed), got \(v)"
        case .unsupported(let p, let s):
            return "\(p) is not supported by the \(s.rawValue) sampler (it knows only temperature, top-p and seed)"
        }
    }
}
