import QBText

/// Picks the next token from a step's logits. One instance per request: it owns the RNG
/// stream and scratch buffers, so it is created with the request's parameters and then
/// called once per generated token.
public protocol TokenSampler {
    /// Chooses a token. `logits` (one per vocabulary id) may be overwritten as scratch.
    /// `history` is the sequence so far (prompt and generated ids), for penalties.
    mutating func sample(_ logits: inout [Float], history: ArraySlice<TokenID>) -> TokenID
}

extension SamplingParameters {
    /// A fresh sampler (RNG at the start of its stream) for logits of `vocabularySize` entries.
    public func makeSampler(vocabularySize: Int) -> any TokenSampler {
        switch sampler {
        case .default: return ChainSampler(self, vocabularySize: vocabularySize)
        case .llama2c: return Llama2cSampler(self)
        }
    }
}
