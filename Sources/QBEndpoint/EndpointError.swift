/// Why `bench --endpoint` could not measure at all (a request that fails during a level is
/// counted, not thrown). Each names the flag or the URL at fault.
public enum EndpointError: Error, Sendable, CustomStringConvertible, Equatable {
    /// `--endpoint` is not an http:// URL with a host.
    case badURL(String, reason: String)
    /// No connection could be made (refused, no route, name not found, timed out).
    case unreachable(url: String, reason: String)
    /// The server answered the probe in a way no OpenAI-compatible server does.
    case badReply(url: String, reason: String)
    /// A flag's value is out of its range or malformed.
    case badOption(flag: String, reason: String)
    /// The suite has no case whose prompt can be sent over HTTP.
    case noPrompts(suite: String, reason: String)
    /// A `--dataset` file that cannot be read, or a line of it that is not a prompt.
    case badDataset(path: String, line: Int?, reason: String)

    public var description: String {
        switch self {
        case .badURL(let url, let reason): return "--endpoint '\(url)': \(reason)"
        case .unreachable(let url, let reason): return "--endpoint \(url): cannot connect (\(reason))"
        case .badReply(let url, let reason): return "--endpoint \(url): \(reason)"
        case .badOption(let flag, let reason): return "\(flag): \(reason)"
        case .noPrompts(let suite, let reason): return "suite '\(suite)': \(reason)"
        case .badDataset(let path, let line, let reason): return "--dataset \(path)\(line.map { ":\($0)" } ?? ""): \(reason)"
        }
    }
}

/// Where the server is: `http://host[:port][/base]`. Requests go to `<base>/chat/completions`
/// and so on, where the base is `/v1` unless the URL already ends in it.
public struct EndpointTarget: Sendable, Equatable {
    public let url: String
    public let host: String
    public let port: Int
    /// The path before `/chat/completions`, `/completions`, `/models` (e.g. `/v1`).
    public let basePath: String
    public let apiKey: String?

    public init(_ text: String, apiKey: String? = nil) throws(EndpointError) {
        url = text
        self.apiKey = apiKey
        var rest = Substring(text)
        if rest.hasPrefix("https://") {
            throw .badURL(text, reason: "https is not supported; put a TLS-terminating proxy in front or use http://")
        }
        guard rest.hasPrefix("http://") else { throw .badURL(text, reason: "expected a URL such as http://127.0.0.1:8080") }
        rest = rest.dropFirst(7)
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<slash]
        var path = String(rest[slash...])
        guard !authority.isEmpty, !authority.contains("@") else { throw .badURL(text, reason: "no host") }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .badURL(text, reason: "unclosed IPv6 address") }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            if after.isEmpty {
                port = 80
            } else {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()), (1...65535).contains(p) else {
                    throw .badURL(text, reason: "the port must be a number from 1 to 65535")
                }
                port = p
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else {
                throw .badURL(text, reason: "the port must be a number from 1 to 65535")
            }
            port = p
        } else {
            host = String(authority)
            port = 80
        }
        guard !host.isEmpty else { throw .badURL(text, reason: "no host") }
        if path.contains("?") || path.contains("#") { throw .badURL(text, reason: "no query or fragment, only a base path") }
        while path.hasSuffix("/") { path.removeLast() }
        for suffix in ["/chat/completions", "/completions"] where path.hasSuffix(suffix) {
            path.removeLast(suffix.count)
        }
        basePath = path.hasSuffix("/v1") ? path : path + "/v1"
    }

    /// `host:port` as the Host header writes it.
    public var hostHeader: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
