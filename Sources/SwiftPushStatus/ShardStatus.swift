/// One shard in a status view: its queue as Redis holds it (in stream entries), what its workers
/// hold (in notifications), and the focus's outcomes and progress in it. Every count's JSON name
/// says what it counts (issue 35): a batch or multicast entry holds many notifications.
public struct ShardStatus: Encodable, Sendable {
    /// The shard.
    public var shard: String
    /// Unknown (no key of it), idle, done or working, in the focus.
    public var state: ProgressState
    /// Whether any of its keys exists (an unknown shard is shown empty, not as an error).
    public var known: Bool
    /// Whether its workers count outcomes (`stats:{s}`).
    public var counted: Bool
    /// Why it could not be read.
    public var error: String?
    /// `XLEN push:{s}`, in entries.
    public var streamEntries: Int
    /// Entries not yet delivered (nil: Redis cannot tell).
    public var waitingEntries: Int?
    /// Entries delivered and not settled (the group's pending list).
    public var pendingEntries: Int
    /// Entries waiting out a 429.
    public var delayedEntries: Int
    /// Notifications enqueued and neither settled nor in flight; nil where not counted.
    public var waitingNotifications: Int?
    /// Notifications the workers hold in flight (their fresh heartbeats); nil: not known.
    public var inFlightNotifications: Int?
    /// 410s recorded (`XLEN unregistered:{s}`), one per notification.
    public var unregisteredNotifications: Int
    /// Outcome records (`XLEN outcomes:{s}`).
    public var outcomeRecords: Int
    /// Consumers in the group.
    public var consumers: Int
    /// The focus's outcome counts here; nil without counters.
    public var outcomes: OutcomeCounts?
    /// The focus's progress here.
    public var progress: ProgressFigures

    enum CodingKeys: String, CodingKey {
        case shard, state, known, counted, error, streamEntries = "stream_entries", waitingEntries = "waiting_entries"
        case pendingEntries = "pending_entries", delayedEntries = "delayed_entries", waitingNotifications = "waiting_notifications"
        case inFlightNotifications = "in_flight_notifications", unregisteredNotifications = "unregistered_notifications"
        case outcomeRecords = "outcome_records", consumers, outcomes, progress
    }

    /// Every key is written, unknown figures as null (a script reads one shape).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(shard, forKey: .shard)
        try c.encode(state, forKey: .state)
        try c.encode(known, forKey: .known)
        try c.encode(counted, forKey: .counted)
        try c.encode(error, forKey: .error)
        try c.encode(streamEntries, forKey: .streamEntries)
        try c.encode(waitingEntries, forKey: .waitingEntries)
        try c.encode(pendingEntries, forKey: .pendingEntries)
        try c.encode(delayedEntries, forKey: .delayedEntries)
        try c.encode(waitingNotifications, forKey: .waitingNotifications)
        try c.encode(inFlightNotifications, forKey: .inFlightNotifications)
        try c.encode(unregisteredNotifications, forKey: .unregisteredNotifications)
        try c.encode(outcomeRecords, forKey: .outcomeRecords)
        try c.encode(consumers, forKey: .consumers)
        try c.encode(outcomes, forKey: .outcomes)
        try c.encode(progress, forKey: .progress)
    }

    /// The view of `reading` in `scope` at Redis time `now`, at `rate`.
    init(_ r: ShardReading, scope: StatusScope, rate: Double?, now: Int) {
        shard = r.shard
        known = r.known
        counted = r.counted
        error = r.error
        streamEntries = r.streamLength
        waitingEntries = r.waiting
        pendingEntries = r.pending
        delayedEntries = r.delayed
        waitingNotifications = scope == .all ? r.waitingNotifications(at: now) : nil
        inFlightNotifications = scope == .all ? r.inFlightNotifications(at: now) : nil
        unregisteredNotifications = r.unregistered
        outcomeRecords = r.outcomeRecords
        consumers = r.group?.consumers ?? 0
        outcomes = r.counts(scope)
        progress = ProgressFigures(unit: r.unit, done: r.done(scope), remaining: r.remaining(scope), rate: rate)
        let queued = scope == .all ? r.waiting.map { $0 + r.pending + r.delayed } : 0
        state = !r.known && r.error == nil ? .unknown : ProgressState.of(progress, queuedEntries: queued)
    }
}
