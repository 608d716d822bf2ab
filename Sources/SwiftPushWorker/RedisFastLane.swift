import SwiftPushRedis
import SwiftPushKeys

/// The fast lane (docs/worker.md, "The fast lane"): a second stream per shard,
/// `push:{s}:fast`, in the same consumer group and under the same hash tag, that every read
/// names first and whose notifications have a share of max_in_flight that the bulk lane cannot
/// take (`fast_reserve`). Its entries go through exactly the protocol of the bulk lane's; the
/// worker names one `f<id>` (`prefix`) everywhere past the stream itself: in its own books, in
/// the guards, progress and written hashes, in delayed-set members and in outcome records, so
/// that an id of one stream is never taken for the same id of the other. Only the commands that
/// touch a stream (XACK, XDEL, XPENDING, XCLAIM, XRANGE, XADD) take the bare id, in that stream:
/// the scripts tell the lane by the `f` (a bulk id starts with a digit).
public enum FastLane {
    /// What a fast-lane entry's id starts with in the worker's books and records.
    public static let prefix = "f"

    /// Whether `entryID` (as the worker names it) is a fast-lane entry's.
    @inline(__always)
    public static func isFast(_ entryID: String) -> Bool { entryID.utf8.first == 0x66 }

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
