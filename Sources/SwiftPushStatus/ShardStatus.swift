/// One shard in a status view: its queue as Redis holds it, and the focus's outcomes and
/// progress in it.
public struct ShardStatus: Encodable, Sendable {
    /// The shard.
    public var shard: String
    /// Whether any of its keys exists (an unknown shard is shown empty, not as an error).
    public var known: Bool
    /// Whether its workers count outcomes (`stats:{s}`).
    public var counted: Bool
    /// Why it could not be read.
    public var error: String?
    /// `XLEN push:{s}`.
    public var streamEntries: Int
    /// Entries not yet delivered (nil: Redis cannot tell).
    public var waiting: Int?
    /// Entries delivered and not settled: in flight.
    public var pending: Int
    /// Entries waiting out a 429.
    public var delayed: Int
    /// 410s recorded (`XLEN unregistered:{s}`).
    public var unregistered: Int
    /// Outcome records (`XLEN outcomes:{s}`).
    public var outcomeRecords: Int
    /// Consumers in the group.
    public var consumers: Int
    /// The focus's outcome counts here; nil without counters.
    public var outcomes: OutcomeCounts?
    /// The focus's progress here.
    public var progress: ProgressFigures

    enum CodingKeys: String, CodingKey {
        case shard, known, counted, error, streamEntries = "stream_entries", waiting, pending, delayed, unregistered
        case outcomeRecords = "outcome_records", consumers, outcomes, progress
    }

    /// Every key is written, unknown figures as null (a script reads one shape).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(shard, forKey: .shard)
        try c.encode(known, forKey: .known)
        try c.encode(counted, forKey: .counted)
        try c.encode(error, forKey: .error)
        try c.encode(streamEntries, forKey: .streamEntries)
        try c.encode(waiting, forKey: .waiting)
        try c.encode(pending, forKey: .pending)
        try c.encode(delayed, forKey: .delayed)
        try c.encode(unregistered, forKey: .unregistered)
        try c.encode(outcomeRecords, forKey: .outcomeRecords)
        try c.encode(consumers, forKey: .consumers)
        try c.encode(outcomes, forKey: .outcomes)
        try c.encode(progress, forKey: .progress)
    }

    /// The view of `reading` in `scope`, at `rate`.
    init(_ r: ShardReading, scope: StatusScope, rate: Double?) {
        shard = r.shard
        known = r.streamExists || r.stats != nil || r.unregistered > 0 || r.outcomeRecords > 0
        counted = r.counted
        error = r.error
        streamEntries = r.streamLength
        waiting = r.waiting
        pending = r.pending
        delayed = r.delayed
        unregistered = r.unregistered
        outcomeRecords = r.outcomeRecords
        consumers = r.group?.consumers ?? 0
        outcomes = r.counts(scope)
        progress = ProgressFigures(unit: r.unit, done: r.done(scope), remaining: r.remaining(scope), rate: rate)
    }
}
