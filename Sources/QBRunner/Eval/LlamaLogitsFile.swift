import Foundation
import QBFormats
import QBKernels
import QBModel
import QBSupport
import QBText

/// The log-probabilities `llama-perplexity --kl-divergence-base FILE` writes
/// (tools/perplexity/perplexity.cpp): the 8 bytes `_logits_`, then little-endian
/// `n_ctx` (uint32), `n_vocab` (int32), `n_chunk` (int32), the `n_chunk × n_ctx` token ids
/// of the chunks as tokenized (int32, the first id of each chunk as in the text, not BOS),
/// then per chunk, per scored position (n_ctx/2 ..< n_ctx − 1, so n_ctx − 1 − n_ctx/2 rows)
/// one row of `nv = 2·⌈n_vocab/2⌉ + 4` uint16: two floats `scale` and `min_log_prob`, then
/// per token a uint16 q with log p = scale·q + min_log_prob (logits below max − 16 stored
/// as q = 0).
public final class LlamaLogitsFile: Sendable {
    public let path: String
    public let context: Int
    public let vocab: Int
    public let chunks: Int
    /// n_chunk × n_ctx ids.
    public let tokens: [Int32]
    /// uint16 per row (the two floats included).
    public let rowWidth: Int
    /// Rows per chunk: n_ctx − 1 − n_ctx/2.
    public let rowsPerChunk: Int
    let file: MappedFile
    let rowsOffset: Int

    public init(path: String) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard let size else { throw LocatedError(path: path, "cannot read the llama-perplexity log-probabilities") }
        guard size >= 20 else {
            throw LocatedError(path: path, "not a llama-perplexity --kl-divergence-base file (\(size) bytes, no \"_logits_\" header)")
        }
        let file: MappedFile
        do { file = try MappedFile(path: path) } catch { throw LocatedError(path: path, "cannot read the llama-perplexity log-probabilities: \(error)") }
        self.file = file
        self.path = path
        guard file.size >= 20, let magic = try? file.bytes(at: 0, count: 8, item: "magic"), Array(magic) == Array("_logits_".utf8) else {
            throw LocatedError(path: path, "not a llama-perplexity --kl-divergence-base file (no \"_logits_\" header)")
        }
        let nCtx = Int(try file.load(UInt32.self, at: 8, item: "n_ctx"))
        let nVocab = Int(try file.load(Int32.self, at: 12, item: "n_vocab"))
        let nChunk = Int(try file.load(Int32.self, at: 16, item: "n_chunk"))
        guard (4...(1 << 24)).contains(nCtx) else { throw LocatedError(path: path, "n_ctx \(nCtx) is out of range") }
        guard (2...(1 << 24)).contains(nVocab) else { throw LocatedError(path: path, "n_vocab \(nVocab) is out of range") }
        guard (1...(1 << 20)).contains(nChunk) else { throw LocatedError(path: path, "n_chunk \(nChunk) is out of range") }
        context = nCtx
        vocab = nVocab
        chunks = nChunk
        rowWidth = 2 * ((nVocab + 1) / 2) + 4
        rowsPerChunk = nCtx - 1 - nCtx / 2
        rowsOffset = 20 + 4 * nCtx * nChunk
        let expected = rowsOffset + nChunk * rowsPerChunk * rowWidth * 2
        guard file.size == expected else {
            throw LocatedError(path: path, file.size < expected
                ? "truncated: \(file.size) bytes, where n_ctx \(nCtx), n_vocab \(nVocab) and n_chunk \(nChunk) need \(expected)"
                : "\(file.size) bytes, more than the \(expected) that n_ctx \(nCtx), n_vocab \(nVocab) and n_chunk \(nChunk) need")
        }
        let raw = try file.bytes(at: 20, count: 4 * nCtx * nChunk, item: "tokens")
        let ids = (0..<(nCtx * nChunk)).map { Int32(littleEndian: raw.loadUnaligned(fromByteOffset: 4 * $0, as: Int32.self)) }
        if let bad = ids.first(where: { $0 < 0 || Int($0) >= nVocab }) {
            throw LocatedError(path: path, "token id \(bad) is outside the vocabulary of \(nVocab)")
        }
        tokens = ids
    }

    /// One scored row: `scale`, `min_log_prob` and the n_vocab quantized log-probabilities.
    public func withRow<T>(chunk: Int, row: Int, _ body: (Float, Float, UnsafeBufferPointer<UInt16>) throws -> T) rethrows -> T {
        let offset = rowsOffset + ((chunk * rowsPerChunk) + row) * rowWidth * 2
        let p = file.base + offset
        let scale = p.loadUnaligned(as: Float.self), minLogProb = p.loadUnaligned(fromByteOffset: 4, as: Float.self)
        // Rows start 4-byte aligned (20 + 4·ids + 4·k bytes), so the uint16 view is aligned.
        let q = UnsafeBufferPointer(start: (p + 8).assumingMemoryBound(to: UInt16.self), count: vocab)
        return try body(scale, minLogProb, q)
    }
}

