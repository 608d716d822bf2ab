/// A status view: what `swiftpush status` prints and the status page shows (its JSON is
/// `status --json` and `/status.json`). Made from a snapshot through a focus; holds no payload,
/// no full token and no credential (none is ever read).
public struct FleetStatus: Encodable, Sendable {
    /// Redis's clock at the read, UNIX ms.
    public var timeMillis: Int
    /// The consumer group.
    public var group: String
    /// The campaign in focus; nil: every notification.
    public var campaign: String?
    /// The shards shown, added up.
    public var fleet: FleetSummary
    /// Each shard shown.
    public var shards: [ShardStatus]
    /// Each app the counted shards know (not in a campaign's view).
    public var apps: [ScopeStatus]
    /// Each campaign the counted shards know; in a campaign's view, that one.
    public var campaigns: [ScopeStatus]
    /// The group's workers.
    public var workers: [WorkerStatus]
    /// The latest 410s, newest first, tokens shortened (not in a campaign's view).
    public var recentUnregistered: [UnregisteredToken]
    /// The focus's rate at the reads so far, in runs with gaps where nobody measured (the chart).
    public var rateHistory: RateHistory
    /// What the figures cannot say here, and why.
    public var notes: [String]
    /// What could not be read.
    public var error: String?
    /// The worker serving the page (its own figures); nil elsewhere.
    public var thisWorker: LocalWorkerStatus?

    enum CodingKeys: String, CodingKey {
        case timeMillis = "time_ms", group, campaign, fleet, shards, apps, campaigns, workers
        case recentUnregistered = "recent_unregistered", rateHistory = "rate_history", notes, error, thisWorker = "this_worker"
    }

    /// Every key is written, unknown figures as null (a script reads one shape).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(timeMillis, forKey: .timeMillis)
        try c.encode(group, forKey: .group)
        try c.encode(campaign, forKey: .campaign)
        try c.encode(fleet, forKey: .fleet)
        try c.encode(shards, forKey: .shards)
        try c.encode(apps, forKey: .apps)
        try c.encode(campaigns, forKey: .campaigns)
        try c.encode(workers, forKey: .workers)
        try c.encode(recentUnregistered, forKey: .recentUnregistered)
        try c.encode(rateHistory, forKey: .rateHistory)
        try c.encode(notes, forKey: .notes)
        try c.encode(error, forKey: .error)
        try c.encode(thisWorker, forKey: .thisWorker)
    }
}
