import Foundation
import QBSupport

/// Encoding speed, measured the same way wherever it is asked for (`quantbench tokenize
/// --benchmark`, a runner suite): whole-text encodes without special tokens on the calling
/// thread, after a warm-up, reported as the median of several runs.
public enum TokenizerBenchmark {
    public struct Result: Sendable, Codable, Equatable {
        /// UTF-8 bytes of the text.
        public var bytes: Int
        /// Ids one encode produces.
        public var tokens: Int
        /// Wall-clock seconds of each timed run.
        public var seconds: [Double]
        public var medianSeconds: Double
        /// Decimal megabytes (10^6 bytes) per second at the median.
        public var megabytesPerSecond: Double
        public var tokensPerSecond: Double
    }

    /// Encodes `text` `warmup` times untimed, then `runs` times timed.
    public static func run(_ tokenizer: any Tokenizer, text: String, runs: Int = 5, warmup: Int = 1) -> Result {
        var tokens = 0
        for _ in 0..<max(warmup, 0) {
            tokens = tokenizer.encode(text, addSpecialTokens: false, parseSpecialTokens: false).count
        }
        var seconds: [Double] = []
        let clock = ContinuousClock()
        for _ in 0..<max(runs, 1) {
            var count = 0
            let elapsed = clock.measure {
                count = tokenizer.encode(text, addSpecialTokens: false, parseSpecialTokens: false).count
            }
            tokens = count
            seconds.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
        }
        let median = Quantiles.median(seconds) ?? 0
        let bytes = text.utf8.count
        return Result(
            bytes: bytes, tokens: tokens, seconds: seconds, medianSeconds: median,
            megabytesPerSecond: median > 0 ? Double(bytes) / 1e6 / median : 0,
            tokensPerSecond: median > 0 ? Double(tokens) / median : 0)
    }
}
