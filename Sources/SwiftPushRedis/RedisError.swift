/// Why a Redis command did not produce a reply, and what the caller should do about it.
///
/// Two questions decide a caller's next step: is the connection still usable
/// (`connectionLost`), and can trying again help (`isPermanent`). A lost connection is retried
/// with the caller's back-off (a restart, a failover, a network blip); a permanent failure — a
/// wrong password, a server certificate from an unknown CA or for another host name, a TLS
/// handshake the two sides cannot agree on, an unreadable CA or password file — stays until
/// someone changes the configuration or the server, so retrying at once only makes a storm of
/// connections: the caller stops (a command-line tool exits) or retries slowly.
///
/// The description names the cause and the endpoint, never a password.
public struct RedisError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure: a small set that can grow without breaking callers.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private enum Code: Hashable, Sendable {
            case connection, authentication, certificate, hostName, tls, configuration, reply, notReplicated
        }
        private let code: Code
        private init(_ code: Code) { self.code = code }

        /// The connection failed or broke: refused, reset, closed, timed out. Retry with back-off.
        public static let connection = Kind(.connection)
        /// The server refused the credentials (WRONGPASS, NOAUTH, a password for a server
        /// that has none). Permanent.
        public static let authentication = Kind(.authentication)
        /// The server's certificate does not lead to a trusted CA, or is expired or not yet
        /// valid. Permanent.
        public static let certificate = Kind(.certificate)
        /// The server's certificate is valid but not for the name (or address) we asked for.
        /// Permanent.
        public static let hostName = Kind(.hostName)
        /// Any other TLS handshake failure (no common protocol or cipher, a client
        /// certificate the server wants or refuses, a server that does not speak TLS). Permanent.
        public static let tls = Kind(.tls)
        /// A configuration that cannot work: an unreadable CA, certificate or password file, a
        /// missing environment variable, a host that does not resolve. Permanent.
        public static let configuration = Kind(.configuration)
        /// The server answered with an error reply where a command had to succeed (the
        /// connection is still usable).
        public static let reply = Kind(.reply)
        /// Writes were made but `WAIT` saw fewer replicas acknowledge them than asked for in its
        /// timeout (the connection is still usable; the writes may not survive a failover).
        public static let notReplicated = Kind(.notReplicated)

        public var description: String {
            switch code {
            case .connection: return "connection"
            case .authentication: return "authentication"
            case .certificate: return "certificate"
            case .hostName: return "host name"
            case .tls: return "TLS"
            case .configuration: return "configuration"
            case .reply: return "reply"
            case .notReplicated: return "not replicated"
            }
        }
    }

    /// What went wrong, naming the endpoint and the cause (never a secret).
    public let description: String
    /// True when the connection is unusable (I/O error, EOF, protocol error, timeout, and
    /// every failure to set one up): the caller reconnects. False for an error reply, after
    /// which the connection can be used again.
    public let connectionLost: Bool
    /// What kind of failure it is.
    public let kind: Kind
    /// True for a `.connection` error that is a timeout (no answer in time) rather than a
    /// refusal or a close: the one kind of failure a slow server explains.
    public internal(set) var timedOut = false

    /// An error of kind `.connection` when `connectionLost`, `.reply` otherwise (the two kinds
    /// the worker's own code makes).
    public init(description: String, connectionLost: Bool) {
        self.init(connectionLost ? .connection : .reply, description)
    }

    /// An error of `kind`; `connectionLost` follows from the kind.
    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
        connectionLost = kind != .reply && kind != .notReplicated
    }

    /// True when retrying cannot help until the configuration or the server changes: wrong
    /// credentials, an untrusted certificate, a wrong host name, a TLS handshake failure, a
    /// configuration that cannot be used. The caller must not retry at once (exit, or retry
    /// slowly); a lost connection (`.connection`) is not permanent.
    public var isPermanent: Bool {
        kind == .authentication || kind == .certificate || kind == .hostName || kind == .tls || kind == .configuration
    }
}
