#if canImport(Glibc)
import Glibc
#endif

/// An error from the transport layer, with a reason class and a message for people.
public struct TransportError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure, which decides how notifications waiting on it end.
    public enum Kind: Sendable { case connect, tls, protocolError, closed, system }
    /// The kind of failure.
    public let kind: Kind
    /// What happened.
    public let description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    /// What a connection that the server closed right after the TLS handshake is said to have
    /// met (the client's machine and the channel client name it the same way).
    package static let closedAfterHandshakeText = "the server closed the connection right after the TLS handshake; with certificate authentication this usually means the certificate was refused"

    /// A failed system call, with errno's text.
    public static func system(_ call: String, _ err: Int32) -> TransportError {
        TransportError(.system, "\(call): \(String(cString: strerror(err)))")
    }
}
