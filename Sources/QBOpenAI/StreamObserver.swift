import QBRunner
import QBSupport

/// Why an exchange did not end normally.
public enum HTTPStreamFailure: Error, Sendable, Equatable {
    /// No connection (refused, unreachable, name not resolved, connect timeout).
    case connect(String)
    /// The whole exchange outlasted its time limit.
    case timeout
    /// The connection closed or failed before the response ended.
    case truncated(String)
}

/// Follows one streamed completion as it arrives: the times of chunks carrying text, the
/// finish reason, the usage, and every way the stream breaks OpenAI's format. Violation
/// kinds (documented in results/README.md):
/// - `malformed_chunk`: an event that is not a JSON object with a `choices` array (or a
///   usage-only chunk with an empty one)
/// - `wrong_object`: `object` is not `chat.completion.chunk` (chat) or `text_completion`
/// - `content_after_finish`: text after the chunk with `finish_reason`
/// - `multiple_finish_reasons`, `no_finish_reason`
/// - `event_after_done`: an event after `data: [DONE]`; `missing_done`: the response
///   ended without it; `partial_event`: it ended inside an event
/// - `usage_inconsistent`: total ≠ prompt + completion, or fewer completion tokens than
///   chunks with text, or none for a non-empty reply
/// - `length_mismatch`: `finish_reason` `length` with completion tokens ≠ `max_tokens`
public struct StreamObserver: Sendable {
    let chat: Bool
    let maxTokens: Int
    let start: UInt64

    var status: Int?
    var contentType: String?
    var errorBody: [UInt8] = []
    var sse = ServerSentEvents()
    var contentTimes: [UInt64] = []
    var finishReasons: [String] = []
    var sawDone = false
    var usage: (prompt: Int, completion: Int, total: Int?)?
    var violations: [String: Int] = [:]
    var endTime: UInt64?
    /// The text the chunks carried so far.
    public private(set) var text = ""

    /// An observer of a response to a request that asked for `maxTokens`, sent at `start`
    /// (monotonic nanoseconds, the clock of the times given to `body` and `end`).
    public init(chat: Bool, maxTokens: Int, start: UInt64) {
        self.chat = chat
        self.maxTokens = maxTokens
        self.start = start
    }

    var isEventStream: Bool {
        contentType?.lowercased().split(separator: ";").first?.trimmingCharacters(in: .whitespaces) == "text/event-stream"
    }

    mutating func violate(_ kind: String) { violations[kind, default: 0] += 1 }

    /// The response's status line and `Content-Type`.
    public mutating func head(status s: Int, contentType type: String?) {
        status = s
        contentType = type
    }

    /// Bytes of the body as they arrived at time `t`.
    public mutating func body<Bytes: Collection>(_ bytes: Bytes, at t: UInt64) where Bytes.Element == UInt8 {
        if status != 200 || !isEventStream {
            if errorBody.count < 2048 { errorBody += bytes.prefix(2048 - errorBody.count) }
            return
        }
        for data in sse.feed(bytes) { chunk(data, at: t) }
    }

    /// The response's end, at time `t`.
    public mutating func end(at t: UInt64) { endTime = t }

    mutating func chunk(_ data: String, at t: UInt64) {
        if sawDone {
            violate("event_after_done")
            return
        }
        if data == "[DONE]" {
            sawDone = true
            return
        }
        guard let value = try? JSONReader.parse(data), let object = value.objectValue,
              let choices = object["choices"]?.arrayValue else {
            violate("malformed_chunk")
            return
        }
        if let kind = object["object"]?.stringValue, kind != (chat ? "chat.completion.chunk" : "text_completion") {
            violate("wrong_object")
        }
        if let u = object["usage"]?.objectValue, let p = u["prompt_tokens"]?.intValue, let c = u["completion_tokens"]?.intValue {
            usage = (p, c, u["total_tokens"]?.intValue)
        }
        if choices.isEmpty && object["usage"] == nil { violate("malformed_chunk") }
        for choice in choices {
            guard let c = choice.objectValue else {
                violate("malformed_chunk")
                continue
            }
            let piece: String?
            if chat {
                piece = c["delta"]?.objectValue?["content"]?.stringValue
            } else {
                piece = c["text"]?.stringValue
            }
            if let piece, !piece.isEmpty {
                if !finishReasons.isEmpty { violate("content_after_finish") }
                contentTimes.append(t)
                text += piece
            }
            if let f = c["finish_reason"]?.stringValue {
                if !finishReasons.isEmpty { violate("multiple_finish_reasons") }
                finishReasons.append(f)
            }
        }
    }

