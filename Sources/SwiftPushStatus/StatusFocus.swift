/// What a status view shows: the whole fleet or one campaign, every shard or some.
public struct StatusFocus: Equatable, Sendable {
    /// One campaign's figures instead of every notification's; nil: all.
    public var campaign: String?
    /// Only these shards; nil: every shard read. A shard not read is shown empty.
    public var shards: [String]?

    /// A focus on `campaign` (nil: all) in `shards` (nil: every one).
    public init(campaign: String? = nil, shards: [String]? = nil) {
        self.campaign = campaign
        self.shards = shards
    }

    /// The scope of the figures inside a shard.
    public var scope: StatusScope { campaign.map { .campaign($0) } ?? .all }
}
