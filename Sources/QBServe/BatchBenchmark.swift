import QBGeneration
import QBKernels
import QBModel

/// What one batched decode step costs at each batch size (`quantbench serve --bench-batch`):
/// B sequences at depth `depth`, `steps` timed steps of `forwardBatch`, against a prefill
/// chunk of B positions of one sequence (the tile path the same B rows would take).
public enum BatchBenchmark {
    public struct Row: Sendable {
        public let batch: Int
        public let msPerStep: Double
        public let tokensPerSecond: Double
        /// One chunk of `batch` consecutive positions of one sequence (prefill tiles).
        public let prefillChunkMs: Double
    }

    public static func run(model: any LanguageModel, pool: ThreadPool, kvType: KVCacheType, sizes: [Int], depth: Int = 32, steps: Int = 32) throws -> [Row] {
        let vocab = Int32(model.config.vocabSize)
        let clock = ContinuousClock()
        return try sizes.map { b in
            let states = (0..<b).map { _ in model.makeState(contextLength: depth + steps + 8, pool: pool, maxBatch: 64, kvType: kvType) }
            for (i, s) in states.enumerated() {
                _ = try model.forward((0..<depth).map { Int32((($0 + 1) * 7 + i * 13) % Int(vocab)) }, state: s, logits: .none)
            }
            let scratch = model.makeState(contextLength: max(1, b), pool: pool, maxBatch: b, kvType: kvType)
            var tokens = (0..<b).map { Int32(($0 * 5 + 3) % Int(vocab)) }
            _ = try model.forwardBatch(tokens, states: states, scratch: scratch)  // warm-up
            let start = clock.now
            for _ in 0..<steps {
                let logits = try model.forwardBatch(tokens, states: states, scratch: scratch)
                tokens = logits.map { l in Int32(l.indices.max(by: { l[$0] < l[$1] }) ?? 0) }
            }
            let seconds = (clock.now - start).seconds / Double(steps)
            let chunk = model.makeState(contextLength: depth + b + 1, pool: pool, maxBatch: 64, kvType: kvType)
            _ = try model.forward((0..<depth).map { Int32(($0 * 3 + 1) % Int(vocab)) }, state: chunk, logits: .none)
            let p = clock.now
            _ = try model.forward(Array(tokens.prefix(b)), state: chunk, logits: .last)
            let prefill = (clock.now - p).seconds
            return Row(batch: b, msPerStep: seconds * 1000, tokensPerSecond: Double(b) / seconds, prefillChunkMs: prefill * 1000)
        }
    }
}
