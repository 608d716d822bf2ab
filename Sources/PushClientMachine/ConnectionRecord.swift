import PushCore

/// What `ClientCore` keeps of a connection beside its `ConnectionState`, for its own bookkeeping:
/// nothing here decides a transition (that is the state's); these are the back-off's ticket, the
/// addresses still to try and the token its requests carried.
package struct ConnectionRecord {
    /// It was started as the back-off's probe (`ReconnectBackoff.beginAttempt`): its end
    /// without failure lets the next attempt go.
    package var isProbe = false
    /// Addresses of the same resolution still to try if this one's TCP connect fails.
    package var fallbackAddresses: [SocketAddress] = []
    /// Set when this connection tries the next address of an attempt whose TCP connect failed:
    /// that attempt's start and error, which count as the failure if this one cannot even start.
    package var fallbackOf: (startedNanos: UInt64, error: TransportError)?
    /// The provider token generation of the last request submitted on it.
    package var tokenGeneration = 0
}
