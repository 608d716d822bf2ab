import PushCore

/// One request the mock processed, as kept by its record (`MockServer.record()`).
///
/// Tests compare records with what a client reports to check exactly-once delivery: every
/// notification the client calls accepted must appear once, with the same apns-id. Requests
/// that were never processed (refused streams, streams above a GOAWAY's last-stream-id,
/// requests cut off by a killed connection) leave no record.
public struct MockRecord: Sendable, Equatable {
    /// The connection's serial number: 1-based, in accept order (connections turned away by
    /// `MockFaults.refuseConnectionsUntil` get none).
    public var connection: Int
    /// The HTTP/2 stream id of the request.
    public var stream: Int32
    /// The apns-id the mock answered with: the request's own, or the one it generated.
    public var apnsId: String
    /// The device token from the path, as sent ("" when the path had none).
    public var deviceToken: String
    /// The HTTP status answered; 0 for a stalled request (never answered).
    public var status: Int
    /// The APNs reason answered; "" for 200, "stalled" for a stalled request.
    public var reason: String
    /// The headers the request carried (nil: absent), so tests can check what a client sent.
    public var topic: String = ""
    /// `apns-push-type`.
    public var pushType: PushType? = nil
    /// `apns-priority`.
    public var priority: Int? = nil
    /// `apns-expiration`.
    public var expiration: Int64? = nil
    /// `apns-collapse-id`.
    public var collapseId: String? = nil
    /// A broadcast's `apns-channel-id` (nil: a device notification). A broadcast's `topic` is
    /// the bundle id its path names, and its `apnsId` the apns-request-id.
    public var channelId: String? = nil
    /// Whether an `authorization` header was sent.
    public var hadAuthorization = false
    /// When the mock processed the request (its last frame read; before any answer delay), in
    /// UNIX microseconds (CLOCK_REALTIME): a request's arrival, as `make bench-worker`'s
    /// latency rows measure it against the producer's clock on the same machine.
    public var receivedMicros: Int64 = 0

    /// A record with the given fields.
    public init(connection: Int, stream: Int32, apnsId: String, deviceToken: String, status: Int, reason: String) {
        self.connection = connection
        self.stream = stream
        self.apnsId = apnsId
        self.deviceToken = deviceToken
        self.status = status
        self.reason = reason
    }
}
