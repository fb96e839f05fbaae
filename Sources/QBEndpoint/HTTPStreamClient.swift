import Dispatch
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import QBOpenAI
import Synchronization

/// What an HTTP exchange delivers, in order, each with the monotonic time (nanoseconds)
/// the client read it.
public enum HTTPStreamEvent: Sendable {
    case head(status: Int, contentType: String?)
    case body(ByteBuffer)
    case end
}

extension StreamObserver {
    /// One part of a live response, read at time `t`.
    mutating func handle(_ event: HTTPStreamEvent, at t: UInt64) {
        switch event {
        case .head(let s, let type): head(status: s, contentType: type)
        case .body(let buffer): body(buffer.readableBytesView, at: t)
        case .end: end(at: t)
        }
    }
}

/// A minimal HTTP/1.1 client on SwiftNIO for measuring: one connection per request
/// (`Connection: close`, no pooling, so no request waits behind another's socket), the
/// response handed over part by part as it arrives, a time limit over the whole exchange.
/// Runs on its own event loop group (one thread by default) so the client's own work is
/// bounded and visible.
public final class HTTPStreamClient: Sendable {
    let group: MultiThreadedEventLoopGroup
    public let threads: Int

    public init(threads: Int = 1) {
        self.threads = threads
        group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
    }

    public func shutdown() async {
        try? await group.shutdownGracefully()
    }

    public static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

    /// Sends one request and calls `onEvent` with each part of the response. Throws
    /// `HTTPStreamFailure` (or what `onEvent` throws).
    public func send(
        _ target: EndpointTarget, method: HTTPMethod, path: String, body: [UInt8]?, accept: String,
        timeoutSeconds: Double, onEvent: (HTTPStreamEvent, UInt64) throws -> Void
    ) async throws {
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        do {
            channel = try await ClientBootstrap(group: group)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connectTimeout(.milliseconds(Int64(min(timeoutSeconds, 30) * 1000)))
                .connect(host: target.host, port: target.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHTTPClientHandlers()
                        return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw HTTPStreamFailure.connect(Self.reason(error))
        }
        let timedOut = Mutex(false)
        let raw = channel.channel
        let watchdog = Task {
            try? await Task.sleep(nanoseconds: UInt64(timeoutSeconds * 1e9))
            if Task.isCancelled { return }
            timedOut.withLock { $0 = true }
            raw.close(promise: nil)
        }
        defer { watchdog.cancel() }
        do {
            try await channel.executeThenClose { inbound, outbound in
                var head = HTTPRequestHead(version: .http1_1, method: method, uri: path)
                head.headers.add(name: "Host", value: target.hostHeader)
                head.headers.add(name: "User-Agent", value: "quantbench-bench")
                head.headers.add(name: "Accept", value: accept)
                head.headers.add(name: "Connection", value: "close")
                if let key = target.apiKey { head.headers.add(name: "Authorization", value: "Bearer \(key)") }
                if let body {
                    head.headers.add(name: "Content-Type", value: "application/json")
                    head.headers.add(name: "Content-Length", value: String(body.count))
                }
                // The whole request goes out in one flush. Written part by part, a server
                // that answers as soon as it has the head and then closes (as a
                // `Connection: close` exchange allows) could close the channel before the
                // client's next write, which then fails with the answer already read.
                var request: [HTTPClientRequestPart] = [.head(head)]
                if let body { request.append(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
                request.append(.end(nil))
                var writeFailure: (any Error)?
                do { try await outbound.write(contentsOf: request) } catch { writeFailure = error }
                for try await part in inbound {
                    let t = Self.now()
                    switch part {
                    case .head(let h):
                        try onEvent(.head(status: Int(h.status.code), contentType: h.headers.first(name: "Content-Type")), t)
                    case .body(let b):
                        try onEvent(.body(b), t)
                    case .end:
                        try onEvent(.end, t)
                        return
                    }
                }
                if let writeFailure { throw writeFailure }
                throw HTTPStreamFailure.truncated("the connection closed before the response ended")
            }
        } catch let e as HTTPStreamFailure {
            if timedOut.withLock({ $0 }) { throw HTTPStreamFailure.timeout }
            throw e
        } catch {
            if timedOut.withLock({ $0 }) { throw HTTPStreamFailure.timeout }
            if error is HTTPStreamFailure { throw error }
            // What onEvent throws goes out unchanged; the channel's own errors are a
            // truncated response.
            if error is IOError || error is ChannelError || error is HTTPParserError {
                throw HTTPStreamFailure.truncated(Self.reason(error))
            }
            throw error
        }
    }

    /// A short reason for a NIO error (connection refused, and so on).
    static func reason(_ error: any Error) -> String {
        if let e = error as? IOError { return String(cString: strerror(e.errnoCode)) + " (errno \(e.errnoCode))" }
        if let e = error as? NIOConnectionError {
            if let first = e.connectionErrors.first { return reason(first.error) }
            if let dns = e.dnsAError ?? e.dnsAAAAError { return "cannot resolve \(e.host): \(dns)" }
            return "cannot connect to \(e.host):\(e.port)"
        }
        if let e = error as? ChannelError {
            switch e {
            case .connectTimeout: return "connect timed out"
            default: return "\(e)"
            }
        }
        return "\(error)"
    }
}
