import COpenSSL
import PushCore

extension TLSH2Socket {
    /// Throws unless the server agreed to HTTP/2 in the TLS handshake (ALPN `h2`), which APNs
    /// and its channel management hosts require.
    package func requireNegotiatedH2() throws(TransportError) {
        var proto: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &proto, &length)
        guard length == 2, let p = proto, p[0] == UInt8(ascii: "h"), p[1] == UInt8(ascii: "2") else {
            throw TransportError(.tls, "the server did not agree to HTTP/2 (ALPN h2); APNs requires it")
        }
    }
}
