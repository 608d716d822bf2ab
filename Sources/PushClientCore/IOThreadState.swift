import CSwiftPushABI
import PushCore
import PushTransport

// What a `PushClient`'s I/O thread owns. None of these is ever touched by another thread (what
// callers and the I/O thread share is `Handoff`, behind its lock); they are split by what they
// are about so that each stays small. All are structs held by the client, so reaching a field
// costs what a property of the client did.

/// The `authorization` header the I/O thread sends (token authentication): a buffer the client
/// owns, copied again only when the token is re-signed (`PushClient.currentAuthorization`).
/// I/O thread only.
struct AuthorizationHeader {
    /// The current value (cleared when replaced and when the client goes).
    var buffer: UnsafeMutableRawBufferPointer?
    /// The token generation `buffer` belongs to.
    var generation = 0
}

/// The connections and what opening them needs: one position per connection of
/// `PUSH_OPT_CONNECTIONS` (nil: to be opened), the retired ones still draining, the pool's
/// self-sizing and the name resolution in progress. I/O thread only (the back-off,
/// `PushClient.reconnect`, is shared by a group's threads behind its own lock).
struct ConnectionPool {
    /// One per position; `APNsConnection.poolIndex` is its index.
    var connections: [APNsConnection?]
    /// Set when the pool sizes itself: how many of the positions hold a connection.
    var sizing: PoolSizing?
    /// Out of the pool (GOAWAY, retired by us), finishing their streams.
    var retiring: [APNsConnection] = []
    /// This thread recorded a failure (or was held back) since its last accepted notification:
    /// the next accepted one tells the reconnect schedule.
    var mayBeBackingOff = false
    /// Connections take turns over a name's addresses.
    var addressRotation = 0
    /// Resolves names off the I/O thread.
    let resolverThread: ResolverThread
    /// The resolution in progress: its ticket and when it was asked for.
    var resolution: (ticket: UInt64, startedNanos: UInt64)?
    /// A fresh answer, used by the next round of connection attempts.
    var resolvedAddresses: [SocketConnect.Address]?
    /// The CONNECT request for the proxy, made once.
    let tunnelRequest: SecretBytes?

    init(positions: Int, sizing: PoolSizing?, resolverThread: ResolverThread, tunnelRequest: SecretBytes?) {
        connections = Array(repeating: nil, count: positions)
        self.sizing = sizing
        self.resolverThread = resolverThread
        self.tunnelRequest = tunnelRequest
    }
}
