/// The shards shown, added up: the fleet's (or one campaign's) queue, outcomes and progress.
/// Figures an operator reads are in notifications; the queue as Redis holds it is in stream
/// entries, and each JSON name says which (issue 35).
public struct FleetSummary: Encodable, Sendable {
    /// Shards added up (those that could be read).
    public var shards: Int
    /// Unknown, idle, done or working.
    public var state: ProgressState
    /// Notifications enqueued and neither settled nor in flight, in the shards that count
    /// them; nil when one of those cannot tell (or in a campaign's view).
    public var waitingNotifications: Int?
    /// Notifications in flight at the workers (their fresh heartbeats); nil when unknown.
    public var inFlightNotifications: Int?
    /// Entries not yet delivered (Redis's lag); nil when a shard cannot tell.
    public var waitingEntries: Int?
    /// Entries delivered and not settled (the groups' pending lists).
    public var pendingEntries: Int
    /// Entries waiting out a 429.
    public var delayedEntries: Int
    /// 410s: the unregistered streams' length, or a campaign's counted Unregistered and
    /// ExpiredToken; one per notification.
    public var unregisteredNotifications: Int
    /// Outcome counts of the counted shards; nil when no shard counts.
    public var outcomes: OutcomeCounts?
    /// Progress (no sums when shards count in different units).
    public var progress: ProgressFigures
    /// Progress summed per unit: the counted shards' in notifications, the others' in entries
    /// (one item when every shard counts alike).
    public var progressByUnit: [ProgressFigures]

    enum CodingKeys: String, CodingKey {
        case shards, state, waitingNotifications = "waiting_notifications", inFlightNotifications = "in_flight_notifications"
        case waitingEntries = "waiting_entries", pendingEntries = "pending_entries", delayedEntries = "delayed_entries"
        case unregisteredNotifications = "unregistered_notifications", outcomes, progress, progressByUnit = "progress_by_unit"
    }

    /// Every key is written, unknown figures as null.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(shards, forKey: .shards)
        try c.encode(state, forKey: .state)
        try c.encode(waitingNotifications, forKey: .waitingNotifications)
        try c.encode(inFlightNotifications, forKey: .inFlightNotifications)
        try c.encode(waitingEntries, forKey: .waitingEntries)
        try c.encode(pendingEntries, forKey: .pendingEntries)
        try c.encode(delayedEntries, forKey: .delayedEntries)
        try c.encode(unregisteredNotifications, forKey: .unregisteredNotifications)
        try c.encode(outcomes, forKey: .outcomes)
        try c.encode(progress, forKey: .progress)
        try c.encode(progressByUnit, forKey: .progressByUnit)
    }
}
