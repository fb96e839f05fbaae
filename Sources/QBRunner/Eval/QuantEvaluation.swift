import Foundation
import QBGeneration
import QBKernels
import QBModel
import QBText

/// `eval`: quantization settings side by side on one model and one text. Per setting:
/// size and bits per weight (with the mix of formats the fallbacks made), prefill and
/// decode speed, peak memory, perplexity over the text (`PerplexityWindows`), and KL
/// divergence and top-1 agreement against the highest-precision setting (the one with
/// the most bits per weight; the first listed on a tie), all on the same windows.
public struct QuantEvaluation: Sendable {
    public var quants: [String]
    /// Window size in positions (default: the model's context, at most 512, as llama.cpp's
    /// perplexity tool defaults to 512).
    public var context: Int?
    public var separator: String?
    /// Cap on the ids scored (nil: the whole text).
    public var maxTokens: Int?
    /// How the text is cut into windows (`PerplexityWindows.Mode`).
    public var windowMode: PerplexityWindows.Mode = .scoreAll
    /// With `.llamaPerplexity`: the first this many chunks (nil: all), as `--chunks`.
    public var chunks: Int?
    public var repetitions: Int = 3
    public var warmup: Int = 1
    /// Speed tests: llama-bench's pp and tg with these lengths.
    public var promptTokens: Int = 128
    public var generateTokens: Int = 32
    public var seed: UInt64 = BenchRunner.defaultSeed
    /// KV cache precision, as every other command runs (`--kv-type`, default f16).
    public var kvType: KVCacheType = .f16
    /// Model files compared as they are (`--models`: GGUF files, MLX or Hugging Face
    /// folders quantized by any tool), beside the settings of `quants`.
    public var files: [String] = []
    /// The file every other entry is compared with (`--reference`); without it the entry
    /// with the most bits per weight.
    public var referenceFile: String?
    public var interrupt = InterruptFlag()
    public var progress: @Sendable (String) -> Void = { _ in }

    public init(quants: [String], context: Int? = nil, separator: String? = nil, maxTokens: Int? = nil) {
        self.quants = quants
        self.context = context
        self.separator = separator
        self.maxTokens = maxTokens
    }

    /// Every figure, plus the per-token negative log-likelihoods (for paired comparisons
    /// between settings; not written to the JSON).
    public struct Run: Sendable {
        public var result: EvalResult
        /// Setting name → NLL of each predicted id, in window order.
        public var nll: [String: [Double]]

        /// Mean and standard error of NLL(b) − NLL(a), paired by token: whether `b` is worse
        /// than `a` beyond the statistical error.
        public func pairedDifference(_ a: String, _ b: String) -> (mean: Double, standardError: Double)? {
            guard let x = nll[a], let y = nll[b], x.count == y.count, x.count > 1 else { return nil }
            let d = zip(y, x).map { $0 - $1 }
            let mean = d.reduce(0, +) / Double(d.count)
            return (mean, Statistics.standardDeviation(d) / Double(d.count).squareRoot())
        }
    }

    /// The logits of a window's scored positions, `[targets.count][vocab]`, from an empty
    /// cache: the unscored prefix is prefilled without logits.
    static func scoredLogits(_ model: any LanguageModel, _ win: PerplexityWindows.Window, state: InferenceState, vocab: Int) throws -> [Float] {
        state.cache.truncate(to: 0)
        if win.scoredFrom > 0 { _ = try model.forward(Array(win.input[..<win.scoredFrom]), state: state, logits: .none) }
        return Array(try model.forward(Array(win.input[win.scoredFrom...]), state: state, logits: .all).prefix(win.targets.count * vocab))
    }

    /// One column of the comparison: a setting of the base model or a file as it is.
    struct Entry {
        enum Source { case quant(QuantSpec), file(String, any LanguageModel) }
        var name: String
        var source: Source
        /// Nominal (settings) or measured (files) bits per weight, for choosing the reference.
        var bits: Double
    }