/// llama-perplexity's `--kl-divergence` statistics of a model's logits against a base file
/// (`LlamaLogitsFile`), computed as perplexity.cpp computes them (f32 where it uses f32,
/// sums in f64), over the same chunks and positions.
public struct LlamaKLDivergence: Sendable, Codable {
    public var count = 0
    var sumNLL = 0.0, sumNLL2 = 0.0, sumNLLBase = 0.0, sumNLLBase2 = 0.0, sumNLLNLLBase = 0.0
    var sumKLD = 0.0, sumKLD2 = 0.0, sumPDiff = 0.0, sumPDiff2 = 0.0, sumPDiff4 = 0.0
    public var maxPDiff: Float = 0
    public var sameTop = 0
    public var klValues: [Float] = []
    public var pDiffValues: [Float] = []

    public init() {}

    /// perplexity.cpp's `log_softmax(n_vocab, logits, base_log_prob, tok, kld)`.
    public mutating func add(logits: UnsafeBufferPointer<Float>, scale: Float, minLogProb: Float, base: UnsafeBufferPointer<UInt16>, token: Int) {
        let n = logits.count
        var maxLogit = logits[0]
        var imax = 0
        for i in 1..<n where logits[i] > maxLogit { maxLogit = logits[i]; imax = i }
        var sumExp = 0.0
        for i in 0..<n { sumExp += Double(expf(logits[i] - maxLogit)) }
        let logSumExp = Float(log(sumExp))
        let nll: Float = maxLogit + logSumExp - logits[token]
        sumNLL += Double(nll); sumNLL2 += Double(nll * nll)
        let nllBase: Float = -(scale * Float(base[token]) + minLogProb)
        sumNLLBase += Double(nllBase); sumNLLBase2 += Double(nllBase * nllBase)
        sumNLLNLLBase += Double(nll * nllBase)
        maxLogit += logSumExp
        var sum = 0.0
        var imaxBase = -1
        var pLogBaseMax: Float = 0
        for i in 0..<n {
            let pLogBase = scale * Float(base[i]) + minLogProb
            if i == 0 || pLogBase > pLogBaseMax { pLogBaseMax = pLogBase; imaxBase = i }
            if pLogBase > -16 {
                let pBase = expf(pLogBase)
                sum += Double(pBase * (pLogBase - logits[i] + maxLogit))
            }
        }
        sumKLD += sum; sumKLD2 += sum * sum
        count += 1
        if imax == imaxBase { sameTop += 1 }
        let pDiff = expf(-nll) - expf(-nllBase)
        sumPDiff += Double(pDiff)
        let d2 = Double(pDiff) * Double(pDiff)
        sumPDiff2 += d2; sumPDiff4 += d2 * d2
        maxPDiff = max(maxPDiff, abs(pDiff))
        klValues.append(Float(sum))
        pDiffValues.append(pDiff)
    }

