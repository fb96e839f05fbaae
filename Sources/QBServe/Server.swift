import Foundation
import Hummingbird
import Logging
import QBGeneration
import QBModel
import QBOpenAI
import QBRunner
import QBSupport
import QBText
import ServiceLifecycle
import Synchronization

/// How `quantbench serve` runs.
public struct ServeOptions: Sendable {
    public var host = "127.0.0.1"
    public var port = 8080
    /// The name `/v1/models` lists and requests may give as `model`.
    public var modelName: String
    public var limits: SchedulerLimits
    /// Larger request bodies answer 413.
    public var maxBodyBytes = 1 << 20
    /// A connection that sends nothing for this long (slow headers) is closed.
    public var idleTimeoutSeconds = 30
    /// After SIGTERM, running streams may go on this long before they are aborted.
    public var shutdownGraceSeconds = 10.0
    /// Called with the bound port once the server listens.
    public var onListening: @Sendable (Int) -> Void = { _ in }

    public init(modelName: String, limits: SchedulerLimits) {
        self.modelName = modelName
        self.limits = limits
    }
}

/// The OpenAI-compatible HTTP front of a `BatchScheduler`: request parsing, prompt
/// rendering, streaming as server-sent events, errors in OpenAI's shape.
public struct ServeAPI: Sendable {
    public let scheduler: BatchScheduler
    public let tokenizer: any Tokenizer
    public let chatFormat: ChatPromptFormat
    public let options: ServeOptions
    private let created = Int(Date().timeIntervalSince1970)
    private let counter = RequestCounter()

    public init(scheduler: BatchScheduler, tokenizer: any Tokenizer, chatFormat: ChatPromptFormat, options: ServeOptions) {
        self.scheduler = scheduler
        self.tokenizer = tokenizer
        self.chatFormat = chatFormat
        self.options = options
    }

    static let knownPaths: [String: String] = [
        "/v1/chat/completions": "POST", "/v1/completions": "POST", "/v1/models": "GET", "/health": "GET", "/metrics": "GET",
    ]

