import PushClientCore

/// Where the client connects: Apple's production or sandbox host (port 443), or any host and
/// port (port 2197, a mock, a test server). The host is also the TLS server name that is
/// verified.
public struct APNsEnvironment: Sendable, Hashable, CustomStringConvertible {
    /// The host name.
    public let host: String
    /// The TCP port.
    public let port: Int

    /// `host`:`port` (checked when the client opens: a name without spaces, port 1...65535).
    public static func custom(host: String, port: Int) -> APNsEnvironment {
        APNsEnvironment(host: host, port: port)
    }

    /// APNs for apps built for the App Store, TestFlight and ad hoc (`api.push.apple.com:443`).
    public static let production = APNsEnvironment(apple: .production)
    /// APNs for development builds (`api.sandbox.push.apple.com:443`).
    public static let sandbox = APNsEnvironment(apple: .sandbox)

    private enum Apple: Int64 { case production = 0, sandbox = 1 }

    private init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Apple's host as the C ABI's `PUSH_OPT_ENVIRONMENT` sets it (one place names them).
    private init(apple: Apple) {
        var c = ClientConfiguration()
        try! c.set(.environment, int: apple.rawValue) // both values are in the option's range
        self.init(host: c.endpoint.host, port: c.endpoint.port)
    }

    /// "host:port".
    public var description: String { "\(host):\(port)" }
}