    /// perplexity.cpp's `mean_and_uncertainty`.
    static func meanAndUncertainty(_ sum: Double, _ sum2: Double, _ count: Int) -> (Double, Double) {
        guard count >= 1 else { return (0, 0) }
        let f = sum / Double(count)
        let df = sum2 / Double(count) - f * f
        return (f, df > 0 && count > 10 ? (df / Double(count - 1)).squareRoot() : 0)
    }

    /// perplexity.cpp's percentile (linear between order statistics) of sorted values.
    static func percentile(_ sorted: [Float], _ fraction: Float) -> Float {
        if fraction <= 0 { return sorted.first ?? 0 }
        if fraction >= 1 { return sorted.last ?? 0 }
        var p = fraction * Float(sorted.count - 1)
        let ip = Int(p)
        p -= Float(ip)
        return (1 - p) * sorted[ip] + p * sorted[min(ip + 1, sorted.count - 1)]
    }

    static func median(_ sorted: [Float]) -> Float {
        sorted.count % 2 == 0 ? 0.5 * (sorted[sorted.count / 2] + sorted[sorted.count / 2 - 1]) : sorted[sorted.count / 2]
    }

    public var meanKL: (value: Double, uncertainty: Double) { Self.meanAndUncertainty(sumKLD, sumKLD2, count) }
    public var sameTopFraction: Double { Double(sameTop) / Double(max(count, 1)) }
    /// exp of the mean NLL of our logits and of the base's.
    public var perplexity: (ours: Double, base: Double) {
        (exp(Self.meanAndUncertainty(sumNLL, sumNLL2, count).0), exp(Self.meanAndUncertainty(sumNLLBase, sumNLLBase2, count).0))
    }

    /// The statistics blocks llama-perplexity prints after `--kl-divergence`.
    public var report: String {
        var out: [String] = []
        func line(_ s: String) { out.append(s) }
        guard count > 0 else { return "no positions scored\n" }
        let kl = klValues.sorted(), pd = pDiffValues.sorted()
        let logPPL = Self.meanAndUncertainty(sumNLL, sumNLL2, count)
        let logBase = Self.meanAndUncertainty(sumNLLBase, sumNLLBase2, count)
        let cov = count < 10 ? 0 : (sumNLLNLLBase / Double(count) - (sumNLL / Double(count)) * (sumNLLBase / Double(count))) / Double(count - 1)
        line("====== Perplexity statistics ======")
        line(String(format: "Mean PPL(Q)                   : %10.6f ± %10.6f", exp(logPPL.0), exp(logPPL.0) * logPPL.1))
        line(String(format: "Mean PPL(base)                : %10.6f ± %10.6f", exp(logBase.0), exp(logBase.0) * logBase.1))
        line(String(format: "Cor(ln(PPL(Q)), ln(PPL(base))): %6.2f%%", 100 * cov / (logPPL.1 * logBase.1)))
        let ratio = logPPL.0 - logBase.0
        let ratioUnc = (logPPL.1 * logPPL.1 + logBase.1 * logBase.1 - 2 * cov).squareRoot()
        line(String(format: "Mean ln(PPL(Q)/PPL(base))     : %10.6f ± %10.6f", ratio, ratioUnc))
        line(String(format: "Mean PPL(Q)/PPL(base)         : %10.6f ± %10.6f", exp(ratio), exp(ratio) * ratioUnc))
        line("")
        line("====== KL divergence statistics ======")
        let m = meanKL
        line(String(format: "Mean    KLD: %10.6f ± %10.6f", m.value, m.uncertainty))
        line(String(format: "Maximum KLD: %10.6f", kl.last ?? 0))
        for (label, f) in [("99.9%", 0.999), ("99.0%", 0.99), ("95.0%", 0.95), ("90.0%", 0.9)] as [(String, Float)] {
            line(label + String(format: "   KLD: %10.6f", Self.percentile(kl, f)))
        }
        line(String(format: "Median  KLD: %10.6f", Self.median(kl)))
        for (label, f) in [("10.0%", 0.1), (" 5.0%", 0.05), (" 1.0%", 0.01), (" 0.1%", 0.001)] as [(String, Float)] {
            line(label + String(format: "   KLD: %10.6f", Self.percentile(kl, f)))
        }
        line(String(format: "Minimum KLD: %10.6f", kl.first ?? 0))
        line("")
        line("====== Token probability statistics ======")
        let pm = Self.meanAndUncertainty(sumPDiff, sumPDiff2, count)
        line(String(format: "Mean    Δp: %6.3f ± %5.3f %%", 100 * pm.0, 100 * pm.1))
        line(String(format: "Maximum Δp: %6.3f%%", 100 * (pd.last ?? 0)))
        for (label, f) in [("99.9%", 0.999), ("99.0%", 0.99), ("95.0%", 0.95), ("90.0%", 0.9), ("75.0%", 0.75)] as [(String, Float)] {
            line(label + String(format: "   Δp: %6.3f%%", 100 * Self.percentile(pd, f)))
        }
        line(String(format: "Median  Δp: %6.3f%%", 100 * Self.median(pd)))
        for (label, f) in [("25.0%", 0.25), ("10.0%", 0.1), (" 5.0%", 0.05), (" 1.0%", 0.01), (" 0.1%", 0.001)] as [(String, Float)] {
            line(label + String(format: "   Δp: %6.3f%%", 100 * Self.percentile(pd, f)))
        }
        line(String(format: "Minimum Δp: %6.3f%%", 100 * (pd.first ?? 0)))
        let mse = Self.meanAndUncertainty(sumPDiff2, sumPDiff4, count)
        let rms = mse.0.squareRoot()
        line(String(format: "RMS Δp    : %6.3f ± %5.3f %%", 100 * rms, rms > 0 ? 100 * 0.5 / rms * mse.1 : 0))
        let top = sameTopFraction
        line(String(format: "Same top p: %6.3f ± %5.3f %%", 100 * top, count > 1 ? 100 * (top * (1 - top) / Double(count - 1)).squareRoot() : 0))
        return out.joined(separator: "\n") + "\n"
    }

