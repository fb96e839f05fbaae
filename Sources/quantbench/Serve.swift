import ArgumentParser
import Foundation
import QBKernels
import QBRunner
import QBServe

/// `quantbench serve`: an OpenAI-compatible HTTP server on the engine, with continuous
/// batching of up to `--parallel` sequences.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the model over an OpenAI-compatible HTTP API (chat and text completions, streaming, metrics).",
        discussion: """
            Endpoints: POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /health, \
            GET /metrics (Prometheus). Up to --parallel sequences decode together in one batched step; \
            further requests wait in a queue of --queue entries, and a full queue answers 503. SIGTERM \
            lets running streams finish for --shutdown-grace seconds, then aborts them.
            """)

    @OptionGroup var options: ModelOptions

    @Option(help: "Address to listen on (loopback by default).")
    var host: String = "127.0.0.1"

    @Option(help: "Port to listen on (0: any free port, printed at start).")
    var port: Int = 8080

    @Option(help: "Sequences decoded together at most (KV cache slots).")
    var parallel: Int = 4

    @Option(help: "KV cache positions per slot (prompt and completion; default: the model's context, at most \(ChatSetupOptions.defaultContextCap)).")
    var ctx: Int?

    @Option(name: .customLong("kv-budget"), help: "Bytes of KV cache admitted requests may reserve together (prompt + max_tokens positions each; default: every slot's full context).")
    var kvBudget: Int?

    @Option(help: "Requests waiting for a slot at most; more answer 503 with Retry-After.")
    var queue: Int = 64

    @Option(name: .customLong("prefill-chunk"), help: "Prompt positions prefilled per step, so long prompts interleave with decoding sequences.")
    var prefillChunk: Int = 64

    @Option(name: .customLong("model-name"), help: "The model id /v1/models lists and requests name (default: the model file's name).")
    var modelName: String?

    @Option(name: .customLong("max-body"), help: "Largest request body in bytes (larger: 413).")
    var maxBody: Int = 1 << 20

    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may send nothing (slow headers) before it is closed.")
    var idleTimeout: Int = 30

    @Option(name: .customLong("shutdown-grace"), help: "Seconds running streams may go on after SIGTERM.")
    var shutdownGrace: Double = 10

    @Option(name: .customLong("bench-batch"), help: "Instead of serving: time batched decode steps at these batch sizes (e.g. 1,2,4,8) and exit.")
    var benchBatch: String?

    func validate() throws {
        guard (1...256).contains(parallel) else { throw ValidationError("--parallel must be between 1 and 256") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard queue >= 0 else { throw ValidationError("--queue must be >= 0") }
        guard prefillChunk >= 1 else { throw ValidationError("--prefill-chunk must be >= 1") }
        guard maxBody >= 1024 else { throw ValidationError("--max-body must be at least 1024") }
        guard idleTimeout >= 1 else { throw ValidationError("--idle-timeout must be at least 1") }
        if let b = kvBudget, b < 1 { throw ValidationError("--kv-budget must be positive") }
    }

    func run() async throws {
        let pool = try options.makePool()
        var load = options.loadOptions
        load.chatTemplate = .tokenizers
        let prepared = try ModelPipeline.load(load, pool: pool)
        let maximum = prepared.model.config.contextLength
        let context = ctx ?? min(maximum, ChatSetupOptions.defaultContextCap)
        guard context >= 2, context <= maximum else {
            throw ValidationError("--ctx must be between 2 and the model's context (\(maximum))")
        }
        if let sizes = benchBatch {
            let bs = sizes.split(separator: ",").compactMap { Int($0) }.filter { $0 >= 1 && $0 <= 256 }
            guard !bs.isEmpty else { throw ValidationError("--bench-batch takes batch sizes such as 1,2,4,8") }
            print("CPU: \(CPUInfo.modelName), kernel set \(KernelSet.active.name), \(pool.threadCount) threads")
            let kernels = BatchBenchmark.kernels(model: prepared.model, pool: pool, sizes: bs)
            print("layer 0 gate+up product, medians (cpu: the calling thread's; all of it at --threads 1)")
            if let gate = prepared.model.weights.layers.first?.gate, !(gate.format == .ggml(.q4_0) && gate.layout == .interleaved4) {
                // Only Q4_0 in four-row groups has a four-row kernel to compare with.
                print("(layer 0's gate is not Q4_0 in four-row groups: the four-row columns and rows run the engine's kernels too)")
            }
            print("batch  engine-us  vs-B1  GB/s  GMAC/s  engine-cpu-us  vs-B1  four-row-us  vs-B1  four-row-cpu-us  vs-B1")
            for r in kernels {
                let base = kernels[0], n = Double(base.batch)
                print(String(
                    format: "%5d  %9.1f  %5.2fx  %5.1f  %6.1f  %13.1f  %5.2fx  %11.1f  %5.2fx  %15.1f  %5.2fx", r.batch,
                    r.bestMicroseconds, r.bestMicroseconds / base.bestMicroseconds * n, Double(r.weightBytes) / r.bestMicroseconds / 1e3,
                    Double(r.multiplyAdds) / r.bestMicroseconds / 1e3, r.bestCPUMicroseconds,
                    r.bestCPUMicroseconds / base.bestCPUMicroseconds * n, r.fourRowMicroseconds,
                    r.fourRowMicroseconds / base.fourRowMicroseconds * n, r.fourRowCPUMicroseconds,
                    r.fourRowCPUMicroseconds / base.fourRowCPUMicroseconds * n))
            }
            let rows = try BatchBenchmark.run(
                model: prepared.model, pool: pool, kvType: prepared.kvType, sizes: bs, kernels: [.best, .fourRow])
            print("whole step, medians: kernel  batch  ms/step  tokens/s  speedup  cpu-ms/step  cpu-speedup  prefill-chunk-ms (same rows, tile path)")
            for r in rows {
                guard let base = rows.first(where: { $0.kernel == r.kernel }) else { continue }
                let speedup = r.tokensPerSecond / base.tokensPerSecond * Double(base.batch)
                let cpuSpeedup = base.cpuMsPerStep / Double(base.batch) * Double(r.batch) / r.cpuMsPerStep
                print((r.kernel == .best ? "engine  " : "four-row") + String(
                    format: "  %5d  %7.2f  %8.1f  %6.2fx  %8.2f  %6.2fx  %8.2f", r.batch, r.msPerStep, r.tokensPerSecond, speedup,
                    r.cpuMsPerStep, cpuSpeedup, r.prefillChunkMs))
            }
            return
        }
        guard let format = prepared.chatFormat else { throw ValidationError("no chat format") }
        let limits = SchedulerLimits(
            parallel: parallel, contextLength: context, kvBudget: kvBudget, queueLimit: queue, prefillChunk: prefillChunk)
        let scheduler = BatchScheduler(
            model: prepared.model, tokenizer: prepared.tokenizer, pool: pool, kvType: prepared.kvType, limits: limits)
        let name = modelName ?? URL(fileURLWithPath: prepared.path).lastPathComponent
        var o = ServeOptions(modelName: name, limits: limits)
        o.host = host
        o.port = port
        o.maxBodyBytes = maxBody
        o.idleTimeoutSeconds = idleTimeout
        o.shutdownGraceSeconds = shutdownGrace
        let threads = pool.threadCount, h = host
        o.onListening = { port in
            FileHandle.standardError.write(Data(
                "quantbench serve: \(name) on http://\(h):\(port) (\(limits.parallel) slots of \(context) positions, \(prepared.kvType.rawValue) KV, \(threads) threads, \(format.summary))\n".utf8))
        }
        try await Server.run(api: ServeAPI(scheduler: scheduler, tokenizer: prepared.tokenizer, chatFormat: format, options: o))
    }
}
