import CSwiftPushABI

/// A snapshot of a client's counters, queues and latency (the C ABI's `push_client_stats`).
/// Counters are current; queue and connection figures are at most 50 ms old.
public struct APNsStats: Sendable, Equatable {
    /// Taken by a send, not yet written to a connection.
    public var queued: Int
    /// Written, waiting for the answer.
    public var inFlight: Int
    /// Results waiting to be taken.
    public var untaken: Int
    /// Requests written (every attempt counts).
    public var sent: Int
    /// Results accepted so far.
    public var accepted: Int
    /// Results rejected so far.
    public var rejected: Int
    /// Results failed so far.
    public var failed: Int
    /// Notifications sent again (refused streams, GOAWAY, 429, 5xx, expired tokens).
    public var retries: Int
    /// GOAWAY frames received.
    public var goaways: Int
    /// Connection attempts since the client opened.
    public var connectionsStarted: Int
    /// Connections carrying notifications now.
    public var connectionsOpen: Int
    /// Connections being set up now.
    public var connectionsOpening: Int
    /// Median time from send to answer, over answered notifications.
    public var latencyP50: Duration
    /// 99th percentile of the same.
    public var latencyP99: Duration
    /// The reason of the last GOAWAY ("" if none).
    public var lastGoawayReason: String
    /// The last connection failure ("" if none).
    public var lastConnectionError: String

    init(_ s: push_stats) {
        queued = Int(s.queued)
        inFlight = Int(s.in_flight)
        untaken = Int(s.unpolled)
        sent = Int(s.sent)
        accepted = Int(s.accepted)
        rejected = Int(s.rejected)
        failed = Int(s.failed)
        retries = Int(s.retries)
        goaways = Int(s.goaways)
        connectionsStarted = Int(s.connections_started)
        connectionsOpen = Int(s.connections_open)
        connectionsOpening = Int(s.connections_opening)
        latencyP50 = .microseconds(s.latency_p50_us)
        latencyP99 = .microseconds(s.latency_p99_us)
        var goaway = s.last_goaway_reason, error = s.last_connection_error
        lastGoawayReason = withUnsafeBytes(of: &goaway) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        lastConnectionError = withUnsafeBytes(of: &error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
