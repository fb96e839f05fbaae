import ArgumentParser
import Foundation
import QBGeneration
import QBRunner

/// `quantbench chat`: the terminal side of a chat (flags, the progress bar, standard
/// input and output, Ctrl-C). The conversation itself is `ChatEngine`'s.
struct Chat: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Chat with a model in the terminal, or run a scripted chat as a smoke test (--smoke).",
        discussion: """
            Replies stream as they are generated. Multi-turn chats use the model's chat template \
            (a model without one gets plain continuation) and reuse the KV cache from turn to turn; \
            when the history no longer fits the context, the oldest turns are dropped. Ctrl-C stops \
            the reply being generated, Ctrl-D exits; /help lists the commands.
            """)

    @OptionGroup var options: ModelOptions
    @OptionGroup var sampling: SamplingOptions

    @Option(help: "System prompt (also settable in the chat with /system TEXT).")
    var system: String?

    @Option(name: [.customShort("n"), .customLong("max-tokens")], help: "Most tokens per reply (llama.cpp's -n).")
    var maxTokens: Int = 256

    @Option(help: "KV cache size in positions (default: the model's context, at most \(ChatSetupOptions.defaultContextCap)).")
    var ctx: Int?

    @Option(name: .customLong("stop"), help: "End a reply when it contains this text, which is not shown (repeatable).")
    var stop: [String] = []

    @Option(name: .customLong("chat-template"), help: "A Jinja chat template file to use instead of the model's own.")
    var chatTemplate: String?

    @Option(help: "Start from a conversation saved with /save (JSONL).")
    var resume: String?

    @Option(help: "Run the user turns in this file (one per line) without a terminal, check that each reply streams and ends properly, report timings; exit status 1 if a check fails.")
    var smoke: String?

    func validate() throws {
        guard (1...Generate.maximumTokens).contains(maxTokens) else {
            throw ValidationError("--max-tokens must be between 1 and \(Generate.maximumTokens)")
        }
        if let ctx, !(1...Generate.maximumTokens).contains(ctx) {
            throw ValidationError("--ctx must be between 1 and \(Generate.maximumTokens)")
        }
    }

    func run() async throws {
        let parameters = GenerationParameters(maxTokens: maxTokens, stop: stop, sampling: try sampling.parameters())
        // Input files are read before the model, so a typo costs no loading time.
        let script = try smoke.map { try ChatSmokeScript.load(path: $0) }
        var conversation = try resume.map { try ChatTranscript.load(from: $0) } ?? ChatConversation()
        if let system { conversation.system = system }
        let pool = try options.makePool()

        // Logs get the banner's load time instead of a bar.
        let loading = ProgressDisplay(style: isatty(STDERR_FILENO) == 1 ? .bar : .quiet)
        let setup: ChatSetup
        do {
            setup = try ChatSetup.load(
                ChatSetupOptions(
                    modelPath: options.model, tokenizerPath: options.tokenizer, quant: options.quant, contextLength: ctx,
                    kvType: options.kvType, chatTemplatePath: chatTemplate, parameters: parameters,
                    conversation: conversation),
                pool: pool, progress: { loading.show($0) })
        } catch {
            loading.clear()
            throw error
        }
        loading.clear()
        let engine = setup.engine

        if let script {
            Terminal.write(setup.banner.split(separator: "\n").first.map { String($0) + "\n" } ?? "")
            let report = await ChatSmokeRunner.run(script, engine: engine, write: Terminal.write)
            if !report.passed { throw ExitCode(1) }
            return
        }

        let interactive = isatty(STDIN_FILENO) == 1
        Terminal.write(setup.banner)
        if let path = resume {
            let systemNote = system != nil ? "; system prompt from --system" : (conversation.effectiveSystem != nil ? " with its system prompt" : "")
            Terminal.write("[resumed \(ChatREPL.turns(conversation.turns.count)) from \(path)\(systemNote)]\n")
            // The conversation so far, as it was shown, so the next line follows on from it.
            Terminal.write(ChatREPL.transcript(conversation))
        }
        let interrupts = InterruptHandler(engine: engine, promptAfterHint: interactive)
        defer { interrupts.stop() }
        let input = StandardInputLines()
        var console = ChatConsole(
            readLine: { input.next() }, write: Terminal.write, writeError: Terminal.writeError, showsPrompt: interactive)
        if interactive {
            // While a reply streams the terminal does not echo, and what was typed meanwhile
            // is dropped when it ends, so keystrokes never land inside a reply's text.
            console.replying = { replying in Terminal.setEcho(!replying, dropTypedAhead: !replying) }
        }
        await ChatREPL.run(engine, console: console)
    }
}

/// Unbuffered writes, so each streamed piece shows the moment it is generated.
private enum Terminal {
    @Sendable static func write(_ s: String) { FileHandle.standardOutput.write(Data(s.utf8)) }
    @Sendable static func writeError(_ s: String) { FileHandle.standardError.write(Data(s.utf8)) }

    /// Turns the terminal's echo of standard input on or off (signals such as Ctrl-C keep
    /// working); `dropTypedAhead` discards input typed but not yet read.
    static func setEcho(_ on: Bool, dropTypedAhead: Bool) {
        var t = termios()
        guard tcgetattr(STDIN_FILENO, &t) == 0 else { return }
        if on { t.c_lflag |= tcflag_t(ECHO) } else { t.c_lflag &= ~tcflag_t(ECHO) }
        _ = tcsetattr(STDIN_FILENO, TCSANOW, &t)
        if dropTypedAhead { _ = tcflush(STDIN_FILENO, TCIFLUSH) }
    }
}

/// Lines from standard input. Unlike `Swift.readLine`, a read interrupted by a signal
/// (Ctrl-C while waiting for input) is retried rather than taken for the end of input.
private final class StandardInputLines: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer: [UInt8] = []
    private var ended = false

    /// The next line without its newline; nil at end of input. A last line without a
    /// newline is still returned.
    func next() -> String? {
        lock.withLock {
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    return line
                }
                if ended {
                    guard !buffer.isEmpty else { return nil }
                    defer { buffer.removeAll() }
                    return String(decoding: buffer, as: UTF8.self)
                }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let n = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
                if n > 0 {
                    buffer.append(contentsOf: chunk[..<n])
                } else if n < 0 && errno == EINTR {
                    continue
                } else if n < 0 && errno == EAGAIN {
                    // Standard input was left non-blocking by someone else: wait for data.
                    var fds = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
                    _ = poll(&fds, 1, -1)
                } else {
                    ended = true
                }
            }
        }
    }
}

/// Ctrl-C in the chat: stops the reply being generated; with no reply running it only
/// says how to leave. The handler runs on a queue of its own, so it is served even while
/// generation keeps the concurrency pool's threads busy.
private final class InterruptHandler: @unchecked Sendable {
    private let source: any DispatchSourceSignal

    init(engine: ChatEngine, promptAfterHint: Bool) {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: DispatchQueue(label: "quantbench.chat.interrupt"))
        source.setEventHandler {
            if !engine.interrupt() {
                Terminal.write("\n" + ChatREPL.idleInterruptHint + "\n" + (promptAfterHint ? ChatREPL.prompt : ""))
            }
        }
        source.resume()
    }

    func stop() {
        source.cancel()
        signal(SIGINT, SIG_DFL)
    }
}
