/// A result with the tag its notification was submitted with (`APNsEngine.take`).
public struct TaggedResult: Sendable, Equatable {
    /// The host's tag (`TaggedNotification.tag`).
    public var tag: UInt64
    /// What became of the notification.
    public var result: PushResult

    /// `result` with `tag`.
    public init(tag: UInt64, result: PushResult) {
        self.tag = tag
        self.result = result
    }
}
