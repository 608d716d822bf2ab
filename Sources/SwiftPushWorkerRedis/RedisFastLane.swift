import SwiftPushRedis
import SwiftPushKeys
import SwiftPushWorkerMachine

/// The fast lane's commands and replies (`FastLane`: its names in the worker's books).
extension FastLane {
    /// Whether `stream` (a key named in a read's reply) is a fast lane.
    static func isFastStream(_ stream: String) -> Bool { stream.hasSuffix(":fast") }

    /// The listing of this consumer's pending entries after `after` (`QueueRequest.ownPending`):
    /// from a fast-lane cursor (or the start), the fast lane's rest and then the bulk lane from
    /// its start; from a bulk cursor, the bulk lane's rest. Read-only, at a restart or after a
    /// lost connection: two commands there cost nothing on the hot path.
    static func ownPendingCommands(_ keys: StreamKeys, group: String, consumer: String, after: String?, max: Int) -> [RedisArguments] {
        let bulk = RedisArguments(["XPENDING", keys.stream, group, after.flatMap { isFast($0) ? nil : "(" + $0 } ?? "-", "+", String(max), consumer])
        if let after, !isFast(after) { return [bulk] }
        let start = after.map { "(" + $0.dropFirst() } ?? "-"
        return [RedisArguments(["XPENDING", keys.fastStream, group, start, "+", String(max), consumer]), bulk]
    }

    /// The page of `ownPendingCommands`' replies: the fast lane's rows (named `f<id>`) first,
    /// then the bulk lane's, at most `max` in all (so that a short page still says it was the
    /// last).
    static func ownPending(_ replies: [RedisReply], after: String?, max: Int) -> [PendingEntry] {
        func rows(_ r: RedisReply, _ pre: String) -> [PendingEntry] {
            r.elements.compactMap { row in
                let f = row.elements
                guard f.count == 4, let id = f[0].text, let n = f[3].integer else { return nil }
                return PendingEntry(entryID: pre + id, deliveries: Int(n))
            }
        }
        if replies.count < 2 { return replies.first.map { rows($0, "") } ?? [] }
        return Array((rows(replies[0], prefix) + rows(replies[1], "")).prefix(max))
    }
}
