/// An app or a campaign across the shards shown: its counts and progress.
public struct ScopeStatus: Encodable, Sendable {
    /// The app's or campaign's name.
    public var name: String
    /// Its outcome counts, summed over the counted shards.
    public var outcomes: OutcomeCounts
    /// Its progress (in notifications: only counted shards know apps and campaigns).
    public var progress: ProgressFigures
}