    /// Nominal bits per weight of a setting's format, for choosing the reference.
    static func nominalBits(_ spec: QuantSpec) -> Double {
        Double(spec.format.byteCount(rows: 1, cols: 256) * 8) / 256
    }

    /// `base` is the model as opened (`ModelPipeline.open`); each setting goes through
    /// `ModelPipeline.prepare`, as every command's model does.
    public func run(model base: any LanguageModel, tokenizer: any Tokenizer, textPath: String, pool: ThreadPool, modelHash: String) throws -> Run {
        guard !quants.isEmpty || !files.isEmpty || referenceFile != nil else {
            throw LocatedError(path: "--quants", "name at least one setting (or --models files)")
        }
        let quantSpecs = try quants.map { try QuantSpec($0) }
        guard Set(quantSpecs.map(\.name)).count == quantSpecs.count else { throw LocatedError(path: "--quants", "a setting is listed twice") }
        guard let data = FileManager.default.contents(atPath: textPath) else { throw LocatedError(path: textPath, "cannot read the text") }
        guard let text = String(data: data, encoding: .utf8) else { throw LocatedError(path: textPath, "the text is not UTF-8") }
        let window = min(context ?? min(base.config.contextLength, 512), base.config.contextLength)
        let windows: PerplexityWindows
        switch windowMode {
        case .scoreAll:
            windows = PerplexityWindows(text: text, tokenizer: tokenizer, context: window, separator: separator, maxTokens: maxTokens)
        case .llamaPerplexity:
            windows = try PerplexityWindows(llamaPerplexityText: text, tokenizer: tokenizer, context: window, chunks: chunks, path: textPath)
        }
        guard windows.predictedTokens > 1 else { throw LocatedError(path: textPath, "the text gives fewer than two ids to score") }
        let vocab = base.config.vocabSize

        // Every entry: a setting of the base model, or a file as it is. Files must share the
        // vocabulary and tokenize the text as the base does, so positions line up.
        var entries: [Entry] = quantSpecs.map { Entry(name: $0.name, source: .quant($0), bits: Self.nominalBits($0)) }
        let sample = String(text.prefix(4000))
        let expectedIDs = tokenizer.encode(sample, addSpecialTokens: false, parseSpecialTokens: false)
        for path in (referenceFile.map { [$0] } ?? []) + files {
            let m = try ModelPipeline.open(path: path)
            guard m.config.vocabSize == vocab else {
                throw LocatedError(path: path, "has \(m.config.vocabSize) vocabulary entries where \(base.source.path) has \(vocab); KL needs one vocabulary")
            }
            if let t = try? ModelPipeline.tokenizer(for: m, path: nil),
               t.encode(sample, addSpecialTokens: false, parseSpecialTokens: false) != expectedIDs {
                throw LocatedError(path: path, "tokenizes \(textPath) differently from \(base.source.path); KL needs the same ids")
            }
            var name = URL(fileURLWithPath: path).lastPathComponent
            while entries.contains(where: { $0.name == name }) { name += "'" }
            entries.append(Entry(name: name, source: .file(path, m), bits: m.bitsPerWeight))
        }
        let specs = entries

        // The reference first, so every other setting is compared with it window by window.
        let referenceIndex = referenceFile != nil ? quantSpecs.count : (specs.indices.max { specs[$0].bits < specs[$1].bits || (specs[$0].bits == specs[$1].bits && $0 > $1) } ?? 0)
        let order = [referenceIndex] + specs.indices.filter { $0 != referenceIndex }
        let referenceName = specs[referenceIndex].name

        // Keep the reference's logits when they fit in 1 GiB; recompute them otherwise.
        let logitBytes = windows.windows.reduce(0) { $0 + $1.targets.count } * vocab * 4
        var stored: [[Float]]? = logitBytes <= 1 << 30 ? [] : nil
        var referenceModel: (any LanguageModel)?
        var settings: [EvalSetting?] = Array(repeating: nil, count: specs.count)
        var nll: [String: [Double]] = [:]

        for i in order {
            if interrupt.isSet { throw BenchInterrupted() }
            let spec = specs[i]
            progress("\(spec.name): converting")
            let peakReset = MemoryStats.resetPeak()
            let clock = ContinuousClock()
            let t0 = clock.now
            let model: any LanguageModel
            switch spec.source {
            case .quant(let q): model = try ModelPipeline.prepare(base, spec: q, pool: pool)
            case .file(_, let m): model = try ModelPipeline.prepare(m, spec: nil, pool: pool)
            }
            let conversion = (clock.now - t0).seconds
            if i == referenceIndex { referenceModel = model }
            let isReference = i == referenceIndex

            progress("\(spec.name): scoring \(windows.predictedTokens) tokens in \(windows.windows.count) windows")
            let state = model.makeState(contextLength: window, pool: pool, kvType: kvType)
            let referenceState = !isReference && stored == nil ? referenceModel?.makeState(contextLength: window, pool: pool, kvType: kvType) : nil
            var nlls: [Double] = []
            var kls: [Double] = []
            var sameTop: [Bool] = []
            for (w, win) in windows.windows.enumerated() {
                if interrupt.isSet { throw BenchInterrupted() }
                let n = win.targets.count
                let logits = try Self.scoredLogits(model, win, state: state, vocab: vocab)
                nlls += QualityMetrics.negativeLogLikelihoods(logits: logits, targets: win.targets, vocab: vocab)
                let reference: [Float]
                if isReference {
                    reference = logits
                    stored?.append(logits)
                } else if let s = stored {
                    reference = s[w]
                } else if let r = referenceModel, let rs = referenceState {
                    reference = try Self.scoredLogits(r, win, state: rs, vocab: vocab)
                } else {
                    reference = logits
                }
                for t in 0..<n {
                    let rows = (t * vocab)..<((t + 1) * vocab)
                    kls.append(isReference ? 0 : QualityMetrics.klDivergence(reference: reference[rows], candidate: logits[rows]))
                    sameTop.append(QualityMetrics.sameTop(reference[rows], logits[rows]))
                }
            }
            nll[spec.name] = nlls
            // The reference is scored first, so its NLLs pair with these position by position.
            // Δp: the change in the probability of the id that came next.
            let referenceNLL = nll[referenceName] ?? nlls
            var statistics = LlamaKLDivergence()
            for t in nlls.indices {
                statistics.add(
                    kl: kls[t], nll: nlls[t], nllBase: referenceNLL[t], pDiff: Float(exp(-nlls[t]) - exp(-referenceNLL[t])),
                    sameTop: sameTop[t])
            }
            let vsReference = statistics.statistics

            progress("\(spec.name): speed")
            var speeds: [ThroughputTest.Test: [Double]] = [:]
            for test in [ThroughputTest(test: .prompt, tokens: min(promptTokens, window)), ThroughputTest(test: .generate, tokens: generateTokens)] {
                try ThroughputRunner.measure(
                    model: model, state: model.makeState(contextLength: test.tokens, pool: pool, kvType: kvType), test: test,
                    repetitions: repetitions, warmup: warmup, seed: seed, interrupt: interrupt
                ) { run, seconds, _ in
                    if run >= warmup, seconds > 0 { speeds[test.test, default: []].append(Double(test.tokens) / seconds) }
                }
            }
            let memory = MemoryStats.current()

            let count = Double(nlls.count)
            let meanNLL = nlls.reduce(0, +) / count
            let nllSE = Statistics.standardDeviation(nlls) / count.squareRoot()
            var source: String?
            if case .file(let path, _) = spec.source { source = path }
            settings[i] = EvalSetting(
                source: source, name: spec.name, weightBytes: model.source.tensors.reduce(0) { $0 + $1.bytes },
                bitsPerWeight: model.bitsPerWeight, formats: model.tensorFormatMix, conversionSeconds: conversion,
                prefillTokensPerSecond: Estimate(speeds[.prompt] ?? []), decodeTokensPerSecond: Estimate(speeds[.generate] ?? []),
                peakResidentBytes: memory.peakResidentBytes, allocatedBytes: memory.allocatedBytes, peakWasReset: peakReset,
                tokens: nlls.count, meanNLL: meanNLL, nllStandardError: nllSE, perplexity: exp(meanNLL),
                perplexityLow: exp(meanNLL - 1.96 * nllSE), perplexityHigh: exp(meanNLL + 1.96 * nllSE),
                deltaNLL: 0, deltaNLLStandardError: 0,
                // The summary's KL figures, so the table and vs_reference agree to the digit.
                meanKL: vsReference.klDivergence.mean, klStandardError: vsReference.klDivergence.standardError,
                maxKL: vsReference.klDivergence.maximum, top1Agreement: vsReference.sameTopP, vsReference: vsReference)
        }

        var result = settings.compactMap { $0 }
        let run0 = Run(result: EvalResult(
            createdAt: BenchRunner.timestamp(Date()), environment: .current(threads: pool.threadCount),
            model: .init(path: base.source.path, format: base.source.format.rawValue, fileHash: modelHash, parameters: base.parameterCount),
            text: .init(path: textPath, hash: XXH64.hex(data), bytes: data.count, documents: windows.documents, separator: separator),
            window: .init(
                context: window, stride: windows.mode == .llamaPerplexity || windows.bos == nil ? window : window - 1, bos: windows.bos,
                predictedTokens: windows.predictedTokens, windows: windows.windows.count,
                mode: windows.mode == .scoreAll ? nil : windows.mode.rawValue),
            speed: .init(promptTokens: min(promptTokens, window), generateTokens: generateTokens, repetitions: repetitions, warmup: warmup),
            reference: referenceName, settings: result), nll: nll)
        for j in result.indices {
            if let d = run0.pairedDifference(referenceName, result[j].name) {
                result[j].deltaNLL = d.mean
                result[j].deltaNLLStandardError = d.standardError
            }
        }
        var out = run0
        out.result.settings = result
        return out
    }
}