    /// The router with every endpoint and the error middleware.
    public func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.middlewares.add(ErrorMiddleware(metrics: scheduler.metrics))
        router.post("/v1/chat/completions") { request, _ in try await self.complete(request, chat: true) }
        router.post("/v1/completions") { request, _ in try await self.complete(request, chat: false) }
        router.get("/v1/models") { _, _ in
            json(.object(JSONObject(members: [
                ("object", .string("list")),
                ("data", .array([.object(JSONObject(members: [
                    ("id", .string(options.modelName)), ("object", .string("model")), ("created", .int(created)),
                    ("owned_by", .string("quantbench")),
                ]))])),
            ])))
        }
        router.get("/health") { _, _ in
            let load = scheduler.metrics.load
            let memory = MemoryStats.current()
            var members: [(key: String, value: JSONValue)] = [
                ("status", .string("ok")), ("slots_active", .int(load.active)), ("slots_total", .int(options.limits.parallel)),
                ("queue_depth", .int(load.queued)), ("kv_cache_used_bytes", .int(load.kvBytes)),
            ]
            for (key, value) in [("tcmalloc_allocated_bytes", memory.allocatedBytes), ("resident_bytes", memory.residentBytes)] {
                if let value { members.append((key, .int(value))) }
            }
            return json(.object(JSONObject(members: members)))
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: scheduler.metrics.prometheusText())))
        }
        return router
    }

    // MARK: - Completions

    func complete(_ request: Request, chat: Bool) async throws -> Response {
        let type = request.headers[.contentType] ?? ""
        guard type.lowercased().split(separator: ";").first?.trimmingCharacters(in: .whitespaces) == "application/json" else {
            throw APIError(status: 415, message: "Content-Type must be application/json, got '\(type)'", code: "unsupported_media_type")
        }
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > options.maxBodyBytes {
            throw tooLarge()
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: options.maxBodyBytes)
        } catch let e as HTTPError where e.status == .contentTooLarge {
            throw tooLarge()
        }
        let r = try CompletionRequest.parse(Data(buffer.readableBytesView), chat: chat)
        if let m = r.model, m != options.modelName {
            throw APIError(status: 404, message: "the model '\(m)' does not exist; this server serves '\(options.modelName)'", param: "model", code: "model_not_found")
        }
        let ids = try promptIDs(r.input)
        let ctx = options.limits.contextLength
        guard !ids.isEmpty else { throw APIError.invalid("the prompt is empty", param: chat ? "messages" : "prompt") }
        guard ids.count < ctx else {
            throw APIError.invalid(
                "the prompt has \(ids.count) tokens; this server's context holds \(ctx) (prompt and completion together)",
                param: chat ? "messages" : "prompt", code: "context_length_exceeded")
        }
        let maxTokens = r.maxTokens ?? (ctx - ids.count)
        guard ids.count + maxTokens <= ctx else {
            throw APIError.invalid(
                "max_tokens \(maxTokens) + \(ids.count) prompt tokens exceed the context of \(ctx) tokens",
                param: "max_tokens", code: "context_length_exceeded")
        }
        let job = CompletionJob(prompt: ids, maxTokens: maxTokens, sampling: r.sampling, stop: r.stop)
        let ticket: JobTicket
        do {
            ticket = try await scheduler.submit(job)
        } catch {
            throw Self.apiError(error)
        }
        let id = (chat ? "chatcmpl-" : "cmpl-") + String(counter.next())
        let reply = ReplyShape(chat: chat, id: id, created: Int(Date().timeIntervalSince1970), model: options.modelName)
        if r.stream {
            return stream(ticket, reply: reply, includeUsage: r.includeUsage)
        }
        var text = ""
        var summary: JobSummary?
        await withTaskCancellationHandler {
            for await event in ticket.events {
                switch event {
                case .text(let t, _): text += t
                case .finished(let s): summary = s
                }
            }
        } onCancel: {
            Task { await scheduler.cancel(ticket.id) }
        }
        guard let summary else { throw APIError(status: 500, message: "the job ended without a summary", type: "server_error") }
        if summary.finish == .abort {
            throw APIError(status: 503, message: "the server is shutting down", type: "server_error", code: "shutting_down", retryAfter: 1)
        }
        return json(reply.whole(text: text, summary: summary))
    }

    func promptIDs(_ input: CompletionRequest.Input) throws(APIError) -> [TokenID] {
        switch input {
        case .text(let s):
            return tokenizer.encode(s, addSpecialTokens: true, parseSpecialTokens: false)
        case .chat(let messages):
            do {
                return try chatFormat.tokens(messages: messages, tokenizer: tokenizer)
            } catch {
                throw APIError.invalid("the chat template rejected the messages: \(error)", param: "messages")
            }
        }
    }

    func tooLarge() -> APIError {
        APIError(status: 413, message: "the request body exceeds \(options.maxBodyBytes) bytes", code: "request_too_large")
    }

    static func apiError(_ e: AdmissionError) -> APIError {
        switch e {
        case .queueFull(let limit):
            return APIError(status: 503, message: "the server is busy: \(limit) requests are already waiting", type: "server_error", code: "queue_full", retryAfter: 1)
        case .exceedsBudget(let needed, let budget):
            return APIError.invalid("the request needs \(needed) bytes of KV cache; the budget is \(budget)", param: "max_tokens", code: "context_length_exceeded")
        case .exceedsContext(let needed, let context):
            return APIError.invalid("the request needs \(needed) positions; the context holds \(context)", param: "max_tokens", code: "context_length_exceeded")
        case .shuttingDown:
            return APIError(status: 503, message: "the server is shutting down", type: "server_error", code: "shutting_down", retryAfter: 1)
        }
    }

    /// Server-sent events: a chunk per piece of text, a last chunk with the finish reason,
    /// the usage chunk when asked, then `data: [DONE]`. A failed write (the client went
    /// away) cancels the job, which frees its slot at the next step.
    func stream(_ ticket: JobTicket, reply: ReplyShape, includeUsage: Bool) -> Response {
        let scheduler = self.scheduler
        let body = ResponseBody { writer in
            func send(_ v: JSONValue) async throws {
                try await writer.write(ByteBuffer(string: "data: " + compactJSON(v) + "\n\n"))
            }
            do {
                try await withTaskCancellationHandler {
                    if reply.chat { try await send(reply.chunk(role: true, text: "", finish: nil)) }
                    for await event in ticket.events {
                        switch event {
                        case .text(let t, _):
                            if !t.isEmpty { try await send(reply.chunk(role: false, text: t, finish: nil)) }
                        case .finished(let s):
                            try await send(reply.chunk(role: false, text: nil, finish: s.finish))
                            if includeUsage { try await send(reply.usageChunk(s)) }
                        }
                    }
                    try await writer.write(ByteBuffer(string: "data: [DONE]\n\n"))
                    try await writer.finish(nil)
                } onCancel: {
                    Task { await scheduler.cancel(ticket.id) }
                }
            } catch {
                await scheduler.cancel(ticket.id)
                throw error
            }
        }
        return Response(
            status: .ok, headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"], body: body)
    }
}

/// One-line JSON without spaces, as OpenAI's server writes it.
func compactJSON(_ v: JSONValue) -> String {
    JSONWriter.string(v, format: JSONWriter.Format(itemSeparator: ",", keySeparator: ":"))
}

func json(_ v: JSONValue, status: HTTPResponse.Status = .ok) -> Response {
    Response(
        status: status, headers: [.contentType: "application/json"],
        body: .init(byteBuffer: ByteBuffer(string: compactJSON(v))))
}

final class RequestCounter: Sendable {
    private let value = Mutex<UInt64>(0)
    func next() -> UInt64 { value.withLock { $0 += 1; return $0 } }
}

/// The reply objects of one request, chat or text completion.
struct ReplyShape: Sendable {
    let chat: Bool
    let id: String
    let created: Int
    let model: String

    func finishText(_ f: JobFinish) -> String { f.rawValue }

