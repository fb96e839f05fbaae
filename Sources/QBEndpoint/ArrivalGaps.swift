import Foundation
import QBSupport

/// Seeded gaps between request arrivals at `rate` per second: gamma-distributed with shape
/// `burstiness` and mean 1 / rate, as `vllm bench serve --burstiness` draws them. Shape 1 is
/// the exponential (a Poisson process); below 1 arrivals come in bursts, above 1 more
/// evenly. Gamma by Marsaglia and Tsang (2000), with Ahrens and Dieter's boost below shape
/// 1; normals by Box-Muller; every draw from one SplitMix64 stream.
public struct ArrivalGaps: Sendable {
    public let rate: Double
    public let burstiness: Double
    var rng: SplitMix64
    var spareNormal: Double?

    public init(rate: Double, burstiness: Double = 1, seed: UInt64) {
        self.rate = rate
        self.burstiness = burstiness
        rng = SplitMix64(seed: seed)
    }

    /// The next gap in seconds.
    public mutating func next() -> Double {
        if burstiness == 1 { return -Foundation.log1p(-rng.nextUnit()) / rate }
        return gamma(burstiness) / (burstiness * rate)
    }

    /// A uniform in (0, 1).
    mutating func open() -> Double {
        var u = rng.nextUnit()
        while u == 0 { u = rng.nextUnit() }
        return u
    }

    mutating func normal() -> Double {
        if let z = spareNormal {
            spareNormal = nil
            return z
        }
        let r = (-2 * Foundation.log(open())).squareRoot(), theta = 2 * Double.pi * rng.nextUnit()
        spareNormal = r * Foundation.sin(theta)
        return r * Foundation.cos(theta)
    }

    /// A gamma variate of shape `a` and scale 1.
    mutating func gamma(_ a: Double) -> Double {
        if a < 1 { return gamma(a + 1) * Foundation.pow(open(), 1 / a) }
        let d = a - 1.0 / 3, c = 1 / (9 * d).squareRoot()
        while true {
            var x: Double, v: Double
            repeat {
                x = normal()
                v = 1 + c * x
            } while v <= 0
            v = v * v * v
            let u = open()
            if u < 1 - 0.0331 * x * x * x * x { return d * v }
            if Foundation.log(u) < 0.5 * x * x + d * (1 - v + Foundation.log(v)) { return d * v }
        }
    }
}
