import PushCore
import PushCrypto
import PushClientCore

/// An HTTP CONNECT proxy that connections tunnel through (to APNs and to the channel
/// management host), optionally with Basic credentials.
public struct APNsProxy: Sendable, CustomStringConvertible {
    /// The proxy's host name or address.
    public var host: String
    /// Its port.
    public var port: Int
    /// "user:password", kept in memory that is cleared when freed.
    let credentials: SecretBytes?

    /// A proxy at `host`:`port` without credentials.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
        credentials = nil
    }

    /// A proxy at `host`:`port` with Basic credentials (sent as Proxy-Authorization).
    public init(host: String, port: Int, user: String, password: String) {
        self.host = host
        self.port = port
        credentials = SecretBytes(copying: user + ":" + password)
    }

    /// A proxy at `host`:`port` with "user:password" credentials as a host read them (nil: none).
    init(host: String, port: Int, credentials: String?) {
        self.host = host
        self.port = port
        self.credentials = credentials.map { SecretBytes(copying: $0) }
    }

    /// "host:port" (never the credentials).
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Sets the proxy on `c` through the C ABI's setters.
    func apply(to c: inout ClientConfiguration) throws(PushError) {
        try c.setOption(.proxy, text: description)
        if let credentials {
            try credentials.withUnsafeBytes { (bytes) throws(PushError) in try c.setOption(.proxyCredentials, bytes: bytes) }
        }
    }
}
