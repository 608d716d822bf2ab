/// What became of one notification: its outcome, APNs's answer and the library's account.
public struct PushResult: Sendable, Equatable {
    /// Accepted, rejected or failed.
    public var outcome: PushOutcome
    /// The HTTP status of APNs's last answer (200, 400, 410...; 0 when there was none).
    public var status: Int
    /// Why it was rejected or failed (nil when accepted): APNs's reason, or the library's own
    /// (Timeout, ConnectionLost, Cancelled...); an unknown reason keeps APNs's text.
    public var reason: PushReason?
    /// APNs's reason text, or the library's account of a failure ("no answer within the
    /// deadline"); empty when accepted. At most 127 bytes.
    public var detail: String
    /// The notification's apns-id (a broadcast's apns-request-id): the caller's or the one the
    /// library made.
    public var apnsID: APNsID
    /// `apns-unique-id` (the sandbox's, and a broadcast's), when APNs sent one.
    public var uniqueID: APNsID?
    /// For 410 Unregistered: when APNs learned that the token is no longer valid, in
    /// milliseconds since 1970 (nil otherwise).
    public var timestamp: Int64?
    /// Attempts that may have reached APNs (resends of requests it never processed are not
    /// counted).
    public var attempts: Int
    /// From the send to the outcome.
    public var latency: Duration {
        get { .microseconds(latencyMicroseconds) }
        set { latencyMicroseconds = Int64(newValue / .microseconds(1)) }
    }
    /// `latency` as the client measures it (a `Duration` is made only when it is read).
    var latencyMicroseconds: Int64

    /// The (outcome, reason) pair the metrics count by: outcome (1, 2, 3) << 32 | the reason's
    /// table value (0 when accepted).
    var kind: Int64 {
        let o: Int64 = outcome == .accepted ? 1 : outcome == .rejected ? 2 : 3
        guard let reason else { return o << 32 }
        return o << 32 | Int64(reason.code.rawValue)
    }

    /// A result with these fields (tests, hosts that replay results).
    public init(outcome: PushOutcome, status: Int, reason: PushReason?, detail: String, apnsID: APNsID, uniqueID: APNsID? = nil,
                timestamp: Int64? = nil, attempts: Int, latency: Duration) {
        self.outcome = outcome
        self.status = status
        self.reason = reason
        self.detail = detail
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.timestamp = timestamp
        self.attempts = attempts
        latencyMicroseconds = Int64(latency / .microseconds(1))
    }
}
