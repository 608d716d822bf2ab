/// The names a shard's keys go by (docs/worker.md, "Keys"). One stream per shard; the hash tag
/// `{shard}` keeps every key of a shard in one cluster slot, so one Lua script may touch them all.
public struct StreamKeys: Sendable, Equatable {
    /// The shard.
    public let shard: String
    /// The notification stream (`push:{s}`): the bulk lane.
    public let stream: String
    /// The fast lane's stream (`push:{s}:fast`): read first on every read, with a share of the
    /// in-flight budget bulk cannot take (RedisFastLane.swift, docs/worker.md "The fast lane").
    public let fastStream: String
    /// The outcomes stream (`outcomes:{s}`).
    public let outcomes: String
    /// Tokens APNs reported gone (410) (`unregistered:{s}`).
    public let unregistered: String
    /// The delayed-retry sorted set (`delayed:{s}`), scored by due time in ms.
    public let delayed: String
    /// Prefix of the delayed entries' field hashes (`delayed:{s}:<entry id>:<index>`).
    public let delayedEntryPrefix: String
    /// Prefix of the guard hashes, one per time bucket (`guards:{s}:<bucket>`).
    public let guardPrefix: String
    /// Which notifications of each partly settled entry have their outcomes (`progress:{s}`).
    public let progress: String
    /// The notification counters for status (`stats:{s}`).
    public let stats: String
    /// The heartbeats of the workers serving the shard (`workers:{s}`).
    public let workers: String
    /// Per pending entry, the deliveries whose holder wrote a request of it (`written:{s}`,
    /// entry id → count; docs/worker.md, "Dead letters").
    public let written: String
    /// The names of the campaigns with a control (`campaigns:{s}`, a set).
    public let campaigns: String
    /// Prefix of each campaign's control hash (`campaign:{s}:<name>`) and paused stream
    /// (`paused:{s}:<name>`).
    public let campaignPrefix: String
    public let pausedPrefix: String
    /// Prefix of each throttled campaign's token bucket (`throttle:{s}:<name>`, a hash).
    public let throttlePrefix: String

    /// The keys of shard `shard` ("0" by default).
    public init(shard: String = "0") {
        self.shard = shard
        stream = "push:{\(shard)}"
        fastStream = "push:{\(shard)}:fast"
        outcomes = "outcomes:{\(shard)}"
        unregistered = "unregistered:{\(shard)}"
        delayed = "delayed:{\(shard)}"
        delayedEntryPrefix = "delayed:{\(shard)}:"
        guardPrefix = "guards:{\(shard)}:"
        progress = "progress:{\(shard)}"
        stats = "stats:{\(shard)}"
        workers = "workers:{\(shard)}"
        written = "written:{\(shard)}"
        campaigns = "campaigns:{\(shard)}"
        campaignPrefix = "campaign:{\(shard)}:"
        pausedPrefix = "paused:{\(shard)}:"
        throttlePrefix = "throttle:{\(shard)}:"
    }
}