    func usage(_ s: JobSummary) -> JSONValue {
        .object(JSONObject(members: [
            ("prompt_tokens", .int(s.promptTokens)), ("completion_tokens", .int(s.completionTokens)),
            ("total_tokens", .int(s.promptTokens + s.completionTokens)),
        ]))
    }

    func head(object: String) -> [(key: String, value: JSONValue)] {
        [("id", .string(id)), ("object", .string(object)), ("created", .int(created)), ("model", .string(model))]
    }

    func whole(text: String, summary s: JobSummary) -> JSONValue {
        let choice: JSONObject
        if chat {
            choice = JSONObject(members: [
                ("index", .int(0)),
                ("message", .object(JSONObject(members: [("role", .string("assistant")), ("content", .string(text))]))),
                ("logprobs", .null), ("finish_reason", .string(finishText(s.finish))),
            ])
        } else {
            choice = JSONObject(members: [
                ("index", .int(0)), ("text", .string(text)), ("logprobs", .null), ("finish_reason", .string(finishText(s.finish))),
            ])
        }
        return .object(JSONObject(members: head(object: chat ? "chat.completion" : "text_completion") + [
            ("choices", .array([.object(choice)])), ("usage", usage(s)),
        ]))
    }

    func chunk(role: Bool, text: String?, finish: JobFinish?) -> JSONValue {
        let finishValue: JSONValue = finish.map { .string(finishText($0)) } ?? .null
        let choice: JSONObject
        if chat {
            var delta: [(key: String, value: JSONValue)] = []
            if role { delta.append(("role", .string("assistant"))) }
            if let text { delta.append(("content", .string(text))) }
            choice = JSONObject(members: [
                ("index", .int(0)), ("delta", .object(JSONObject(members: delta))), ("logprobs", .null), ("finish_reason", finishValue),
            ])
        } else {
            choice = JSONObject(members: [
                ("index", .int(0)), ("text", .string(text ?? "")), ("logprobs", .null), ("finish_reason", finishValue),
            ])
        }
        return .object(JSONObject(members: head(object: chat ? "chat.completion.chunk" : "text_completion") + [
            ("choices", .array([.object(choice)])),
        ]))
    }

    func usageChunk(_ s: JobSummary) -> JSONValue {
        .object(JSONObject(members: head(object: chat ? "chat.completion.chunk" : "text_completion") + [
            ("choices", .array([])), ("usage", usage(s)),
        ]))
    }
}

/// Every error leaves as an OpenAI-style body: `APIError` as itself, Hummingbird's own
/// (no route: 404, or 405 for a known path with another method; body too large: 413) and
/// anything unexpected (500) likewise. Counts each answer by endpoint and status.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let metrics: ServeMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        let endpoint = ServeAPI.knownPaths[path] == nil ? "other" : path
        let response: Response
        do {
            response = try await next(request, context)
        } catch let e as APIError {
            response = Self.response(e)
        } catch let e as HTTPError {
            if e.status == .notFound, let allowed = ServeAPI.knownPaths[path] {
                var r = Self.response(APIError(status: 405, message: "\(request.method) is not allowed on \(path); use \(allowed)", code: "method_not_allowed"))
                r.headers[.allow] = allowed
                response = r
            } else if e.status == .notFound {
                response = Self.response(APIError(status: 404, message: "no endpoint \(request.method) \(path)", code: "not_found"))
            } else {
                response = Self.response(APIError(status: Int(e.status.code), message: e.body ?? e.status.reasonPhrase, code: nil))
            }
        } catch {
            response = Self.response(APIError(status: 500, message: "internal error: \(error)", type: "server_error"))
        }
        metrics.request(endpoint: endpoint, status: Int(response.status.code))
        return response
    }

    static func response(_ e: APIError) -> Response {
        var r = json(e.body, status: HTTPResponse.Status(code: e.status))
        if let after = e.retryAfter { r.headers[.retryAfter] = String(after) }
        return r
    }
}

/// The scheduler's loop as a service: on graceful shutdown (SIGTERM, SIGINT) it stops
/// taking jobs, lets running streams finish within the grace period and aborts the rest,
/// before the HTTP server closes its connections.
struct SchedulerService: Service {
    let scheduler: BatchScheduler
    let grace: Double

    func run() async throws {
        let loop = Task { await scheduler.run() }
        try? await gracefulShutdown()
        await scheduler.drain(grace: grace)
        loop.cancel()
    }
}

/// Runs the server until SIGTERM or SIGINT.
public enum Server {
    public static func run(api: ServeAPI) async throws {
        let o = api.options
        var logger = Logger(label: "quantbench.serve")
        logger.logLevel = .warning
        let app = Application(
            router: api.router(),
            server: .http1(configuration: .init(idleTimeout: .seconds(Int64(o.idleTimeoutSeconds)))),
            configuration: .init(address: .hostname(o.host, port: o.port), serverName: "quantbench"),
            onServerRunning: { channel in o.onListening(channel.localAddress?.port ?? o.port) },
            logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [app, SchedulerService(scheduler: api.scheduler, grace: o.shutdownGraceSeconds)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
    }
}
