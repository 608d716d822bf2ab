/// The shards shown, added up: the fleet's (or one campaign's) queue, outcomes and progress.
public struct FleetSummary: Encodable, Sendable {
    /// Shards added up (those that could be read).
    public var shards: Int
    /// Entries not yet delivered; nil when a shard cannot tell.
    public var waiting: Int?
    /// Entries in flight.
    public var pending: Int
    /// Entries waiting out a 429.
    public var delayed: Int
    /// 410s: the unregistered streams' length, or a campaign's counted Unregistered and ExpiredToken.
    public var unregistered: Int
    /// Outcome counts of the counted shards; nil when no shard counts.
    public var outcomes: OutcomeCounts?
    /// Progress (no sums when shards count in different units).
    public var progress: ProgressFigures
    /// Progress summed per unit: the counted shards' in notifications, the others' in entries
    /// (one item when every shard counts alike).
    public var progressByUnit: [ProgressFigures]

    enum CodingKeys: String, CodingKey {
        case shards, waiting, pending, delayed, unregistered, outcomes, progress, progressByUnit = "progress_by_unit"
    }

    /// Every key is written, unknown figures as null.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(shards, forKey: .shards)
        try c.encode(waiting, forKey: .waiting)
        try c.encode(pending, forKey: .pending)
        try c.encode(delayed, forKey: .delayed)
        try c.encode(unregistered, forKey: .unregistered)
        try c.encode(outcomes, forKey: .outcomes)
        try c.encode(progress, forKey: .progress)
        try c.encode(progressByUnit, forKey: .progressByUnit)
    }
}
