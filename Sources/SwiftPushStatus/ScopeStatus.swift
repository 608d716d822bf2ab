/// An app or a campaign across the shards shown: its counts and progress, summed over the
/// shards that hold it (the rate the same figure in every view: the page's rows, the fleet line
/// of `status --campaign`).
public struct ScopeStatus: Encodable, Sendable {
    /// The app's or campaign's name.
    public var name: String
    /// Unknown (no shard shown counts it), idle, done or working.
    public var state: ProgressState
    /// Its outcome counts, summed over the counted shards.
    public var outcomes: OutcomeCounts
    /// Its progress (in notifications: only counted shards know apps and campaigns).
    public var progress: ProgressFigures
    /// A campaign's control (`swiftpush campaign`): `active`, `paused` or `cancelled` (cancelled
    /// on any shard shown: cancelled; else paused on any: paused); nil for an app.
    public var control: String?
    /// A campaign's rate limit (notifications/s, the shards' together); nil: none.
    public var rateLimit: Double?

    enum CodingKeys: String, CodingKey {
        case name, state, outcomes, progress, control
        case rateLimit = "rate_limit_per_s"
    }
}
