/// A notification with the host's 64-bit tag, for `APNsEngine.submit`: the result comes back
/// with the same tag (`TaggedResult`), so a host can find what it sent without a lookup of
/// the library's.
public struct TaggedNotification: Sendable {
    /// The host's tag, returned with the result (the library does not look at it).
    public var tag: UInt64
    /// The notification.
    public var notification: PushNotification

    /// `notification` with `tag`.
    public init(tag: UInt64, notification: PushNotification) {
        self.tag = tag
        self.notification = notification
    }
}
