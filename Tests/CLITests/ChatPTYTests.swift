#if canImport(Glibc)
import Glibc
#endif
import Foundation
import XCTest
import QBTestSupport

/// `quantbench chat` as a person uses it: the real binary on a pseudo-terminal, typing
/// lines, Ctrl-C (the terminal turns byte 0x03 into SIGINT for the chat's process group)
/// and Ctrl-D (0x04 at the start of a line is end of input).
///
/// Every wait is bounded; a chat that stops answering fails the test instead of hanging it.
final class ChatPTYTests: XCTestCase {
    var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("qb-chat-pty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: dir) }

    var binary: URL { TestProcess.product("quantbench") }

    /// The built-in tiny model (made on first use in a private cache), greedy, with its
    /// end-of-sequence ids banned so every reply runs to --max-tokens: there is always a
    /// reply in progress to interrupt. The tiny vocabulary has 1024 ids; SyntheticTokenizer
    /// puts <|end_of_text|>, <|eom_id|> and <|eot_id|> at 769, 776 and 777.
    var chatArguments: [String] { chatArguments(maxTokens: 600) }

    func chatArguments(maxTokens: Int) -> [String] {
        ["chat", "--max-tokens", String(maxTokens), "--threads", "2", "--temperature", "0",
         "--logit-bias", "769=-inf", "--logit-bias", "776=-inf", "--logit-bias", "777=-inf"]
    }

    var environment: [String: String] { ["XDG_CACHE_HOME": dir.appendingPathComponent("cache").path] }

    /// Loading may first make the default model (and a debug build trains its tokenizer),
    /// so the first prompt gets longer than the rest; a 600-token reply on the tiny model
    /// takes about a second.
    let startTimeout: TimeInterval = 120
    let replyTimeout: TimeInterval = 60
    let stepTimeout: TimeInterval = 10

    func testTypeInterruptContinueSaveExitThenResume() throws {
        let saved = dir.appendingPathComponent("chat.jsonl").path
        let chat = try PTYProcess(binary.path, chatArguments + ["--system", "You are terse."], environment: environment)
        defer { chat.terminate() }

        try chat.expect("Ctrl-D exits", timeout: startTimeout)
        try chat.expectPrompt(timeout: stepTimeout)

        // A message; its reply streams: text arrives after the echoed line while the reply
        // is still being generated (600 tokens), and Ctrl-C stops it without leaving. A
        // 600-token reply takes about a second, so on a loaded machine this process may not
        // get to type Ctrl-C before the reply is done; the chat then says no reply is running,
        // and the attempt is cleared and made again (the chat's behaviour either way is what
        // is checked, never how fast either side is).
        var streamed = ""
        var interrupted = false
        for attempt in 1...8 where !interrupted {
            chat.type("Tell me a story\n")
            try chat.expect("Tell me a story", timeout: stepTimeout)
            streamed = try chat.expectMoreOutput(bytes: 8, timeout: replyTimeout)
            chat.type("\u{03}")
            let outcome = try chat.expectEither("[stopped]", "(no reply is running", timeout: replyTimeout)
            try chat.expectPrompt(timeout: stepTimeout)
            if outcome == 0 {
                interrupted = true
            } else {
                print("attempt \(attempt): the reply ended before Ctrl-C reached it; clearing and trying again")
                chat.type("/clear\n")
                try chat.expect("[conversation cleared", timeout: stepTimeout)
                try chat.expectPrompt(timeout: stepTimeout)
            }
        }
        XCTAssertTrue(interrupted, "no attempt was interrupted mid-reply: \(chat.transcript)")
        XCTAssertFalse(streamed.contains("[reply cut"), "interrupted mid-reply: \(streamed)")

        // Ctrl-C with no reply running only says how to leave.
        chat.type("\u{03}")
        try chat.expect("Ctrl-D exits", timeout: stepTimeout)

        // The chat goes on: a second message runs to --max-tokens.
        chat.type("Go on\n")
        try chat.expect("[reply cut at --max-tokens 600]", timeout: replyTimeout, whileOutputFlows: true)
        try chat.expectPrompt(timeout: stepTimeout)
        chat.type("/stats\n")
        let stats = try chat.expect("history: 2 turns", timeout: stepTimeout)
        XCTAssertTrue(stats.contains("last reply: 600 tokens, finish: max_tokens"), stats)
        XCTAssertTrue(stats.contains("time to first token"), stats)
        XCTAssertTrue(stats.contains("tokens/s"), stats)
        XCTAssertTrue(stats.contains("memory: resident"), stats)
        // Keys are typed at the prompt, as a person does: the line editor reads them only
        // there (the terminal is then in its raw mode); a Ctrl-D typed before the prompt
        // shows would reach it as a NUL byte, not as the end of input.
        try chat.expectPrompt(timeout: stepTimeout)

        chat.type("/save \(saved)\n")
        try chat.expect("[saved 2 turns to \(saved)]", timeout: stepTimeout)
        try chat.expectPrompt(timeout: stepTimeout)
        chat.type("\u{04}")
        // Ctrl-D: a one-line summary of the session.
        try chat.expect("2 turns in the history]", timeout: stepTimeout)
        XCTAssertTrue(chat.transcript.contains("[bye: "), chat.transcript)
        XCTAssertEqual(try chat.waitForExit(timeout: stepTimeout), 0, chat.transcript)

        // The saved history: system prompt, the interrupted turn with what was shown, the
        // finished turn.
        let lines = try String(contentsOfFile: saved, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 5, lines.joined(separator: "\n"))
        let messages = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]) }
        XCTAssertEqual(messages.map { $0["role"] }, ["system", "user", "assistant", "user", "assistant"])
        XCTAssertEqual(messages[0]["content"], "You are terse.")
        XCTAssertEqual(messages[1]["content"], "Tell me a story")
        XCTAssertEqual(messages[2]["finish_reason"], "cancelled")
        XCTAssertFalse(messages[2]["content"]?.isEmpty ?? true, "the part shown before Ctrl-C is kept")
        XCTAssertEqual(messages[3]["content"], "Go on")
        XCTAssertEqual(messages[4]["finish_reason"], "max_tokens")

        // Resume: the history is back, and the next reply's prompt carries it. A smaller
        // --max-tokens leaves the prompt room for both turns however far the interrupted
        // reply got (up to 600 tokens on a busy machine, where Ctrl-C lands late): with 600
        // reserved, a long first reply made the chat drop the oldest turn, by design.
        let again = try PTYProcess(binary.path, chatArguments(maxTokens: 100) + ["--resume", saved], environment: environment)
        defer { again.terminate() }
        try again.expect("[resumed 2 turns from \(saved) with its system prompt]", timeout: startTimeout)
        // The restored conversation is shown before the prompt.
        try again.expect("[system] You are terse.", timeout: stepTimeout)
        try again.expect("> Tell me a story", timeout: stepTimeout)
        try again.expect("> Go on", timeout: stepTimeout)
        try again.expectPrompt(timeout: stepTimeout)
        again.type("/stats\n")
        try again.expect("no reply yet in this session; history: 2 turns", timeout: stepTimeout)
        // At the prompt: typed before it, the line editor would still be drawing the line
        // when Ctrl-C comes, and Ctrl-C would cut it (the terminal flushes typed input).
        try again.expectPrompt(timeout: stepTimeout)
        again.type("And then?\n")
        try again.expect("And then?", timeout: stepTimeout)
        // The reply runs to its end (the first session checked Ctrl-C). Stopping it here made
        // the test depend on timing: on a loaded machine Ctrl-C could land while the 600-id
        // prompt was still being prefilled, and a reply stopped before its first token is,
        // by design, no turn of the history.
        try again.expect("[reply cut at --max-tokens 100]", timeout: replyTimeout, whileOutputFlows: true)
        try again.expectPrompt(timeout: stepTimeout)
        again.type("/stats\n")
        let resumedStats = try again.expect("history: 3 turns", timeout: stepTimeout)
        // The prompt is the whole restored conversation (a 600-token reply among it), not
        // just the new message, and none of it was in this process's cache.
        let prompt = try XCTUnwrap(Self.number(after: "(prompt ", in: resumedStats), resumedStats)
        XCTAssertGreaterThan(prompt, 200, resumedStats)
        XCTAssertTrue(resumedStats.contains("(prompt \(prompt) tokens, 0 reused from the cache"), resumedStats)
        let resaved = dir.appendingPathComponent("again.jsonl").path
        again.type("/save \(resaved)\n")
        try again.expect("[saved 3 turns", timeout: stepTimeout)
        try again.expectPrompt(timeout: stepTimeout)
        again.type("\u{04}")
        XCTAssertEqual(try again.waitForExit(timeout: stepTimeout), 0, again.transcript)
        let relines = try String(contentsOfFile: resaved, encoding: .utf8).split(separator: "\n").map(String.init)
        XCTAssertEqual(Array(relines.prefix(5)), lines, "the resumed history is the saved one")
        XCTAssertEqual(relines.count, 7)
    }

    /// Line editing and history (libedit): a typo fixed with the left arrow and an
    /// insertion reaches the model as the corrected line, and the up arrow brings it back.
    /// Before: the terminal's cooked mode sent the escape sequences as text ("Tell me a
    /// stry^[[D^[[Do"), and up-arrow sent "^[[A".
    func testArrowKeysEditTheLineAndUpRecallsTheLastOne() throws {
        let saved = dir.appendingPathComponent("edited.jsonl").path
        let chat = try PTYProcess(binary.path, chatArguments(maxTokens: 8), environment: environment)
        defer { chat.terminate() }
        try chat.expect("Ctrl-D exits", timeout: startTimeout)
        try chat.expectPrompt(timeout: stepTimeout)

        // xterm's left arrow is ESC [ D: two of them put the cursor before "ry", then "o".
        chat.type("Tell me a stry\u{1B}[D\u{1B}[Do\n")
        try chat.expect("[reply cut at --max-tokens 8]", timeout: replyTimeout)
        try chat.expectPrompt(timeout: stepTimeout)
        // Up arrow (ESC [ A) recalls the corrected line; Enter sends it again.
        chat.type("\u{1B}[A")
        try chat.expect("Tell me a story", timeout: stepTimeout)
        chat.type("\n")
        try chat.expect("[reply cut at --max-tokens 8]", timeout: replyTimeout)
        try chat.expectPrompt(timeout: stepTimeout)
        chat.type("/save \(saved)\n")
        try chat.expect("[saved 2 turns to \(saved)]", timeout: stepTimeout)
        try chat.expectPrompt(timeout: stepTimeout)
        chat.type("\u{04}")
        XCTAssertEqual(try chat.waitForExit(timeout: stepTimeout), 0, chat.transcript)

        let lines = try String(contentsOfFile: saved, encoding: .utf8).split(separator: "\n").map(String.init)
        let messages = try lines.map { try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]) }
        let users = messages.filter { $0["role"] == "user" }.map { $0["content"] }
        XCTAssertEqual(users, ["Tell me a story", "Tell me a story"], "what the model got: \(lines)")
        // (The tiny model's random replies may hold any byte; only the typed lines are checked.)
        for m in messages where m["role"] == "user" {
            XCTAssertFalse(m["content"]?.contains("\u{1B}") ?? false, "no escape sequence reached the model: \(m)")
        }
    }

    /// What is typed while a reply streams shows nowhere: not in the reply, and not in the
    /// edited line that follows (the line editor starts empty). Typing can lose the race on
    /// a loaded machine (the reply already done, so the text is typed at the prompt, where
    /// it shows): that attempt is cleared and made again.
    func testTypingDuringAReplyNeitherLeaksIntoItNorIntoTheNextLine() throws {
        let saved = dir.appendingPathComponent("typed.jsonl").path
        let chat = try PTYProcess(binary.path, chatArguments, environment: environment)
        defer { chat.terminate() }
        try chat.expect("Ctrl-D exits", timeout: startTimeout)
        try chat.expectPrompt(timeout: stepTimeout)
        var dropped = false
        for attempt in 1...6 where !dropped {
            chat.type("Tell me a story\n")
            try chat.expect("Tell me a story", timeout: stepTimeout)
            try chat.expectMoreOutput(bytes: 8, timeout: replyTimeout, consume: false)
            chat.type("zebra")
            let reply = try chat.expect("[reply cut at --max-tokens 600]", timeout: replyTimeout, whileOutputFlows: true)
            XCTAssertFalse(reply.contains("zebra"), "typed text inside the reply: \(reply)")
            try chat.expectPrompt(timeout: stepTimeout)
            // Keys typed after the reply ended are echoed at this prompt, ahead of anything
            // typed now: a marker's echo shows whether "zebra" came first, however late the
            // echo arrives. Ctrl-U then empties the line.
            chat.type("#")
            let echoed = try chat.expect("#", timeout: stepTimeout)
            chat.type("\u{15}")
            if echoed.contains("zebra") {
                print("attempt \(attempt): the reply ended before the typing; clearing and trying again")
                chat.type("\n/clear\n")
                try chat.expect("[conversation cleared", timeout: stepTimeout)
                try chat.expectPrompt(timeout: stepTimeout)
            } else {
                dropped = true
            }
        }
        XCTAssertTrue(dropped, "no attempt typed during a reply: \(chat.transcript)")
        chat.type("/save \(saved)\n")
        try chat.expect("[saved 1 turn to \(saved)]", timeout: stepTimeout)
        try chat.expectPrompt(timeout: stepTimeout)
        chat.type("\u{04}")
        XCTAssertEqual(try chat.waitForExit(timeout: stepTimeout), 0, chat.transcript)
        let text = try String(contentsOfFile: saved, encoding: .utf8)
        XCTAssertFalse(text.contains("zebra"), text)
    }

    func testBadModelOrTemplateIsOneLine() throws {
        let bad = dir.appendingPathComponent("bad.jinja")
        try Data("{% if messages %}{{ messages[0].content }".utf8).write(to: bad)
        for (args, names) in [
            (["chat", "--model", "/nonexistent/model"], "/nonexistent/model"),
            (["chat", "--chat-template", bad.path], bad.path),
            (["chat", "--resume", "/nonexistent/chat.jsonl"], "/nonexistent/chat.jsonl"),
            (["chat", "--smoke", "/nonexistent/smoke.txt"], "/nonexistent/smoke.txt"),
        ] {
            let p = try PTYProcess(binary.path, args, environment: environment)
            defer { p.terminate() }
            let status = try p.waitForExit(timeout: startTimeout)
            XCTAssertNotEqual(status, 0, "\(args)")
            // The progress bar (drawn on the terminal) is erased; what remains is one line.
            let visible = p.transcript.components(separatedBy: "\u{1B}[2K").last ?? ""
            let lines = visible.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            XCTAssertEqual(lines.count, 1, "\(args): \(p.transcript)")
            XCTAssertTrue(visible.contains(names), "names the file: \(visible)")
        }
    }

    static func number(after marker: String, in text: String) -> Int? {
        guard let r = text.range(of: marker, options: .backwards) else { return nil }
        return Int(text[r.upperBound...].prefix { $0.isNumber })
    }
}

