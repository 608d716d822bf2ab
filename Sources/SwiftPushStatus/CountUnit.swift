/// What the progress figures count.
public enum CountUnit: String, Sendable, Encodable {
    /// Notifications: from `stats:{s}`, which the workers and producers count.
    case notifications
    /// Stream entries: from the consumer group (`XINFO GROUPS`), for workers that count nothing.
    /// One per notification for single entries; a batch or multicast entry holds many.
    case entries
    /// Shards of both kinds added up: no sum is given.
    case mixed
}
