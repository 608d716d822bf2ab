@testable import SwiftPushStatus
import SwiftPushRedis
import SwiftPushWorker

/// Redis replies as Redis shapes them, for the parsing tests.
enum Replies {
    static func s(_ text: String) -> RedisReply { .string(Array(text.utf8)) }

    /// A flat `name value ...` array: numbers become integer replies, nil a nil reply.
    static func fields(_ pairs: [(String, Any?)]) -> RedisReply {
        .array(pairs.flatMap { name, value -> [RedisReply] in
            switch value {
            case let n as Int: return [s(name), .integer(Int64(n))]
            case let t as String: return [s(name), s(t)]
            default: return [s(name), .null]
            }
        })
    }

    /// The replies of one shard's read, from made-up figures.
    static func shard(timeMillis: Int = 1_700_000_000_123, length: Int = 0, groups: RedisReply = .error("ERR no such key"),
                      consumers: RedisReply = .error("ERR no such key"), delayed: Int = 0, unregistered: Int = 0,
                      outcomes: Int = 0, stats: [(String, String)] = [], workers: [(String, String)] = [],
                      recent: RedisReply = .array([]), fastLength: Int = 0, fastGroups: RedisReply = .error("ERR no such key"),
                      controls: RedisReply = .array([])) -> [RedisReply] {
        [.array([s(String(timeMillis / 1000)), s(String(timeMillis % 1000 * 1000))]),
         .integer(Int64(length)), groups, consumers, .integer(Int64(delayed)), .integer(Int64(unregistered)), .integer(Int64(outcomes)),
         .array(stats.flatMap { [s($0.0), s($0.1)] }), .array(workers.flatMap { [s($0.0), s($0.1)] }), recent,
         .integer(Int64(fastLength)), fastGroups, controls]
    }

    /// `XINFO GROUPS` with one group.
    static func group(_ name: String = "senders", pending: Int, lag: Int?, entriesRead: Int?, consumers: Int = 1) -> RedisReply {
        .array([fields([("name", name), ("consumers", consumers), ("pending", pending), ("last-delivered-id", "0-0"),
                        ("entries-read", entriesRead), ("lag", lag)])])
    }

    /// A reading of shard `shard` from these replies.
    static func reading(_ shard: String, _ replies: [RedisReply], group: String = "senders") throws -> ShardReading {
        try ShardReading(keys: StatusKeys(shard: shard), group: group, replies: replies)
    }
}
