/// What a view, shard or campaign is doing, in one word: the views say it instead of showing
/// `0 of 0 … time left done` for a fleet that never had work, or for a misspelt campaign (issue 35).
public enum ProgressState: String, Sendable, Encodable {
    /// Nothing in Redis is named so: a campaign no shard shown counts, a shard with no key.
    case unknown
    /// Nothing to do and nothing done: no work was ever there, or what remains is not known
    /// and nothing waits or moves.
    case idle
    /// Work was done and none remains: every notification has its outcome, nothing waits.
    case done
    /// Something remains, waits, is in flight or is being counted.
    case working

    /// The state of `progress`, where `queuedEntries` stream entries wait, are in flight or
    /// delayed (nil: Redis cannot tell; 0 for a campaign, whose entries are not told apart).
    public static func of(_ progress: ProgressFigures, queuedEntries: Int?) -> ProgressState {
        if (progress.remaining ?? 0) > 0 || (queuedEntries ?? 0) > 0 { return .working }
        // What remains is known: nothing. Done if anything was; a rate still measured over the
        // last seconds does not make a finished send "working".
        if progress.remaining == 0 { return (progress.done ?? 0) > 0 ? .done : .idle }
        return (progress.rate ?? 0) > 0 ? .working : .idle
    }
}