/// A child process on a new pseudo-terminal: it is a session leader whose controlling
/// terminal is the pty, so the terminal's special characters (Ctrl-C, Ctrl-D) act on it as
/// they would in a real terminal.
final class PTYProcess {
    let pid: pid_t
    private var master: Int32
    private var output: [UInt8] = []
    /// Where the next `expect` starts looking.
    private var cursor = 0
    private var exited: Int32?

    /// glibc's POSIX_SPAWN_SETSID (a GNU extension the Swift overlay does not export).
    private static let spawnSetSID: Int32 = 0x80

    init(_ path: String, _ arguments: [String], environment extra: [String: String]) throws {
        guard let pty = PTYFunctions.load() else { throw XCTSkip("posix_openpt and friends are not in this C library") }
        let m = pty.openpt(O_RDWR | O_NOCTTY)
        guard m >= 0, pty.grantpt(m) == 0, pty.unlockpt(m) == 0, let name = pty.ptsname(m) else {
            if m >= 0 { close(m) }
            throw XCTSkip("no pseudo-terminals here (posix_openpt failed: errno \(errno))")
        }
        let slave = String(cString: name)
        _ = fcntl(m, F_SETFD, FD_CLOEXEC)
        master = m

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // Opened after setsid (glibc applies attributes first), so the pty becomes the
        // child's controlling terminal.
        posix_spawn_file_actions_addopen(&actions, 0, slave, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The test runner may ignore or block SIGINT; the child starts with the defaults.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(Int32(POSIX_SPAWN_SETSIGDEF) | Int32(POSIX_SPAWN_SETSIGMASK) | Self.spawnSetSID))

        var env = ProcessInfo.processInfo.environment
        for (k, v) in extra { env[k] = v }
        env["TERM"] = "xterm"
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            close(m)
            throw NSError(domain: NSPOSIXErrorDomain, code: Int(rc), userInfo: [NSLocalizedDescriptionKey: "posix_spawn \(path) failed"])
        }
        pid = child
    }

    deinit { terminate() }

    /// Everything the child wrote so far, as text.
    var transcript: String { String(decoding: output, as: UTF8.self) }

    /// Writes keystrokes to the terminal.
    func type(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }

    /// Waits until `needle` appears after the previous match; returns the output from the
    /// previous match to the end of this one. Throws (with everything seen) on timeout.
    /// With `whileOutputFlows`, the timeout counts from the latest output instead of from
    /// the call: a streamed reply's length in seconds depends on how busy the machine is,
    /// and what the test must catch is a program that stops writing, not a slow one.
    @discardableResult
    func expect(_ needle: String, timeout: TimeInterval, whileOutputFlows: Bool = false) throws -> String {
        let target = Array(needle.utf8)
        var deadline = Date().addingTimeInterval(timeout)
        var seen = output.count
        while true {
            if whileOutputFlows && output.count > seen {
                seen = output.count
                deadline = Date().addingTimeInterval(timeout)
            }
            if let r = find(target, from: cursor) {
                let text = String(decoding: output[cursor..<r], as: UTF8.self)
                cursor = r
                return text
            }
            guard Date() < deadline else {
                let wait = whileOutputFlows ? "\(timeout) s with no output" : "\(timeout) s"
                throw Failure("waited \(wait) for \"\(needle)\"; the terminal shows:\n\(String(decoding: output[cursor...], as: UTF8.self))")
            }
            readSome(until: deadline)
        }
    }

    /// Waits until the first of `a` or `b` appears after the previous match; returns 0 for
    /// `a`, 1 for `b` (and moves past it). Throws (with everything seen) on timeout.
    func expectEither(_ a: String, _ b: String, timeout: TimeInterval) throws -> Int {
        let targets = [Array(a.utf8), Array(b.utf8)]
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let found = targets.enumerated().compactMap { i, t in find(t, from: cursor).map { (i, $0) } }
            if let first = found.min(by: { $0.1 < $1.1 }) {
                cursor = first.1
                return first.0
            }
            guard Date() < deadline else {
                throw Failure("waited \(timeout) s for \"\(a)\" or \"\(b)\"; the terminal shows:\n\(String(decoding: output[cursor...], as: UTF8.self))")
            }
            readSome(until: deadline)
        }
    }

    /// Waits for the chat's prompt and then until its line editor reads keys: the terminal
    /// leaves canonical mode. libedit may draw the prompt a moment before it switches the
    /// terminal (it does so at its first read when input is already pending); keys typed in
    /// that moment are taken by the terminal's cooked mode (echoed twice, and a Ctrl-D
    /// there reaches the editor as a NUL byte). A person cannot type in that window; a
    /// test can, so it waits as a person does.
    func expectPrompt(timeout: TimeInterval) throws {
        try expect("> ", timeout: timeout)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            var t = termios()
            // On Linux the master side reports the terminal's (slave side's) settings.
            if tcgetattr(master, &t) == 0, t.c_lflag & tcflag_t(ICANON) == 0 { return }
            guard Date() < deadline else { throw Failure("the line editor did not start reading within \(timeout) s:\n\(transcript)") }
            readSome(until: Date().addingTimeInterval(0.002))
        }
    }

    /// Waits until at least `bytes` more bytes arrived after the previous match; returns them
    /// and moves past them unless `consume` is false. On a busy machine one read may bring
    /// a whole reply, end marker included: a caller that then looks for the marker must not
    /// consume.
    @discardableResult
    func expectMoreOutput(bytes: Int, timeout: TimeInterval, consume: Bool = true) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while output.count - cursor < bytes {
            guard Date() < deadline else {
                throw Failure("waited \(timeout) s for output; the terminal shows:\n\(String(decoding: output[cursor...], as: UTF8.self))")
            }
            readSome(until: deadline)
        }
        let text = String(decoding: output[cursor...], as: UTF8.self)
        if consume { cursor = output.count }
        return text
    }

    /// Reads until the child exits (draining its output) and returns its exit status, or
    /// throws after `timeout` (the child is then killed).
    func waitForExit(timeout: TimeInterval) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let status = reap() {
                // The child may have written its last lines just before exiting.
                while readSome(until: Date().addingTimeInterval(0.05)) {}
                return status
            }
            if Date() >= deadline {
                terminate()
                throw Failure("the chat did not exit within \(timeout) s; the terminal shows:\n\(transcript)")
            }
            // The slave side closes when the child exits; reading may then fail with EIO.
            if !readSome(until: min(deadline, Date().addingTimeInterval(0.1))) { usleep(10_000) }
        }
    }

    /// Kills the child if it still runs and releases the terminal.
    func terminate() {
        if exited == nil, reap() == nil {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exited = -1
        }
        if master >= 0 {
            close(master)
            master = -1
        }
    }

    private func reap() -> Int32? {
        if let e = exited { return e }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        // WIFEXITED / WEXITSTATUS, which Swift does not import as functions.
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exited = code
        return code
    }

    /// Reads what is available, waiting at most until `deadline` (and never more than
    /// 0.2 s); false when nothing came.
    @discardableResult
    private func readSome(until deadline: Date) -> Bool {
        let ms = Int32(max(0, min(deadline.timeIntervalSinceNow, 0.2)) * 1000)
        var fds = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        guard master >= 0, poll(&fds, 1, ms) > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
        guard n > 0 else {
            usleep(10_000)
            return false
        }
        output.append(contentsOf: buffer[..<n])
        return true
    }

    private func find(_ needle: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, output.count >= needle.count, start <= output.count - needle.count else { return nil }
        for i in start...(output.count - needle.count) where output[i] == needle[0] {
            if output[i..<(i + needle.count)].elementsEqual(needle) { return i + needle.count }
        }
        return nil
    }

    /// glibc's pseudo-terminal functions. Swift's Glibc module leaves them out (they sit
    /// behind _XOPEN_SOURCE), so they are looked up in the already-loaded C library.
    struct PTYFunctions {
        let openpt: @convention(c) (Int32) -> Int32
        let grantpt: @convention(c) (Int32) -> Int32
        let unlockpt: @convention(c) (Int32) -> Int32
        let ptsname: @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

        static func load() -> PTYFunctions? {
            // dlsym(RTLD_DEFAULT, ...): RTLD_DEFAULT is the null handle on glibc.
            guard let o = dlsym(nil, "posix_openpt"), let g = dlsym(nil, "grantpt"), let u = dlsym(nil, "unlockpt"),
                let p = dlsym(nil, "ptsname")
            else { return nil }
            return PTYFunctions(
                openpt: unsafeBitCast(o, to: (@convention(c) (Int32) -> Int32).self),
                grantpt: unsafeBitCast(g, to: (@convention(c) (Int32) -> Int32).self),
                unlockpt: unsafeBitCast(u, to: (@convention(c) (Int32) -> Int32).self),
                ptsname: unsafeBitCast(p, to: (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self))
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }
}
