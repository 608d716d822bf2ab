#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushCrypto

/// An OpenSSL context configured the way APNs needs: TLS 1.2 or newer, ALPN `h2`, and (for
/// clients) certificate and host-name verification against the system trust store or a CA file.
/// Every TLS client of the project is made here (issue 34: the APNs client, the channel
/// management client and the worker's Redis connections), so that they verify the same way.
public final class TLSContext: @unchecked Sendable {
    /// The `SSL_CTX`, owned.
    public let ctx: OpaquePointer

    /// ALPN protocol list in wire format: one length-prefixed entry, "h2".
    static let alpnH2: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]

    private init(ctx: OpaquePointer) {
        self.ctx = ctx
        _ = swiftpush_ssl_ctx_set_min_proto_version(ctx, TLS1_2_VERSION)
        // SSL_write may return after writing part of a large buffer, and we retry from wherever
        // the buffer then starts.
        _ = swiftpush_ssl_ctx_set_mode(ctx, Int(swiftpush_ssl_mode_partial_write() | swiftpush_ssl_mode_moving_buffer()))
    }

    deinit { SSL_CTX_free(ctx) }

    /// A client context. Verification is always on: with `caFile` the chain must lead to one of
    /// its certificates, otherwise to the system trust store. `offerH2` false: no ALPN (Redis
    /// speaks RESP over TLS and selects no protocol).
    public static func client(caFile: String?, certificate: ClientCertificate? = nil, offerH2: Bool = true) throws(TransportError) -> TLSContext {
        OpenSSLError.clear()
        guard let raw = SSL_CTX_new(TLS_client_method()) else {
            throw TransportError(.tls, "SSL_CTX_new: " + OpenSSLError.drain())
        }
        let c = TLSContext(ctx: raw)
        SSL_CTX_set_verify(raw, SSL_VERIFY_PEER, nil)
        if let caFile {
            guard SSL_CTX_load_verify_locations(raw, caFile, nil) == 1 else {
                throw TransportError(.tls, "cannot load CA file \(caFile): " + OpenSSLError.drain())
            }
        } else if SSL_CTX_set_default_verify_paths(raw) != 1 {
            throw TransportError(.tls, "cannot load the system trust store: " + OpenSSLError.drain())
        }
        guard !offerH2 || alpnH2.withUnsafeBufferPointer({ SSL_CTX_set_alpn_protos(raw, $0.baseAddress, UInt32($0.count)) }) == 0 else {
            throw TransportError(.tls, "cannot set ALPN: " + OpenSSLError.drain())
        }
        // Read-ahead: one read() takes whatever the kernel holds (many TLS records) instead of
        // two per record (header, then body). With answers arriving one per record, as from
        // a distant APNs, that halves the read calls; the 64 KiB buffer matches the loop's.
        SSL_CTX_ctrl(raw, SSL_CTRL_SET_READ_AHEAD, 1, nil)
        SSL_CTX_set_default_read_buffer_len(raw, 64 * 1024)
        try certificate?.install(in: raw)
        return c
    }

    /// A server context (the mock APNs server) presenting `certificateChainFile` and `keyFile`,
    /// selecting ALPN `h2` when `offerH2` (turning it off lets tests see a server without h2).
    public static func server(certificateChainFile: String, keyFile: String, offerH2: Bool = true) throws(TransportError) -> TLSContext {
        OpenSSLError.clear()
        guard let raw = SSL_CTX_new(TLS_server_method()) else {
            throw TransportError(.tls, "SSL_CTX_new: " + OpenSSLError.drain())
        }
        let c = TLSContext(ctx: raw)
        // An encrypted key is refused, not prompted for: OpenSSL's default callback would read a
        // password from the terminal and `swiftpush-cli mock` would hang there.
        SSL_CTX_set_default_passwd_cb(raw) { _, _, _, _ in -1 }
        guard SSL_CTX_use_certificate_chain_file(raw, certificateChainFile) == 1 else {
            throw TransportError(.tls, "cannot load certificate \(certificateChainFile): " + OpenSSLError.drain())
        }
        guard SSL_CTX_use_PrivateKey_file(raw, keyFile, SSL_FILETYPE_PEM) == 1,
              SSL_CTX_check_private_key(raw) == 1 else {
            throw TransportError(.tls, "cannot load private key \(keyFile): " + OpenSSLError.drain())
        }
        if offerH2 { SSL_CTX_set_alpn_select_cb(raw, selectH2, nil) }
        return c
    }

    /// A client-side SSL over the connecting socket `fd`, verifying `host`: its name (and SNI),
    /// or for an IP literal its address (no SNI for IP literals, RFC 6066 §3). On failure `fd`
    /// is closed.
    package func clientSSL(fd: Int32, host: String) throws(TransportError) -> OpaquePointer {
        do {
            return try clientSSL(onOwnedSocket: fd, verifying: host)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    /// As `clientSSL(fd:host:)`, for a caller that keeps owning `fd` whatever happens (it closes
    /// the socket itself, as the Redis connection does).
    package func clientSSL(onOwnedSocket fd: Int32, verifying host: String) throws(TransportError) -> OpaquePointer {
        guard let ssl = SSL_new(ctx) else {
            throw TransportError(.tls, "SSL_new: " + OpenSSLError.drain())
        }
        guard NoSignalSocketBIO.attach(ssl, fd: fd) else {
            SSL_free(ssl)
            throw TransportError(.tls, "BIO_new: " + OpenSSLError.drain())
        }
        SSL_set_connect_state(ssl)
        if SocketConnect.isIPLiteral(host) {
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = swiftpush_ssl_set_sni(ssl, host)
            SSL_set1_host(ssl, host)
        }
        return ssl
    }

    /// Requires and verifies a client certificate issued by a CA in `caFile` (certificate auth).
    public func requireClientCertificates(caFile: String) throws(TransportError) {
        guard SSL_CTX_load_verify_locations(ctx, caFile, nil) == 1 else {
            throw TransportError(.tls, "cannot load client CA file \(caFile): " + OpenSSLError.drain())
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
    }
}

/// ALPN selection for the server side: h2 or no agreement.
private func selectH2(_ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                      _ outlen: UnsafeMutablePointer<UInt8>?, _ input: UnsafePointer<UInt8>?,
                      _ inlen: UInt32, _ arg: UnsafeMutableRawPointer?) -> Int32 {
    let selected = out.map { UnsafeMutableRawPointer($0).assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self) }
    let rv = nghttp2_select_next_protocol(selected, outlen, input, inlen)
    return rv == 1 ? SSL_TLSEXT_ERR_OK : SSL_TLSEXT_ERR_NOACK
}
