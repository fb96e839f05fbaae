import Foundation
import QBSupport

/// SplitMix64 for the tests' random inputs. Each test draws from a fresh seed (or from
/// `QB_TEST_SEED` when set) and prints it on first use, so a failure seen once can be
/// replayed exactly.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    private var stream: SplitMix64

    public init(seed: UInt64) {
        self.seed = seed
        stream = SplitMix64(seed: seed)
    }

    /// A generator for test `name`: seeded from `QB_TEST_SEED` if set, else at random; the
    /// seed is printed with the command line that replays it.
    public init(for name: String) {
        let env = ProcessInfo.processInfo.environment["QB_TEST_SEED"].flatMap { UInt64($0) }
        var system = SystemRandomNumberGenerator()
        self.init(seed: env ?? system.next())
        print("\(name) random seed \(seed) (replay: QB_TEST_SEED=\(seed) swift test --filter '\(name)')")
    }

    public mutating func next() -> UInt64 { stream.next() }
}

extension SeededGenerator {
    /// A uniform double in (0, 1) from the top 53 bits.
    public mutating func uniform() -> Double { (Double(next() >> 11) + 0.5) / Double(1 << 53) }

    /// A normal draw (Box-Muller), for seeded noise in synthetic series.
    public mutating func normal(mean: Double, sd: Double) -> Double {
        mean + sd * (-2 * log(uniform())).squareRoot() * cos(2 * .pi * uniform())
    }
}
