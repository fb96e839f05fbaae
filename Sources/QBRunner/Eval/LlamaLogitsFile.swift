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

/// The per-position figures of `llama-perplexity --kl-divergence` from a model's logits and
/// a base file's row, computed as perplexity.cpp's `log_softmax(n_vocab, logits,
/// base_log_prob, tok, kld)` computes them (f32 where it uses f32, the softmax sum in f64,
/// base log-probabilities below −16 left out of the KL); the statistics over positions are
/// `LlamaKLDivergence`'s, shared with `eval --models/--reference`.
extension LlamaKLDivergence {
    public mutating func add(logits: UnsafeBufferPointer<Float>, scale: Float, minLogProb: Float, base: UnsafeBufferPointer<UInt16>, token: Int) {
        let n = logits.count
        var maxLogit = logits[0]
        var imax = 0
        for i in 1..<n where logits[i] > maxLogit { maxLogit = logits[i]; imax = i }
        var sumExp = 0.0
        for i in 0..<n { sumExp += Double(expf(logits[i] - maxLogit)) }
        let logSumExp = Float(log(sumExp))
        let nll: Float = maxLogit + logSumExp - logits[token]
        let nllBase: Float = -(scale * Float(base[token]) + minLogProb)
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
        add(kl: sum, nll: Double(nll), nllBase: Double(nllBase), pDiff: expf(-nll) - expf(-nllBase), sameTop: imax == imaxBase)
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
