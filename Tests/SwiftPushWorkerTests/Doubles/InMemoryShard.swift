@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import SwiftPushKeys

/// One shard's keys held in memory with the semantics the Redis protocol gives them (the
/// stream, its consumer group with pending entries and delivery counts, the guards, progress,
/// outcomes, the unregistered stream, the delayed set, the counters and heartbeats), on a clock
/// the test sets. Several `InMemoryWorkQueue`s (consumers) share one. For unit tests of the
/// worker's machine; `WorkQueueContractTests` holds it to the Redis scripts.
public final class InMemoryShard: @unchecked Sendable {
    /// An entry of the stream.
    struct StoredEntry {
        let id: StreamID
        var fields: [(name: [UInt8], value: [UInt8])]
    }

    /// A pending entry of the group.
    struct Pending {
        var consumer: String
        var deliveries: Int
        var deliveredMillis: Int64
    }

    /// The clock (UNIX ms): what XADD ids, idle times, guard ages and due times are read on.
    public var nowMillis: Int64 = 1_700_000_000_000
    /// The stream, in id order.
    var stream: [StoredEntry] = []
    private var lastGenerated = StreamID(millis: 0, sequence: 0)
    /// The fast lane's stream (`push:{s}:fast`), in id order; its entries are named `f<id>`
    /// outside it (`FastLane`).
    var fastStream: [StoredEntry] = []
    /// The group's last delivered id (in each lane) and its pending entries.
    var lastDelivered = StreamID(millis: 0, sequence: 0)
    var lastDeliveredFast = StreamID(millis: 0, sequence: 0)
    var pending: [String: Pending] = [:]
    /// Written deliveries by pending entry (`written:{s}`).
    public internal(set) var written: [String: Int] = [:]
    /// Guards: id to the owner entry and the claim's time (s).
    var guards: [String: (owner: String, at: Int64)] = [:]
    /// Progress bitmaps by entry.
    public internal(set) var progress: [String: [UInt8]] = [:]
    /// The outcomes stream: its entries' ids and fields.
    public internal(set) var outcomes: [(id: String, fields: [(String, String)])] = []
    /// The unregistered stream's entries' fields.
    public internal(set) var unregistered: [[(String, String)]] = []
    /// The delayed set: member to due time and the entry's fields.
    var delayed: [String: (due: Int64, fields: [(name: [UInt8], value: [UInt8])])] = [:]
    /// `stats`.
    public internal(set) var stats: [String: Int] = [:]
    /// `workers`.
    public internal(set) var workers: [String: String] = [:]
    /// Campaign controls (`campaign:{s}:<name>`) and paused streams' entries
    /// (`paused:{s}:<name>`), by campaign (`InMemoryShard+Campaigns`).
    public var campaigns: [String: CampaignControl] = [:]
    public internal(set) var paused: [String: [[(name: [UInt8], value: [UInt8])]]] = [:]
    /// Throttled campaigns' token buckets (tokens, and when last filled, in µs).
    var buckets: [String: (tokens: Double, at: Double)] = [:]
    /// Keys whose writes fail (a key of the wrong type): "outcomes", "unregistered".
    public var brokenKeys: Set<String> = []

    /// An empty shard.
    public init() {}

    /// Adds an entry (as a producer's XADD); returns its id.
    /// `fast`: to the fast lane (its id as the worker names it, `f<id>`, is returned).
    @discardableResult
    public func add(_ fields: [(String, String)], fast: Bool = false) -> String {
        add(bytes: fields.map { (Array($0.0.utf8), Array($0.1.utf8)) }, fast: fast)
    }

    /// Adds an entry of byte fields; returns its id.
    @discardableResult
    func add(bytes fields: [(name: [UInt8], value: [UInt8])], fast: Bool = false) -> String {
        let ms = UInt64(nowMillis)
        let id = ms > lastGenerated.millis ? StreamID(millis: ms, sequence: 0) : StreamID(millis: lastGenerated.millis, sequence: lastGenerated.sequence + 1)
        lastGenerated = id
        if fast {
            fastStream.append(StoredEntry(id: id, fields: fields))
            return FastLane.prefix + id.description
        }
        stream.append(StoredEntry(id: id, fields: fields))
        return id.description
    }

    /// The order a listing of pending entries gives ids (as the worker names them): the fast
    /// lane's, then the bulk lane's, each in stream order; nil for an id of neither form.
    static func order(_ id: String) -> (Int, StreamID)? {
        FastLane.isFast(id) ? StreamID(String(id.dropFirst())).map { (0, $0) } : StreamID(id).map { (1, $0) }
    }

    /// Deletes entry `id` (as the worker names it) from its lane's stream.
    func remove(_ id: String) {
        guard let (lane, sid) = Self.order(id) else { return }
        if lane == 0 { fastStream.removeAll { $0.id == sid } } else { stream.removeAll { $0.id == sid } }
    }

    /// Entries of either lane not delivered yet.
    /// Fast-lane entries not delivered to any read yet.
    public var undeliveredFast: Int { fastStream.filter { $0.id > lastDeliveredFast }.count }
    public var undelivered: Int {
        stream.filter { $0.id > lastDelivered }.count + fastStream.filter { $0.id > lastDeliveredFast }.count
    }

    /// Entries in the stream (unsettled).
    public var length: Int { stream.count + fastStream.count }
    /// Entries pending (delivered, not acknowledged), and with `consumer`.
    public var pendingCount: Int { pending.count }
    public func pendingCount(of consumer: String) -> Int { pending.values.filter { $0.consumer == consumer }.count }
    /// The highest delivery count of any pending entry.
    public var highestDeliveryCount: Int { pending.values.map(\.deliveries).max() ?? 0 }
    /// Entries in the delayed set.
    public var delayedCount: Int { delayed.count }
    /// Everything read, settled, nothing delayed (docs/worker.md, "Completion").
    public var isDrained: Bool {
        pending.isEmpty && delayed.isEmpty && undelivered == 0
    }

    /// The stream entry `id`, if it is still there.
    func entry(_ id: String) -> StoredEntry? {
        guard let (lane, sid) = Self.order(id) else { return nil }
        return (lane == 0 ? fastStream : stream).first { $0.id == sid }
    }

    /// Appends an outcomes stream entry (fails for a broken key).
    func addOutcome(_ fields: [(String, String)]) throws(QueueError) {
        if brokenKeys.contains("outcomes") { throw QueueError("WRONGTYPE outcomes", connectionLost: false) }
        let id = StreamID(millis: UInt64(nowMillis), sequence: UInt64(outcomes.count))
        outcomes.append((id.description, fields))
    }

    /// Appends an unregistered stream entry (fails for a broken key).
    func addUnregistered(_ fields: [(String, String)]) throws(QueueError) {
        if brokenKeys.contains("unregistered") { throw QueueError("WRONGTYPE unregistered", connectionLost: false) }
        unregistered.append(fields)
    }
}
