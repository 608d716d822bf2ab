/// Where one Redis server listens: a host name or address literal and a TCP port.
public struct RedisNode: Hashable, Sendable, CustomStringConvertible {
    /// A host name, an IPv4 address or an IPv6 address (without brackets).
    public var host: String
    /// The TCP port (1...65535).
    public var port: Int

    /// The node at `host`:`port`.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `HOST:PORT`, or `[IPV6]:PORT`; nil when it is neither (no port, a port out of
    /// 1...65535, an empty host).
    public init?(parsing text: String) {
        guard let colon = text.lastIndex(of: ":"),
              let port = Int(text[text.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, !host.contains("[") && !host.contains("]") else { return nil }
        // An IPv6 literal needs its brackets: "::1:6379" could be read two ways.
        if host.contains(":") && !text.hasPrefix("[") { return nil }
        self.init(host: host, port: port)
    }

    /// `host:port`, with an IPv6 literal in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
