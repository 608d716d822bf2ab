import SwiftPushRedis

/// The consumer group's figures from `XINFO GROUPS push:{s}` (Redis 7).
public struct GroupInfo: Equatable, Sendable {
    /// Entries delivered and not yet acknowledged (the group's pending list).
    public var pending: Int
    /// Entries not yet delivered to the group; nil when Redis cannot tell (after entries were
    /// deleted above the group's last delivered id, or a `XGROUP SETID`).
    public var lag: Int?
    /// Entries the group has been delivered in all (Redis's logical counter); nil when unknown.
    public var entriesRead: Int?
    /// Consumers Redis knows in the group (dead ones stay until deleted).
    public var consumers: Int

    /// The figures of group `name` in `XINFO GROUPS`'s reply; nil when the stream or the group
    /// does not exist (an error reply, or no group of that name).
    public init?(reply: RedisReply, group name: String) {
        guard let fields = reply.elements.lazy.map(FieldList.init).first(where: { $0.text("name") == name }) else { return nil }
        pending = fields.integer("pending") ?? 0
        lag = fields.integer("lag")
        entriesRead = fields.integer("entries-read")
        consumers = fields.integer("consumers") ?? 0
    }

    /// Figures given one by one (tests).
    public init(pending: Int, lag: Int?, entriesRead: Int?, consumers: Int) {
        self.pending = pending
        self.lag = lag
        self.entriesRead = entriesRead
        self.consumers = consumers
    }
}
