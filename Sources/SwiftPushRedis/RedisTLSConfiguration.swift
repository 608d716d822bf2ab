/// TLS towards Redis (`"tls"` in the configuration): the server's certificate is always verified,
/// against `caFile` or the system trust store, and so is its host name (`serverName`, or the host
/// connected to; an address literal is checked against the certificate's IP addresses).
public struct RedisTLSConfiguration: Equatable, Sendable {
    /// PEM CA certificates to trust instead of the system's.
    public var caFile: String?
    /// The name the certificate must carry (and SNI sends) instead of the host connected to:
    /// for a cluster whose nodes are announced by address but share one certificate name.
    public var serverName: String?
    /// A client certificate (PEM chain) for servers that ask for one (`tls-auth-clients`).
    public var certFile: String?
    /// Its private key (PEM, unencrypted); default: `certFile` (both in one file).
    public var keyFile: String?

    /// TLS with the system trust store and no client certificate.
    public init(caFile: String? = nil, serverName: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.serverName = serverName
        self.certFile = certFile
        self.keyFile = keyFile
    }

    /// The rules: a key file needs its certificate; names are not empty.
    public func check() throws(RedisConfigurationError) {
        if keyFile != nil && certFile == nil { throw RedisConfigurationError("tls: key_file needs cert_file") }
        for (name, value) in [("ca_file", caFile), ("server_name", serverName), ("cert_file", certFile), ("key_file", keyFile)] {
            if value?.isEmpty == true { throw RedisConfigurationError("tls: \(name) is empty") }
        }
    }
}
