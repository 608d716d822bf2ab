/// What APNs keeps of a broadcast channel's messages (chosen when the channel is created; it
/// cannot change).
public enum ChannelStoragePolicy: Int32, Sendable, Hashable {
    /// Nothing is stored (a higher publishing budget; broadcasts must expire at once:
    /// `PushExpiration.immediately`).
    case noMessageStored = 0
    /// The last broadcast is kept (up to 8 hours) for devices that were offline.
    case mostRecentMessageStored = 1
}
