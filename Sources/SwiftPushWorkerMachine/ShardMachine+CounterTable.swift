import SwiftPushKeys

extension ShardMachine.Counters {
    /// Where a counter is shown, besides the worker's last log line (which has every one).
    public struct Places: OptionSet, Sendable {
        public let rawValue: UInt8
        /// Creates a set of places.
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `/metrics` (`swiftpush_worker_<name>_total`) and the status JSON's `this_worker.counters`.
        public static let metrics = Places(rawValue: 1)
        /// The heartbeat's `counters` (`Heartbeat`), per shard.
        public static let heartbeat = Places(rawValue: 2)
        /// The status page's line about its own worker.
        public static let page = Places(rawValue: 4)
    }

    /// Every counter, in the order it is shown: its name (as `/metrics`, the log, the heartbeat
    /// and the status page spell it), its field, and where it is shown. The one list: the sum
    /// of two machines' counters, the metrics, the heartbeat, the page and the last log line
    /// are made from it (a test holds it to the struct's fields and to docs/worker.md).
    public static var table: [(name: String, field: WritableKeyPath<Self, Int>, places: Places)] {
        [("read", \.read, [.metrics, .heartbeat, .page]),
         ("sent", \.sent, [.metrics, .heartbeat, .page]),
         ("resent", \.resent, [.metrics, .page]),
         ("accepted", \.accepted, [.heartbeat]),
         ("rejected", \.rejected, [.heartbeat]),
         ("failed", \.failed, [.heartbeat]),
         ("duplicates", \.duplicates, [.metrics]),
         ("reclaimed", \.reclaimed, [.metrics, .page]),
         ("dead_lettered", \.deadLettered, [.metrics, .page]),
         ("delayed", \.delayed, [.metrics, .page]),
         ("promoted", \.promoted, [.metrics]),
         ("redis_reconnects", \.redisReconnects, [.metrics, .page]),
         ("checkpoints", \.checkpoints, [.metrics]),
         ("left_pending", \.leftPending, []),
         ("handed_back", \.handedBack, [])]
    }

    /// The names of the counters shown in `place`, in the table's order.
    public static func names(in place: Places) -> [String] {
        table.filter { $0.places.contains(place) }.map(\.name)
    }

    /// The counters shown in `place`, by name.
    public func named(in place: Places) -> [String: Int] {
        var out: [String: Int] = [:]
        for row in Self.table where row.places.contains(place) { out[row.name] = self[keyPath: row.field] }
        return out
    }

    /// Every counter, by name (the last log line's fields).
    public var logFields: [String: String] {
        var out: [String: String] = [:]
        for row in Self.table { out[row.name] = String(self[keyPath: row.field]) }
        return out
    }

    /// The sum of two machines' counters (a worker serving several shards reports one set).
    package static func + (a: Self, b: Self) -> Self {
        var s = a
        for row in table { s[keyPath: row.field] += b[keyPath: row.field] }
        return s
    }
}
