import PushCore
import PushTransport

/// The client TLS context for Redis, made once per configuration and shared by every
/// connection: the project's one client builder (`TLSContext.client`, as the APNs client's),
/// without ALPN, with the server's certificate verified against `ca_file` or the system trust
/// store, and optionally a client certificate. Host-name verification is per connection
/// (`RedisSocket.startTLS`).
public final class RedisTLSContext: @unchecked Sendable {
    /// The shared OpenSSL context.
    let context: TLSContext
    /// The name certificates must carry instead of the host connected to (`server_name`).
    let serverName: String?

    /// A context for `configuration`; an unreadable CA file, certificate or key is a
    /// `.configuration` error naming the file.
    public init(_ configuration: RedisTLSConfiguration) throws(RedisError) {
        serverName = configuration.serverName
        let certificate = configuration.certFile.map { ClientCertificate.pem(certificateFile: $0, keyFile: configuration.keyFile ?? $0) }
        do {
            context = try TLSContext.client(caFile: configuration.caFile, certificate: certificate, offerH2: false)
        } catch {
            throw RedisError(.configuration, "Redis TLS: \(error.description)")
        }
    }

    /// A client SSL over the connected socket `fd` (which stays the caller's) that verifies
    /// `host`, or `serverName` when the configuration names one.
    func makeSSL(fd: Int32, host: String) throws(RedisError) -> OpaquePointer {
        do {
            return try context.clientSSL(onOwnedSocket: fd, verifying: serverName ?? host)
        } catch {
            throw RedisError(.tls, error.description)
        }
    }
}