    /// Scores `model` on the file's chunks (the first `maxChunks`, when given) as
    /// `llama-perplexity --kl-divergence` does: each chunk's first id replaced by `bos` (when
    /// the tokenizer adds one), positions n_ctx/2 ..< n_ctx − 1 compared with the base rows.
    public static func score(
        _ model: any LanguageModel, base: LlamaLogitsFile, bos: Int32?, maxChunks: Int? = nil, pool: ThreadPool,
        kvType: KVCacheType, interrupt: InterruptFlag = InterruptFlag(), progress: (Int, Int) -> Void = { _, _ in }
    ) throws -> LlamaKLDivergence {
        let vocab = model.config.vocabSize
        guard vocab == base.vocab else {
            throw LocatedError(path: base.path, "n_vocab \(base.vocab) differs from the model's vocabulary of \(vocab)")
        }
        guard base.context <= model.config.contextLength else {
            throw LocatedError(path: base.path, "n_ctx \(base.context) exceeds the model's context of \(model.config.contextLength)")
        }
        let n = min(maxChunks ?? base.chunks, base.chunks)
        let ids = Array(base.tokens.prefix(n * base.context))
        let windows = try PerplexityWindows(llamaPerplexityIDs: ids, bos: bos, context: base.context, chunks: n, path: base.path, minimumChunks: 1)
        let state = model.makeState(contextLength: base.context, pool: pool, kvType: kvType)
        var kld = LlamaKLDivergence()
        for (c, win) in windows.windows.enumerated() {
            if interrupt.isSet { throw BenchInterrupted() }
            progress(c, n)
            let logits = try QuantEvaluation.scoredLogits(model, win, state: state, vocab: vocab)
            logits.withUnsafeBufferPointer { all in
                for r in 0..<base.rowsPerChunk {
                    let row = UnsafeBufferPointer(rebasing: all[(r * vocab)..<((r + 1) * vocab)])
                    base.withRow(chunk: c, row: r) { scale, minLogProb, q in
                        kld.add(logits: row, scale: scale, minLogProb: minLogProb, base: q, token: Int(win.targets[r]))
                    }
                }
            }
        }
        return kld
    }
}
