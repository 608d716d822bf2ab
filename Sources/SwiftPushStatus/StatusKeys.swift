import SwiftPushKeys

/// The keys of one shard that the status reads (docs/worker.md, "Keys" and "Status"): the
/// worker's own (`StreamKeys`) and the two it writes for the status, `stats:{s}` and `workers:{s}`.
public struct StatusKeys: Sendable, Equatable {
    /// The shard's name (what is between the braces).
    public let shard: String
    /// The worker's keys of the shard.
    public let stream: StreamKeys
    /// The counters hash.
    public let stats: String
    /// The heartbeats hash.
    public let workers: String

    /// The keys of shard `shard`.
    public init(shard: String) {
        self.shard = shard
        stream = StreamKeys(shard: shard)
        stats = "stats:{\(shard)}"
        workers = "workers:{\(shard)}"
    }

    /// The shard a `push:{s}` key names; nil for another key.
    public static func shard(ofStream key: String) -> String? {
        guard key.hasPrefix("push:{"), key.hasSuffix("}"), key.count > 7 else { return nil }
        return String(key.dropFirst(6).dropLast())
    }
}
