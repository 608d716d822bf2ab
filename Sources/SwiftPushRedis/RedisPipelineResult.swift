/// What `RedisRouter.pipeline` brings back: each command's reply, in order, and — when a
/// `RedisWait` was asked for — how many replicas acknowledged the writes.
public struct RedisPipelineResult: Sendable {
    /// The replies, one per command, in the order given.
    public var replies: [RedisReply]
    /// The fewest replicas that WAIT saw acknowledge any round of this pipeline (a pipeline
    /// redirected or retried part-way is written in several rounds, each followed by its own
    /// WAIT); 0 when a connection was lost before a round's WAIT answered. Nil without WAIT.
    public var replicasAcknowledged: Int?

    /// A result of `replies`, with `replicasAcknowledged` replicas confirming them.
    public init(replies: [RedisReply], replicasAcknowledged: Int?) {
        self.replies = replies
        self.replicasAcknowledged = replicasAcknowledged
    }

    /// True when no WAIT was asked for, or every round reached `wait.replicas`.
    public func isConfirmed(_ wait: RedisWait?) -> Bool {
        guard let wait else { return true }
        return (replicasAcknowledged ?? 0) >= wait.replicas
    }
}
