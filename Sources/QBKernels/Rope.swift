#if canImport(Glibc)
import Glibc
#endif

/// Which dimensions RoPE rotates together.
public enum RopeStyle: String, Sendable, Codable {
    /// Pairs (2i, 2i+1): Meta's original layout, llama2.c exports and GGUF (llama.cpp's
    /// "normal" rope after its converter permutes Q and K).
    case interleaved
    /// Pairs (i, i + d/2): Hugging Face's `rotate_half` layout of the same weights.
    case halves
}

/// Llama 3.1's frequency-dependent RoPE scaling (`rope_scaling.rope_type == "llama3"`).
public struct Llama3RopeScaling: Sendable, Equatable, Codable {
    public var factor: Float
    public var lowFreqFactor: Float
    public var highFreqFactor: Float
    public var originalMaxPositionEmbeddings: Int

    public init(factor: Float, lowFreqFactor: Float, highFreqFactor: Float, originalMaxPositionEmbeddings: Int) {
        self.factor = factor
        self.lowFreqFactor = lowFreqFactor
        self.highFreqFactor = highFreqFactor
        self.originalMaxPositionEmbeddings = originalMaxPositionEmbeddings
    }
}

/// Rotary position embedding for one head size. Frequencies and angles are computed in
/// f32 exactly as the reference implementations (llama2.c, transformers) compute them,
/// so positions far into the context round the same way.
public struct Rope: Sendable {
    public let headDim: Int
    public let style: RopeStyle
    /// One inverse frequency per rotated pair.
    public let inverseFrequencies: [Float]

    /// Frequencies divided by per-pair factors, as GGUF files carry llama3 scaling
    /// (llama.cpp's converter bakes it into a `rope_freqs` tensor).
    public init(headDim: Int, theta: Float, style: RopeStyle, frequencyFactors: [Float]) {
        let base = Rope(headDim: headDim, theta: theta, style: style)
        self.headDim = headDim
        self.style = style
        inverseFrequencies = zip(base.inverseFrequencies, frequencyFactors).map { $0 / $1 }
    }

    public init(headDim: Int, theta: Float, style: RopeStyle, scaling: Llama3RopeScaling? = nil) {
        self.headDim = headDim
        self.style = style
        let half = headDim / 2
        var inv = (0..<half).map { i in 1 / powf(theta, Float(2 * i) / Float(headDim)) }
        if let s = scaling {
            let old = Float(s.originalMaxPositionEmbeddings)
            let lowWavelen = old / s.lowFreqFactor
            let highWavelen = old / s.highFreqFactor
            inv = inv.map { f in
                let wavelen = 2 * Float.pi / f
                if wavelen > lowWavelen { return f / s.factor }
                if wavelen < highWavelen { return f }
                let smooth = (old / wavelen - s.lowFreqFactor) / (s.highFreqFactor - s.lowFreqFactor)
                return (1 - smooth) * f / s.factor + smooth * f
            }
        }
        inverseFrequencies = inv
    }

    /// cos and sin of every pair's angle at `position` (headDim/2 values each).
    public func angles(position: Int, cos c: UnsafeMutablePointer<Float>, sin s: UnsafeMutablePointer<Float>) {
        let p = Float(position)
        for i in 0..<inverseFrequencies.count {
            let a = p * inverseFrequencies[i]
            c[i] = cosf(a)
            s[i] = sinf(a)
        }
    }

    /// Rotates `heads` consecutive heads of `vector` in place.
    public func apply(
        _ vector: UnsafeMutablePointer<Float>, heads: Int,
        cos c: UnsafePointer<Float>, sin s: UnsafePointer<Float>
    ) {
        let half = headDim / 2
        for h in 0..<heads {
            let v = vector + h * headDim
            switch style {
            case .interleaved:
                for i in 0..<half {
                    let x0 = v[2 * i], x1 = v[2 * i + 1]
                    v[2 * i] = x0 * c[i] - x1 * s[i]
                    v[2 * i + 1] = x0 * s[i] + x1 * c[i]
                }
            case .halves:
                for i in 0..<half {
                    let x0 = v[i], x1 = v[i + half]
                    v[i] = x0 * c[i] - x1 * s[i]
                    v[i + half] = x1 * c[i] + x0 * s[i]
                }
            }
        }
    }
}
