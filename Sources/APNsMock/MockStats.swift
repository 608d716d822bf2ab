/// A snapshot of the mock server's counters, taken with `MockServer.stats()` (or `GET /stats`
/// on the control interface). Counters survive `stop()`, so tests can read them afterwards.
public struct MockStats: Sendable, Equatable, CustomStringConvertible {
    /// Requests answered (any status); stalled requests are counted in `stalledRequests`.
    public var requests: Int = 0
    /// Requests answered with 200.
    public var accepted: Int = 0
    /// Requests answered with an error, by reason text (`"BadDeviceToken"` → count).
    public var rejectedByReason: [String: Int] = [:]
    /// Requests processed but never answered (`MockFaults.stallEveryNth`, `stallTokens`).
    public var stalledRequests: Int = 0
    /// Connections served since start (TCP accepts, whether or not TLS then succeeded).
    public var connections: Int = 0
    /// Connections open now.
    public var openConnections: Int = 0
    /// Connection objects not yet freed: open ones, and closed ones something still holds
    /// (the timers hold a connection until its last delayed answer has come due). Tests use it
    /// to see that nothing keeps a connection alive for ever.
    public var liveConnectionObjects: Int = 0
    /// Sockets closed at once because of `MockFaults.refuseConnectionsUntil`.
    public var refusedConnections: Int = 0
    /// PING frames received from clients (answered by nghttp2).
    public var pingsReceived: Int = 0
    /// Connections closed after the TLS handshake because of `MockFaults.refuseClientCertificates`.
    public var refusedCertificates: Int = 0
    /// Connections closed abruptly by `MockFaults.killConnectionAfterRequests`.
    public var killedConnections: Int = 0
    /// Request streams that closed without an answer (reset by the client, above a GOAWAY's
    /// last-stream-id, or the connection went away first); stalled ones included.
    public var unansweredStreams: Int = 0
    /// Streams reset with RST_STREAM REFUSED_STREAM: injected (`refuseEveryNthStream`), or
    /// opened while a lowered stream limit was not yet acknowledged.
    public var refusedStreams: Int = 0
    /// GOAWAY frames sent (after N requests, or for a stream-limit violation).
    public var goaways: Int = 0
    /// Connections that opened more streams than MAX_CONCURRENT_STREAMS allowed and were sent
    /// GOAWAY(REFUSED_STREAM) for it.
    public var streamLimitViolations: Int = 0
    /// The most request streams that were open at once on one connection: shows whether
    /// clients used the raised MAX_CONCURRENT_STREAMS.
    public var peakConcurrentStreams: Int = 0
    /// Records kept (see `MockServer.Configuration.recordRequests`).
    public var records: Int = 0
    /// Requests not recorded because the record was full (`recordLimit`).
    public var recordsDropped: Int = 0

    /// Requests answered with an error.
    public var rejected: Int { rejectedByReason.values.reduce(0, +) }

    /// Creates an empty snapshot.
    public init() {}

    /// One line for people: `requests 10 accepted 8 rejected 2 (BadDeviceToken 2) ...`.
    public var description: String {
        var s = "requests \(requests) accepted \(accepted) rejected \(rejected)"
        if !rejectedByReason.isEmpty {
            let parts = rejectedByReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            s += " (" + parts.joined(separator: ", ") + ")"
        }
        s += " stalled \(stalledRequests) refused-streams \(refusedStreams) unanswered-streams \(unansweredStreams)"
        s += " goaways \(goaways) stream-limit-violations \(streamLimitViolations)"
        s += " connections \(connections) refused-connections \(refusedConnections) refused-certificates \(refusedCertificates) killed-connections \(killedConnections)"
        s += " peak-streams \(peakConcurrentStreams)"
        return s
    }
}
