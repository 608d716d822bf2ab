/// A settlement waiting to be sent (or in the settle in flight), with what the machine needs
/// once it is applied: how many of the entry's notifications it settles, and the outcomes to
/// count for `/metrics`.
struct QueuedSettlement {
    var settlement: EntrySettlement
    /// Notifications it gives an outcome or parks.
    var notes: Int
    /// Its outcomes by app, kind and reason, with their latencies.
    var tally: [OutcomeTally]
    /// When it was queued (monotonic ns): a settle waits a little for company (`settleNext`).
    var queuedNanos: UInt64
}

/// Outcomes of one kind and reason for one app, and the latencies (first send to outcome, µs)
/// of those that were sent.
public struct OutcomeTally: Sendable {
    public var app: String
    public var kind: OutcomeRecord.Kind
    public var reason: String
    public var count: Int
    public var latenciesUs: [Int64]
}
