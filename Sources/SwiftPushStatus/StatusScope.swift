/// What a figure is about inside one shard: all of it, one app, or one campaign.
public enum StatusScope: Hashable, Sendable {
    /// Every notification of the shard.
    case all
    /// The notifications of one app (a credential set of the workers' configuration).
    case app(String)
    /// The notifications of one campaign (an entry's optional `campaign` field).
    case campaign(String)
}