/// What `eval` writes (schema "quantbench.eval", documented in results/README.md).
public struct EvalResult: Codable, Sendable {
    public static let schemaName = "quantbench.eval"
    public static let currentSchemaVersion = 1

    public var schema = EvalResult.schemaName
    public var schemaVersion = EvalResult.currentSchemaVersion
    public var createdAt: String
    public var environment: EnvironmentInfo
    public var model: Model
    public var text: Text
    public var window: Window
    public var speed: Speed
    /// The setting KL divergence and top-1 agreement are measured against.
    public var reference: String
    public var settings: [EvalSetting]

    public struct Model: Codable, Sendable {
        public var path: String
        public var format: String
        public var fileHash: String
        public var parameters: Int
        enum CodingKeys: String, CodingKey { case path, format, fileHash = "file_hash", parameters }
    }

    public struct Text: Codable, Sendable {
        public var path: String
        public var hash: String
        public var bytes: Int
        public var documents: Int
        public var separator: String?
    }

    public struct Window: Codable, Sendable {
        /// Positions per window (BOS included).
        public var context: Int
        /// Text ids advanced per window (context − 1 with BOS).
        public var stride: Int
        public var bos: Int32?
        public var predictedTokens: Int
        public var windows: Int
        /// "llama-perplexity" for llama.cpp's chunks (absent: the default windows).
        public var mode: String?
        enum CodingKeys: String, CodingKey { case context, stride, bos, predictedTokens = "predicted_tokens", windows, mode }
    }

