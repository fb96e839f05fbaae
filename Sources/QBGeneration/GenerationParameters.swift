/// Everything a request asks for besides its prompt.
public struct GenerationParameters: Sendable, Codable, Equatable {
    /// Most ids to generate; generation may end earlier (end of sequence, stop string,
    /// context full, cancellation).
    public var maxTokens: Int
    /// Text that ends generation when it appears in the output; neither it nor anything
    /// after it is emitted.
    public var stop: [String]
    public var sampling: SamplingParameters

    public init(maxTokens: Int = 128, stop: [String] = [], sampling: SamplingParameters = .greedy) {
        self.maxTokens = maxTokens
        self.stop = stop
        self.sampling = sampling
    }

    /// Throws `SamplingParameterError` for anything out of range.
    public func validate(vocabularySize: Int? = nil) throws {
        guard maxTokens >= 0 else {
            throw SamplingParameterError.outOfRange(parameter: "max-tokens", value: "\(maxTokens)", allowed: ">= 0")
        }
        if stop.contains("") {
            throw SamplingParameterError.outOfRange(parameter: "stop", value: "\"\"", allowed: "a non-empty string")
        }
        try sampling.validate(vocabularySize: vocabularySize)
    }

    private enum CodingKeys: String, CodingKey { case maxTokens = "max_tokens", stop, sampling }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        maxTokens = try c.decodeIfPresent(Int.self, forKey: .maxTokens) ?? 128
        stop = try c.decodeIfPresent([String].self, forKey: .stop) ?? []
        sampling = try c.decodeIfPresent(SamplingParameters.self, forKey: .sampling) ?? .greedy
    }
}
