import PushCore
import PushCrypto

/// A configuration made ready to connect: the password read (from the configuration, its file
/// or its environment variable) into memory cleared when the connector is freed, the TLS
/// context built once, the timeouts. Every connection to every node of a deployment is made
/// through one connector (`connect(to:)`), so a password file is read and a CA file parsed
/// once, not per connection.
///
/// Immutable once made; may be shared between threads.
public final class RedisConnector: Sendable {
    /// The configuration it was made from (its password source, not the password).
    public let configuration: RedisConfiguration
    /// The ACL user, nil for the default user.
    let username: String?
    /// The password; nil: no AUTH.
    let password: SecretBytes?
    /// The TLS context; nil: plain TCP.
    let tls: RedisTLSContext?

    /// Reads what `configuration` points to. Errors (a missing password file or variable, an
    /// unreadable CA file or client certificate) are permanent and name the file or variable.
    public init(_ configuration: RedisConfiguration) throws(RedisError) {
        do throws(RedisConfigurationError) {
            try configuration.check()
        } catch {
            throw RedisError(.configuration, "Redis configuration: \(error.description)")
        }
        self.configuration = configuration
        username = configuration.username
        password = try configuration.password.resolve()
        tls = try configuration.tls.map { c throws(RedisError) in try RedisTLSContext(c) }
    }

    /// How long setting up a connection may take.
    public var connectTimeoutMillis: Int { configuration.connectTimeoutMillis }
    /// How long a reply may take.
    public var commandTimeoutMillis: Int { configuration.commandTimeoutMillis }

    /// A new connection to `node` (TCP or TLS, then AUTH).
    public func connect(to node: RedisNode) throws(RedisError) -> RedisConnection {
        try RedisConnection(node: node, connector: self)
    }

    /// A new connection to the configured server (the first node: for a single server).
    public func connect() throws(RedisError) -> RedisConnection {
        try connect(to: configuration.nodes[0])
    }
}
