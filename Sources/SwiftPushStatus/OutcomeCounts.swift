/// Notifications counted by outcome in one scope (a shard, an app, a campaign, the fleet), as
/// the workers' settle script counts them in `stats:{s}` (docs/worker.md, "Status").
public struct OutcomeCounts: Equatable, Sendable {
    /// Notifications the producers put in (`enqueued`); nil when no producer counted (a plain
    /// XADD producer does not).
    public var enqueued: Int?
    /// APNs said 200.
    public var accepted = 0
    /// APNs or the worker's checks said no.
    public var rejected = 0
    /// No final answer.
    public var failed = 0
    /// Rejected and failed notifications by reason (`Unregistered`, `BadDeviceToken`, `Timeout`...).
    public var reasons: [String: Int] = [:]

    /// No notification counted.
    public init() {}

    /// Notifications with an outcome.
    public var done: Int { accepted + rejected + failed }

    /// Tokens APNs reported gone (410: `Unregistered` and `ExpiredToken`).
    public var gone: Int { reasons["Unregistered", default: 0] + reasons["ExpiredToken", default: 0] }

    /// The counts of two scopes together (a shard's and another's); `enqueued` stays known
    /// only if both knew it.
    public static func + (a: OutcomeCounts, b: OutcomeCounts) -> OutcomeCounts {
        var sum = OutcomeCounts()
        sum.enqueued = a.enqueued.flatMap { x in b.enqueued.map { x + $0 } }
        sum.accepted = a.accepted + b.accepted
        sum.rejected = a.rejected + b.rejected
        sum.failed = a.failed + b.failed
        sum.reasons = a.reasons.merging(b.reasons, uniquingKeysWith: +)
        return sum
    }

    /// Adds `value` to the counter named `kind` (`enqueued`, `accepted`, `rejected`, `failed`);
    /// false for another name.
    mutating func add(_ value: Int, kind: Substring) -> Bool {
        switch kind {
        case "enqueued": enqueued = (enqueued ?? 0) + value
        case "accepted": accepted += value
        case "rejected": rejected += value
        case "failed": failed += value
        default: return false
        }
        return true
    }
}
