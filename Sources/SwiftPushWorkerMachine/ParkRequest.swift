/// An entry of a paused campaign to move aside (`QueueRequest.park`), before its claim.
public struct ParkRequest: Sendable, Equatable {
    /// The entry's stream id.
    public let entryID: String
    /// Its campaign: the paused stream it goes to, and whose `state` the move checks.
    public let campaign: String
    /// Its notifications (`campaign:<c>:paused` in `stats:{s}` counts them).
    public let count: Int
    /// Nil: into the paused stream (the campaign is paused). A time (UNIX ms): into the delayed
    /// set, due then (the campaign is throttled and this worker holds enough of it already).
    public let dueMillis: Int64?

    /// A request to park entry `entryID` of `campaign`, holding `count` notifications, in the
    /// paused stream or (`dueMillis`) the delayed set.
    public init(entryID: String, campaign: String, count: Int, dueMillis: Int64? = nil) {
        self.entryID = entryID
        self.campaign = campaign
        self.count = count
        self.dueMillis = dueMillis
    }
}

/// What a park did with one entry.
public enum ParkAnswer: Int, Sendable, Equatable {
    /// Moved into `paused:{s}:<campaign>` (or the delayed set), acknowledged and deleted from
    /// the stream.
    case parked = 1
    /// Left in the stream, still this consumer's, to be taken in as usual: the campaign is no
    /// longer paused (a resume came first), or the entry is partly settled already (its
    /// progress names its stream id, so it is finished where it is).
    case takeIn = 0
    /// No longer this consumer's (another worker reclaimed it): let go.
    case notOurs = -1
}
