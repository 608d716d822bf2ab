
/// One worker of the group: its heartbeat (`workers:{s}`) if it writes one, and what Redis saw
/// of its consumer (`XINFO CONSUMERS`), merged by consumer name over the shards shown.
public struct WorkerStatus: Encodable, Sendable {
    /// A heartbeat older than this is stale: the worker stopped writing it without removing it
    /// (killed, hung, cut off from Redis).
    public static let staleMillis = 10_000

    /// The consumer name.
    public var consumer: String
    /// The machine it runs on (from its heartbeat: every heartbeat field is nil for a worker
    /// that writes none).
    public var host: String?
    /// Its process id.
    public var pid: Int?
    /// The swiftpush version it runs.
    public var version: String?
    /// The shards it serves (its heartbeat's list, else the shards whose group knows it).
    public var shards: [String]
    /// When it started, UNIX ms.
    public var startedMillis: Int?
    /// When it wrote its heartbeat, UNIX ms.
    public var heartbeatMillis: Int?
    /// How old the heartbeat was at the read (Redis's clock against the worker's).
    public var heartbeatAgeMillis: Int?
    /// Whether the heartbeat is older than `staleMillis`.
    public var stale: Bool?
    /// Notifications it has in flight: its heartbeats' figures of the shards shown, added up
    /// (a worker serving several shards writes one heartbeat in each, with that shard's figure).
    public var inFlight: Int?
    /// Entries it holds.
    public var heldEntries: Int?
    /// Its heartbeat's counters.
    public var counters: [String: Int]
    /// Entries (not notifications) Redis has delivered to it and not had acknowledged (nil: not
    /// a consumer of the shards shown).
    public var redisPending: Int?
    /// Milliseconds since it last read or claimed, as Redis saw it.
    public var redisIdleMillis: Int?

    enum CodingKeys: String, CodingKey {
        case consumer, host, pid, version, shards, startedMillis = "started_ms", heartbeatMillis = "heartbeat_ms"
        case heartbeatAgeMillis = "heartbeat_age_ms", stale, inFlight = "in_flight_notifications", heldEntries = "held_entries"
        case counters, redisPending = "redis_pending_entries", redisIdleMillis = "redis_idle_ms"
    }

    /// Every key is written, unknown figures as null (a script reads one shape).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(consumer, forKey: .consumer)
        try c.encode(host, forKey: .host)
        try c.encode(pid, forKey: .pid)
        try c.encode(version, forKey: .version)
        try c.encode(shards, forKey: .shards)
        try c.encode(startedMillis, forKey: .startedMillis)
        try c.encode(heartbeatMillis, forKey: .heartbeatMillis)
        try c.encode(heartbeatAgeMillis, forKey: .heartbeatAgeMillis)
        try c.encode(stale, forKey: .stale)
        try c.encode(inFlight, forKey: .inFlight)
        try c.encode(heldEntries, forKey: .heldEntries)
        try c.encode(counters, forKey: .counters)
        try c.encode(redisPending, forKey: .redisPending)
        try c.encode(redisIdleMillis, forKey: .redisIdleMillis)
    }

    /// The workers of `readings`: each heartbeat (the newest when several shards hold one),
    /// each consumer (pending summed, the least idle), by name.
    static func merged(_ readings: [ShardReading], at now: Int) -> [WorkerStatus] {
        var byName: [String: WorkerStatus] = [:]
        // Each shard's heartbeat holds that shard's figures: in flight is their sum.
        var inFlight: [String: Int] = [:]
        for r in readings {
            for h in r.heartbeats {
                if let n = h.inFlight { inFlight[h.consumer, default: 0] += n }
                var w = byName[h.consumer] ?? WorkerStatus(consumer: h.consumer)
                if (h.heartbeatMillis ?? 0) >= (w.heartbeatMillis ?? -1) {
                    w.host = h.host
                    w.pid = h.pid
                    w.version = h.version
                    w.shards = h.shards.isEmpty ? w.shards : h.shards
                    w.startedMillis = h.startedMillis
                    w.heartbeatMillis = h.heartbeatMillis
                    w.heartbeatAgeMillis = h.heartbeatMillis.map { max(0, now - $0) }
                    w.stale = w.heartbeatAgeMillis.map { $0 > staleMillis }
                    w.inFlight = h.inFlight
                    w.heldEntries = h.heldEntries
                    w.counters = h.counters
                }
                if !w.shards.contains(r.shard) && h.shards.isEmpty { w.shards.append(r.shard) }
                byName[h.consumer] = w
            }
            for c in r.consumers {
                var w = byName[c.name] ?? WorkerStatus(consumer: c.name)
                w.redisPending = (w.redisPending ?? 0) + c.pending
                w.redisIdleMillis = min(w.redisIdleMillis ?? Int.max, c.idleMillis)
                if w.heartbeatMillis == nil && !w.shards.contains(r.shard) { w.shards.append(r.shard) }
                byName[c.name] = w
            }
        }
        for (name, n) in inFlight { byName[name]?.inFlight = n }
        return byName.values.sorted { $0.consumer < $1.consumer }
    }

    /// A worker known by name only.
    init(consumer: String) {
        self.consumer = consumer
        shards = []
        counters = [:]
    }
}