    /// Seconds from monotonic time `a` to `b` (nanoseconds).
    public static func seconds(_ a: UInt64, _ b: UInt64) -> Double { Double(b &- a) / 1e9 }

    /// The record of a stream that ended (`failure` nil) or broke.
    public func record(into r: inout RequestRecord, failure: HTTPStreamFailure?) {
        r.status = status
        switch failure {
        case .connect(let why)?:
            r.error = "connect"
            r.errorDetail = why
            return
        case .timeout?:
            r.error = "timeout"
            r.errorDetail = "no complete response within the time limit"
        case .truncated(let why)?:
            r.error = "stream_truncated"
            r.errorDetail = why
        case nil:
            break
        }
        if r.error == nil, let s = status, s != 200 {
            r.error = "http_\(s)"
            let body = String(decoding: errorBody, as: UTF8.self)
            let message = (try? JSONReader.parse(body))?.objectValue?["error"]?.objectValue?["message"]?.stringValue
            r.errorDetail = String((message ?? body).prefix(300))
            return
        }
        if r.error == nil, !isEventStream {
            r.error = "not_event_stream"
            r.errorDetail = "Content-Type is '\(contentType ?? "none")'"
            return
        }
        if r.error == nil, contentTimes.isEmpty, finishReasons.isEmpty {
            r.error = "empty_stream"
            r.errorDetail = "no chunk with text and no finish_reason"
        }
        r.contentChunks = contentTimes.count
        r.finishReason = finishReasons.first
        if let first = contentTimes.first { r.ttft = Self.seconds(start, first) }
        r.interTokenLatencies = zip(contentTimes, contentTimes.dropFirst()).map { Self.seconds($0, $1) }
        if let u = usage {
            r.promptTokens = u.prompt
            r.outputTokens = u.completion
            r.tokensFrom = "usage"
        } else {
            r.outputTokens = contentTimes.count
            r.tokensFrom = "chunks"
        }
        guard r.error == nil else { return }
        if let end = endTime { r.endToEnd = Self.seconds(start, end) }
        if let e2e = r.endToEnd, let ttft = r.ttft, let n = r.outputTokens, n > 1 {
            r.tpot = (e2e - ttft) / Double(n - 1)
        }
        var v = violations
        if !sawDone { v["missing_done", default: 0] += 1 }
        if sse.hasPartialEvent { v["partial_event", default: 0] += 1 }
        if finishReasons.isEmpty { v["no_finish_reason", default: 0] += 1 }
        if let u = usage {
            let totalWrong = u.total.map { $0 != u.prompt + u.completion } ?? false
            if totalWrong || u.completion < contentTimes.count || (u.completion == 0 && !text.isEmpty) {
                v["usage_inconsistent", default: 0] += 1
            }
            if finishReasons.first == "length", u.completion != maxTokens { v["length_mismatch", default: 0] += 1 }
        }
        r.violations = v.keys.sorted().flatMap { k in Array(repeating: k, count: v[k]!) }
    }
}

/// A whole streamed response judged as the load client judges a live one, for the
/// fuzzer and for tests that hold a body in hand: the same parser and checks, the body fed
/// in pieces as a socket would deliver it.
public enum StreamCheck {
    /// The record of a `200 text/event-stream` response with this body: text chunks,
    /// finish reason, usage and every format violation (`RequestRecord.violations`).
    public static func record(ofBody body: [UInt8], chat: Bool, maxTokens: Int, pieceSize: Int = 4096) -> (record: RequestRecord, text: String) {
        var observer = StreamObserver(chat: chat, maxTokens: maxTokens, start: 0)
        observer.head(status: 200, contentType: "text/event-stream")
        var offset = 0
        let step = max(1, pieceSize)
        while offset < body.count {
            let end = min(body.count, offset + step)
            observer.body(body[offset..<end], at: UInt64(offset + 1))
            offset = end
        }
        observer.end(at: UInt64(body.count + 1))
        var r = RequestRecord(index: 0, prompt: "body", api: chat ? "chat" : "completions", startSeconds: 0)
        observer.record(into: &r, failure: nil)
        return (r, observer.text)
    }
}
