#if canImport(Glibc)
import Glibc
#endif
import QBKernels
import QBSupport
import QBFormats

extension LanguageModel {
    /// This model with every Q4_0, Q4_1, Q5_0, Q5_1 and Q8_0 matrix repacked into the four-row
    /// interleaved layout decode streams fastest, and every Q4_K and MLX matrix (Q6_K too on the
    /// AVX-512 kernel set) into
    /// sixteen-row groups (`Matrix.interleavedForDecode`). The file pages the originals
    /// occupied are handed back to the kernel, so the weights are not held twice.
    /// Logits are unchanged up to summation order; prefill dequantizes either layout.
    public func interleavedForDecode(pool: ThreadPool) throws -> Self {
        var done: [UnsafeRawPointer: Matrix] = [:]
        let w = weights
        let all = w.layers.flatMap { $0.matrices.map(\.1) } + [w.output]
        // What each matrix becomes, decided once: interleaved where it has that layout,
        // otherwise (when mapped) a plain copy in huge pages; the bytes it then takes.
        func bytes(_ m: Matrix) -> Int? { m.interleavedBytes ?? (m.owner is MappedFile && m.wantsResidentCopy ? m.valueBytes : nil) }
        var seen = Set<UnsafeRawPointer>()
        let sizes = all.compactMap { m in seen.insert(m.base).inserted ? bytes(m) : nil }
        let arena = sizes.isEmpty ? nil : WeightArena(bytes: WeightArena.bytes(for: sizes))
        // Progress in bytes repacked (LongWork; an interrupt throws).
        LongWork.begin("repacking the weights for decode", total: sizes.reduce(0, +))
        defer { LongWork.end() }
        func convert(_ m: Matrix) throws -> Matrix {
            if let d = done[m.base] { return d }
            try LongWork.checkpoint()
            defer { if let b = bytes(m) { try? LongWork.advance(b) } }
            guard bytes(m) != nil,
                let out = m.interleavedForDecode(pool: pool, arena: arena) ?? m.residentCopy(pool: pool, arena: arena)
            else { return m }
            if let file = m.owner as? MappedFile { m.releaseStorage(in: file, keepingScales: out.scales != nil) }
            done[m.base] = out
            return out
        }
        let layers = try w.layers.map { l in try l.mapMatrices { _, m in try convert(m) } }
        // An untied embedding is only gathered from, a row per token: it stays mapped.
        let output = try convert(w.output)
        let repacked = ModelWeights(
            embedding: w.embedding.base == w.output.base ? output : w.embedding, layers: layers, finalNorm: w.finalNorm, output: output)
        if done.isEmpty { return self }
        return try replacing(weights: repacked)
    }
}

extension Matrix {
    /// Drops the file pages behind this matrix's values, and behind its MLX scales and biases
    /// unless the converted matrix still reads them (a plain copy does; the sixteen-row
    /// layout holds its own).
    func releaseStorage(in file: MappedFile, keepingScales: Bool) {
        file.release(base, count: valueBytes)
        if !keepingScales, case .mlx(let q) = format, let scales, let biases {
            let n = rows * (cols / q.groupSize) * q.scaleType.size
            file.release(scales, count: n)
            file.release(biases, count: n)
        }
    }
}

extension MappedFile {
    /// Drops this process's mapping of the whole pages inside `[pointer, pointer + count)`
    /// (they stay in the page cache; touching them again maps them back).
    func release(_ pointer: UnsafeRawPointer, count: Int) {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let start = (Int(bitPattern: pointer) + page - 1) / page * page
        let end = (Int(bitPattern: pointer) + count) / page * page
        let lo = Int(bitPattern: base), hi = lo + size
        guard end > start, start >= lo, end <= hi else { return }
        _ = madvise(UnsafeMutableRawPointer(bitPattern: start), end - start, Int32(MADV_DONTNEED))
    }
}
