import SwiftPushRedis

/// Where the status reader's commands go: a Redis server (or, with the Redis layer, a cluster
/// router). Every command of one call touches the keys of one shard, which share a hash tag and
/// so one cluster slot: one round trip per shard.
public protocol StatusStore: AnyObject {
    /// Runs `commands` in one round trip on the server holding `key`'s slot; the replies in
    /// order (an error reply is a reply, not a throw). Throws when no reply came (the
    /// connection is then unusable: `RedisError`).
    func pipeline(_ commands: [[String]], routedBy key: String) throws -> [RedisReply]

    /// Every key of `type` matching `pattern` (a Redis glob), on every server holding keys
    /// (SCAN: the cost grows with the number of keys in the database, not of matches).
    func keys(matching pattern: String, type: String) throws -> [String]
}