    public struct Speed: Codable, Sendable {
        public var promptTokens: Int
        public var generateTokens: Int
        public var repetitions: Int
        public var warmup: Int
        enum CodingKeys: String, CodingKey {
            case promptTokens = "prompt_tokens", generateTokens = "generate_tokens", repetitions, warmup
        }
    }

    enum CodingKeys: String, CodingKey {
        case schema, schemaVersion = "schema_version", createdAt = "created_at", environment, model, text, window, speed
        case reference, settings
    }
}

/// One quantization setting's figures.
public struct EvalSetting: Codable, Sendable {
    /// The file compared (`eval --models`/`--reference`); nil for a setting made from the
    /// base model by `--quants`.
    public var source: String?
    public var name: String
    /// Bytes of the weights as converted at load (norms included): for settings made by
    /// --quant, the size a file in that format would hold for the weights.
    public var weightBytes: Int
    public var bitsPerWeight: Double
    /// Format → tensor count (the fallbacks: matrices whose width does not divide into
    /// the setting's blocks keep another format).
    public var formats: [String: Int]
    public var conversionSeconds: Double
    public var prefillTokensPerSecond: Estimate?
    public var decodeTokensPerSecond: Estimate?
    /// VmHWM over converting, scoring and timing this setting (reset at its start when
    /// `peak_was_reset`); tcmalloc's allocated bytes at its end.
    public var peakResidentBytes: Int?
    public var allocatedBytes: Int?
    public var peakWasReset: Bool
    public var tokens: Int
    public var meanNLL: Double
    public var nllStandardError: Double
    public var perplexity: Double
    /// exp(mean NLL ∓ 1.96 standard errors).
    public var perplexityLow: Double
    public var perplexityHigh: Double
    /// Mean NLL minus the reference's, paired by token, and its standard error.
    public var deltaNLL: Double
    public var deltaNLLStandardError: Double
    public var meanKL: Double
    public var klStandardError: Double
    public var maxKL: Double
    public var top1Agreement: Double
    /// llama-perplexity's KL-divergence statistics against the reference.
    public var vsReference: ReferenceStatistics?

