import Foundation
import QBText

/// llama2.c's sampler (`run.c` at 7ac65cb: `sample`, `sample_argmax`, `softmax`,
/// `sample_mult`, `sample_topp`) with its RNG, reproduced operation for operation in
/// single precision so that a seed replays llama2.c's sampled text exactly:
///
/// - temperature 0: the first index of the largest logit;
/// - else every logit is divided by the temperature (as a float), softmax with `expf`
///   and a running float sum, one `random_f32` coin, then
/// - `sample_mult` when `topP` is 1 (run.c: `topp <= 0 || topp >= 1`): the first index
///   whose running float CDF exceeds the coin, or the last index;
/// - `sample_topp` otherwise: ids with probability >= `(1 - topp) / (n - 1)` sorted by
///   descending probability, cut after the first index where the running float sum
///   exceeds topp, then the first whose CDF exceeds `coin * cumulative`.
///
/// run.c sorts with C `qsort`, which the C standard leaves unstable; glibc's qsort is a
/// merge sort whenever the array fits its memory limit (as a few thousand 8-byte entries
/// always do), so equal probabilities keep their ascending-index order. We sort by
/// (probability descending, index ascending), which is that order exactly.
public struct Llama2cSampler: TokenSampler {
    public let temperature: Float
    public let topP: Float
    private var rng: Llama2cRandom
    private var probIndex: [(index: Int32, prob: Float)] = []

    public init(_ parameters: SamplingParameters) {
        // run.c keeps both as C floats parsed with atof: the same rounding as Float(Double).
        temperature = Float(parameters.temperature)
        topP = Float(parameters.topP)
        rng = Llama2cRandom(seed: parameters.seed)
    }

    public mutating func sample(_ logits: inout [Float], history: ArraySlice<TokenID>) -> TokenID {
        guard !logits.isEmpty else { return 0 }
        if temperature == 0 {
            var best = 0
            for i in 1..<logits.count where logits[i] > logits[best] { best = i }
            return TokenID(best)
        }
        return logits.withUnsafeMutableBufferPointer { p in
            for q in p.indices { p[q] /= temperature }
            Self.softmax(p)
            let coin = rng.nextFloat()
            if topP <= 0 || topP >= 1 {
                return Self.sampleMult(UnsafeBufferPointer(p), coin: coin)
            }
            return sampleTopP(UnsafeBufferPointer(p), coin: coin)
        }
    }

    static func softmax(_ x: UnsafeMutableBufferPointer<Float>) {
        var maxValue = x[0]
        for i in 1..<x.count where x[i] > maxValue { maxValue = x[i] }
        var sum: Float = 0
        for i in x.indices {
            x[i] = expf(x[i] - maxValue)
            sum += x[i]
        }
        for i in x.indices { x[i] /= sum }
    }

    static func sampleMult(_ probabilities: UnsafeBufferPointer<Float>, coin: Float) -> TokenID {
        var cdf: Float = 0
        for i in probabilities.indices {
            cdf += probabilities[i]
            if coin < cdf { return TokenID(i) }
        }
        return TokenID(probabilities.count - 1)
    }

    private mutating func sampleTopP(_ probabilities: UnsafeBufferPointer<Float>, coin: Float) -> TokenID {
        let n = probabilities.count
        // run.c: `(1.0f - topp) / (n - 1)`, the int converted to float.
        let cutoff = (1 - topP) / Float(n - 1)
        probIndex.removeAll(keepingCapacity: true)
        for i in 0..<n where probabilities[i] >= cutoff {
            probIndex.append((Int32(i), probabilities[i]))
        }
        probIndex.sort { $0.prob > $1.prob || ($0.prob == $1.prob && $0.index < $1.index) }
        guard !probIndex.isEmpty else { return TokenID(n - 1) }
        var cumulative: Float = 0
        var lastIndex = probIndex.count - 1
        for i in probIndex.indices {
            cumulative += probIndex[i].prob
            if cumulative > topP {
                lastIndex = i
                break
            }
        }
        let r = coin * cumulative
        var cdf: Float = 0
        for i in 0...lastIndex {
            cdf += probIndex[i].prob
            if r < cdf { return probIndex[i].index }
        }
        return probIndex[lastIndex].index
    }
}
