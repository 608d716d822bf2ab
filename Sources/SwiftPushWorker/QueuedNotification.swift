import PushCore

/// A notification taken from a queue entry that passed every check: ready to send. Its byte
/// fields are slices of the entry's storage (`QueueEntry`), not copies.
public struct QueuedNotification: Sendable, Equatable {
    /// The producer's notification id (the `id` field).
    public var id: String
    /// The credential set it is sent with (the `app` field).
    public var app: String
    /// Device token, hex.
    public var token: ArraySlice<UInt8>
    /// apns-topic.
    public var topic: ArraySlice<UInt8>
    /// apns-push-type.
    public var pushType: PushType
    /// apns-priority (0: the push type's default).
    public var priority: Int32
    /// apns-expiration in UNIX seconds, if given.
    public var expiration: Int64?
    /// apns-collapse-id, if given.
    public var collapseID: ArraySlice<UInt8>?
    /// The JSON payload.
    public var payload: ArraySlice<UInt8>
    /// Give up (FAILED, reason Expired) instead of sending after this UNIX time, in seconds.
    public var notAfter: Int64?
    /// How many times it went through the delayed-retry set already (the `retries` field).
    public var retries: Int
    /// The apns-id: the name-based UUID of `id`.
    public var apnsID: String
}
