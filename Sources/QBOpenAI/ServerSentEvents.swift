/// An incremental parser of a `text/event-stream` body (the WHATWG server-sent events
/// format): bytes in as they arrive, each complete event's `data` out (its `data:` lines
/// joined by newlines). Comments and other fields are ignored; CR LF and LF both end lines.
public struct ServerSentEvents: Sendable {
    private var line: [UInt8] = []
    private var data: [String] = []
    private var hasData = false
    private var lastWasCR = false

    public init() {}

    /// Feeds bytes; returns the events they complete, in order.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [String] where Bytes.Element == UInt8 {
        var events: [String] = []
        for b in bytes {
            if b == UInt8(ascii: "\n") && lastWasCR {
                lastWasCR = false
                continue
            }
            lastWasCR = b == UInt8(ascii: "\r")
            if b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") {
                if let e = endLine() { events.append(e) }
            } else {
                line.append(b)
            }
        }
        return events
    }

    /// Whether bytes of an event that no blank line has ended are held (a stream cut off
    /// mid-event).
    public var hasPartialEvent: Bool { !line.isEmpty || hasData }

    private mutating func endLine() -> String? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty {
            guard hasData else { return nil }
            let event = data.joined(separator: "\n")
            data.removeAll()
            hasData = false
            return event
        }
        if line.first == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
        guard line[..<colon].elementsEqual("data".utf8) else { return nil }
        var value = colon < line.endIndex ? line[(colon + 1)...] : []
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        data.append(String(decoding: value, as: UTF8.self))
        hasData = true
        return nil
    }
}
