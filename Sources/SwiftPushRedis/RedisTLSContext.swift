#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import PushCore
import PushTransport

/// An OpenSSL client context for Redis, made once per configuration and shared by every
/// connection: TLS 1.2 or newer, the server's certificate verified against `ca_file` or the
/// system trust store, and optionally a client certificate. No ALPN (Redis does not use it).
/// Host-name verification is per connection (`RedisSocket.startTLS`).
public final class RedisTLSContext: @unchecked Sendable {
    /// The `SSL_CTX`, owned; OpenSSL's context is safe to share once configured.
    let ctx: OpaquePointer
    /// The name certificates must carry instead of the host connected to (`server_name`).
    let serverName: String?

    /// A context for `configuration`; an unreadable CA file, certificate or key is a
    /// `.configuration` error naming the file.
    public init(_ configuration: RedisTLSConfiguration) throws(RedisError) {
        OpenSSLError.clear()
        guard let raw = SSL_CTX_new(TLS_client_method()) else {
            throw RedisError(.tls, "SSL_CTX_new: " + OpenSSLError.drain())
        }
        ctx = raw
        serverName = configuration.serverName
        _ = swiftpush_ssl_ctx_set_min_proto_version(raw, TLS1_2_VERSION)
        SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nil)
        if let caFile = configuration.caFile {
            guard SSL_CTX_load_verify_locations(raw, caFile, nil) == 1 else {
                throw RedisError(.configuration, "cannot load the Redis CA file \(caFile): " + OpenSSLError.drain())
            }
        } else if SSL_CTX_set_default_verify_paths(raw) != 1 {
            throw RedisError(.configuration, "cannot load the system trust store: " + OpenSSLError.drain())
        }
        if let certFile = configuration.certFile {
            let keyFile = configuration.keyFile ?? certFile
            // An encrypted key is refused, not prompted for on the terminal.
            SSL_CTX_set_default_passwd_cb(raw) { _, _, _, _ in -1 }
            guard SSL_CTX_use_certificate_chain_file(raw, certFile) == 1 else {
                throw RedisError(.configuration, "cannot load the Redis client certificate \(certFile): " + OpenSSLError.drain())
            }
            guard SSL_CTX_use_PrivateKey_file(raw, keyFile, SSL_FILETYPE_PEM) == 1, SSL_CTX_check_private_key(raw) == 1 else {
                throw RedisError(.configuration, "the Redis client key \(keyFile) cannot be loaded or does not match the certificate: " + OpenSSLError.drain())
            }
        }
    }

    deinit { SSL_CTX_free(ctx) }

    /// A client SSL over the connected socket `fd` that verifies `host` (or `serverName`): its
    /// name, sent as SNI too, or for an address literal its IP (no SNI for literals, RFC 6066 §3).
    func makeSSL(fd: Int32, host: String) throws(RedisError) -> OpaquePointer {
        guard let ssl = SSL_new(ctx) else { throw RedisError(.tls, "SSL_new: " + OpenSSLError.drain()) }
        guard NoSignalSocketBIO.attach(ssl, fd: fd) else {
            SSL_free(ssl)
            throw RedisError(.tls, "BIO_new: " + OpenSSLError.drain())
        }
        SSL_set_connect_state(ssl)
        let name = serverName ?? host
        if SocketConnect.isIPLiteral(name) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name)
        } else {
            _ = swiftpush_ssl_set_sni(ssl, name)
            SSL_set1_host(ssl, name)
        }
        return ssl
    }
}