    enum CodingKeys: String, CodingKey {
        case source, vsReference = "vs_reference"
        case name, weightBytes = "weight_bytes", bitsPerWeight = "bits_per_weight", formats, conversionSeconds = "conversion_s"
        case prefillTokensPerSecond = "prefill_tokens_per_s", decodeTokensPerSecond = "decode_tokens_per_s"
        case peakResidentBytes = "peak_rss_bytes", allocatedBytes = "tcmalloc_allocated_bytes", peakWasReset = "peak_was_reset"
        case tokens, meanNLL = "mean_nll", nllStandardError = "nll_se", perplexity, perplexityLow = "perplexity_low"
        case perplexityHigh = "perplexity_high", deltaNLL = "delta_nll", deltaNLLStandardError = "delta_nll_se"
        case meanKL = "mean_kl", klStandardError = "kl_se", maxKL = "max_kl", top1Agreement = "top1_agreement"
    }
}

extension EvalResult {
    /// The comparison table (Markdown).
    public var markdown: String {
        var out: [String] = []
        out.append("# QuantBench eval: \(URL(fileURLWithPath: model.path).lastPathComponent)")
        out.append("")
        out.append("- **model**: `\(model.path)` (\(model.format)), xxh64 `\(model.fileHash)`, \(BenchReport.formatCount(model.parameters)) parameters")
        out.append("- **text**: `\(text.path)` (\(text.bytes) bytes, \(text.documents) document\(text.documents == 1 ? "" : "s"), xxh64 `\(text.hash)`)")
        if window.mode == PerplexityWindows.Mode.llamaPerplexity.rawValue {
            out.append("- **windows**: llama-perplexity's: the text tokenized once, its first \(window.windows) chunks of \(window.context) ids, "
                + (window.bos.map { "each chunk's first id replaced by BOS (\($0)), " } ?? "") + "positions \(window.context / 2) to \(window.context - 2) scored; \(window.predictedTokens) ids scored")
        } else {
            out.append("- **windows**: \(window.windows) non-overlapping windows of \(window.context) positions"
                + (window.bos.map { ", each BOS (\($0)) then \(window.stride) text ids" } ?? ", no BOS") + "; \(window.predictedTokens) ids scored, each once")
        }
        out.append("- **speed**: pp\(speed.promptTokens) and tg\(speed.generateTokens), median of \(speed.repetitions) after \(speed.warmup) warmup; \(environment.threads) thread\(environment.threads == 1 ? "" : "s"), \(environment.buildConfiguration) build, \(environment.cpu)")
        out.append("- **reference** for KL and top-1: \(reference); ± is one standard error (tokens are not independent, so it understates the uncertainty somewhat)")
        out.append("")
        out.append("| setting | size | bits/weight | formats | prefill t/s | decode t/s | peak RSS | perplexity [95%] | ΔNLL vs ref | KL vs ref (nats) | top-1 |")
        out.append("| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for s in settings {
            let prefill = s.prefillTokensPerSecond.map { BenchReport.format($0.median) } ?? "–"
            let decode = s.decodeTokensPerSecond.map { BenchReport.format($0.median) } ?? "–"
            out.append("| \(s.name) | \(ModelReport.formatBytes(s.weightBytes)) | \(String(format: "%.2f", s.bitsPerWeight)) | \(BenchReport.formatMix(s.formats)) | "
                + "\(prefill) | \(decode) | \(s.peakResidentBytes.map(ModelReport.formatBytes) ?? "–") | "
                + String(format: "%.4f [%.4f, %.4f]", s.perplexity, s.perplexityLow, s.perplexityHigh) + " | "
                + String(format: "%+.5f ± %.5f", s.deltaNLL, s.deltaNLLStandardError) + " | "
                + String(format: "%.2e ± %.1e", s.meanKL, s.klStandardError) + " | "
                + String(format: "%.2f%%", s.top1Agreement * 100) + " |")
        }
        let compared = settings.filter { $0.name != reference && $0.vsReference != nil }
        if !compared.isEmpty {
            out.append("")
            out.append("Against \(reference), as `llama-perplexity --kl-divergence` reports (± one standard error; Δp is the change in the probability of the id that came next):")
            out.append("")
            out.append("| setting | PPL ratio | mean KL | median KL | KL p99 | KL p99.9 | max KL | mean Δp | RMS Δp | Δp p1 | Δp p99 | same top |")
            out.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            for s in compared {
                guard let v = s.vsReference else { continue }
                let k = v.klDivergence, d = v.deltaP
                out.append("| \(s.name) | " + String(format: "%.4f ± %.4f", v.perplexityRatio, v.perplexityRatioStandardError)
                    + String(format: " | %.2e ± %.1e | %.2e | %.2e | %.2e | %.2e", k.mean, k.standardError, k.median, k.p99, k.p999, k.maximum)
                    + String(format: " | %+.3f%% ± %.3f%% | %.3f%% ± %.3f%% | %+.3f%% | %+.3f%%", 100 * d.mean, 100 * d.standardError, 100 * v.rmsDeltaP, 100 * v.rmsDeltaPStandardError, 100 * d.p01, 100 * d.p99)
                    + String(format: " | %.2f%% ± %.2f%% |", 100 * v.sameTopP, 100 * v.sameTopPStandardError))
            }
        }
        let files = settings.filter { $0.source != nil }
        if !files.isEmpty {
            out.append("")
            for s in files where s.source != s.name { out.append("- `\(s.name)`: \(s.source ?? "")") }
        }
        if let r = settings.first(where: { $0.name == reference }) {
            out.append("")
            out.append(String(format: "Reference mean NLL %.4f ± %.4f nats per token (perplexity %.4f).", r.meanNLL, r.nllStandardError, r.perplexity))
        }
        if window.mode == PerplexityWindows.Mode.llamaPerplexity.rawValue {
            out.append("")
            out.append("As llama-perplexity prints it (`Final estimate: PPL = x +/- y`, y = perplexity × standard error of the mean NLL):")
            for s in settings { out.append("- \(s.name): " + String(format: "PPL = %.4f +/- %.5f", s.perplexity, s.perplexity * s.nllStandardError)) }
        }
        return out.joined(separator: "\n") + "\n"
    }
}
