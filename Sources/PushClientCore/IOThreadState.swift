import CSwiftPushABI
import PushCore
import PushTransport

// What a `PushClient`'s I/O thread owns. None of these is ever touched by another thread (what
// callers and the I/O thread share is `Handoff`, behind its lock); they are split by what they
// are about so that each stays small. All are structs held by the client, so reaching a field
// costs what a property of the client did.

/// The notifications the I/O thread holds between taking them from `Handoff.submissions` and
/// ending them (`ResultOutbox`), and what dispatching them needs. I/O thread only.
struct IOQueue {
    /// Waiting for a stream, in order (resends at the front).
    var pending = SlotList()
    /// Waiting out a retry delay (429/5xx), by due time.
    var delayed = RetryTimers()
    /// Streams open on all connections (pool and retiring).
    var inFlightTotal = 0
    /// When deadlines, health and the pool's size are next looked at.
    var nextScanNanos: UInt64 = 0
    /// apns-id generator for notifications that bring none.
    var uuid = UUIDGenerator()
    /// The reason of the last GOAWAY (for the stats).
    var lastGoawayReason = ""
    /// Set while APNs refuses freshly signed tokens as expired (`ProviderToken.ExpiryVerdict`).
    var clockSuspectText: String?
    /// The current `authorization` header value (cleared when replaced and when the client goes).
    var authorizationBuffer: UnsafeMutableRawBufferPointer?
    /// The token generation `authorizationBuffer` belongs to.
    var authorizationGeneration = 0
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

/// Outcomes ended on the I/O thread since the last publish, and what publishing them needs
/// (`PushClient.publish` moves them into `Handoff` in one lock). I/O thread only.
struct ResultOutbox {
    /// Notifications with their outcome, not yet published.
    var finished = SlotList()
    /// This thread's counters since the last publish.
    var counters = ClientCounters()
    /// This thread's outcome counts since the last publish.
    var outcomeCounts = OutcomeCounts()
    /// This thread's answer latencies since the last publish.
    var latencies = LatencyHistogram()
    /// Results handed to the result callback are assembled here. Allocated at the end of the
    /// client's `init`, after its last early `throw` (so that a throwing `init` leaks nothing).
    let callbackBuffer: UnsafeMutablePointer<push_result>
}

/// What every request of the client's life uses unchanged, set once by `init` (read by any
/// thread: the send path copies the default topic and starts the deadline).
struct RequestConstants {
    /// `:authority` bytes, stable for the client's life (nghttp2 references them unchanged).
    let authority: UnsafeRawBufferPointer
    /// The default topic's bytes, stable for the client's life.
    let defaultTopic: UnsafeRawBufferPointer
    /// How long a notification may take, from its send.
    let deadlineNanos: UInt64
    /// What becomes of error answers (pure; from maxAttempts and retryDelayMillis).
    let retryPolicy: RetryPolicy

    /// Frees the byte buffers (the client's deinit).
    func deallocate() {
        authority.deallocate()
        UnsafeMutableRawPointer(mutating: defaultTopic.baseAddress!).deallocate()
    }
}
