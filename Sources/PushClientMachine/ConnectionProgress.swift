/// A step of a connection's transport, as its socket reports it (`ClientCore.connectionProgressed`):
/// the phases of `ConnectionState` before the server's SETTINGS.
package enum ConnectionProgress: Equatable {
    /// The TCP connect completed; a proxy tunnel (`throughProxy`) or the TLS handshake follows.
    case tcpConnected(throughProxy: Bool)
    /// The proxy opened the tunnel; the TLS handshake follows inside it.
    case tunnelOpened
    /// TLS is up with ALPN h2 and the HTTP/2 session exists: the server's SETTINGS are awaited.
    case handshakeCompleted
}
