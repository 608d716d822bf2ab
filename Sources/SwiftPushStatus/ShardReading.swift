import SwiftPushRedis
import SwiftPushKeys

/// What one shard's keys held at one moment: read in one round trip (`commands`), so the
/// figures are consistent with each other and stamped with Redis's own clock.
public struct ShardReading: Equatable, Sendable {
    /// The shard.
    public var shard: String
    /// Redis's clock at the read (`TIME`), UNIX ms: rates are measured on it, not on the
    /// reader's clock (a status read from another machine needs no synchronised clock).
    public var timeMillis: Int
    /// Whether `push:{s}` exists.
    public var streamExists = false
    /// `XLEN push:{s}`: with workers that delete settled entries, the entries not yet settled;
    /// with today's, every entry not trimmed.
    public var streamLength = 0
    /// The consumer group's figures; nil when the group does not exist yet (nothing read).
    public var group: GroupInfo?
    /// The group's consumers as Redis sees them.
    public var consumers: [ConsumerInfo] = []
    /// `ZCARD delayed:{s}`: entries waiting out a 429.
    public var delayed = 0
    /// `XLEN unregistered:{s}`: 410s recorded (unless trimmed).
    public var unregistered = 0
    /// `XLEN outcomes:{s}`: outcome records (one per outcome in format 1, per batch in 2 and 3).
    public var outcomeRecords = 0
    /// `stats:{s}`; nil when the hash does not exist (workers that count nothing).
    public var stats: StatsCounters?
    /// The heartbeats of `workers:{s}`.
    public var heartbeats: [Heartbeat] = []
    /// The latest 410s, newest first.
    public var recentUnregistered: [UnregisteredToken] = []
    /// `XLEN push:{s}:fast`: of `streamLength`, the fast lane's entries (its group's figures are
    /// added into `group`: waiting, pending and lag count both lanes).
    public var fastLength = 0
    /// Why the shard could not be read; the figures are then zero and not added up.
    public var error: String?
    /// The shard's campaign controls (`campaign:{s}:<name>`, `swiftpush campaign`), by name.
    public var controls: [String: CampaignControl] = [:]

    /// An empty reading of `shard` at `timeMillis` (tests, and what a failed read leaves).
    public init(shard: String, timeMillis: Int, error: String? = nil) {
        self.shard = shard
        self.timeMillis = timeMillis
        self.error = error
    }

    /// The latest 410s kept per shard.
    static let recentUnregisteredCount = 5

    /// The commands of one read, in the order `init(keys:group:replies:)` expects their replies.
    static func commands(_ keys: StatusKeys, group: String) -> [[String]] {
        [["TIME"],
         ["XLEN", keys.stream.stream],
         ["XINFO", "GROUPS", keys.stream.stream],
         ["XINFO", "CONSUMERS", keys.stream.stream, group],
         ["ZCARD", keys.stream.delayed],
         ["XLEN", keys.stream.unregistered],
         ["XLEN", keys.stream.outcomes],
         ["HGETALL", keys.stats],
         ["HGETALL", keys.workers],
         ["XREVRANGE", keys.stream.unregistered, "+", "-", "COUNT", String(recentUnregisteredCount)],
         ["XLEN", keys.stream.fastStream],
         ["XINFO", "GROUPS", keys.stream.fastStream],
         ["EVAL", CampaignControl.readAllScript, "1", keys.stream.campaigns, keys.stream.campaignPrefix]]
    }

    /// The reading that `commands`' replies describe. A missing key is an empty figure (an
    /// unknown shard is an empty view); a reply of the wrong type (a key of another type) throws.
    init(keys: StatusKeys, group groupName: String, replies: [RedisReply]) throws(StatusReadError) {
        guard replies.count == 13 else { throw StatusReadError("shard \(keys.shard): \(replies.count) replies to 13 commands") }
        let time = replies[0].elements.compactMap { $0.integer }
        guard time.count == 2 else { throw StatusReadError("TIME: an unexpected reply") }
        self.init(shard: keys.shard, timeMillis: Int(time[0]) * 1000 + Int(time[1]) / 1000)
        func integer(_ i: Int, _ what: String) throws(StatusReadError) -> Int {
            if case .integer(let n) = replies[i] { return Int(n) }
            throw StatusReadError("\(what): \(replies[i].errorText ?? "an unexpected reply")")
        }
        streamLength = try integer(1, "XLEN \(keys.stream.stream)")
        // XINFO answers an error for a missing stream: then there is no group either.
        streamExists = replies[2].errorText == nil
        group = GroupInfo(reply: replies[2], group: groupName)
        consumers = ConsumerInfo.list(replies[3])
        delayed = try integer(4, "ZCARD \(keys.stream.delayed)")
        unregistered = try integer(5, "XLEN \(keys.stream.unregistered)")
        outcomeRecords = try integer(6, "XLEN \(keys.stream.outcomes)")
        if let e = replies[7].errorText { throw StatusReadError("HGETALL \(keys.stats): \(e)") }
        let statFields = FieldList(replies[7]).texts
        stats = statFields.isEmpty ? nil : StatsCounters(fields: statFields)
        if let e = replies[8].errorText { throw StatusReadError("HGETALL \(keys.workers): \(e)") }
        heartbeats = FieldList(replies[8]).texts.compactMap { Heartbeat(field: $0.0, json: $0.1) }
        recentUnregistered = UnregisteredToken.list(replies[9], shard: keys.shard)
        try addFastLane(length: integer(10, "XLEN \(keys.stream.fastStream)"), groups: replies[11], group: groupName)
        // A Redis that refuses scripts shows no controls rather than no shard.
        controls = replies[12].errorText == nil ? CampaignControl.all(from: replies[12], elements: \.elements, text: \.text) : [:]
    }

    /// Adds the fast lane's figures (`push:{s}:fast`, docs/worker.md "The fast lane") to the
    /// shard's: its entries to the stream's length, its group's pending, lag and entries read
    /// to the group's (a lag unknown in either lane is unknown).
    mutating func addFastLane(length: Int, groups: RedisReply, group groupName: String) {
        fastLength = length
        streamLength += length
        guard let fast = GroupInfo(reply: groups, group: groupName) else { return }
        streamExists = true
        guard var g = group else {
            group = fast
            return
        }
        g.pending += fast.pending
        g.lag = g.lag.flatMap { a in fast.lag.map { a + $0 } }
        g.entriesRead = g.entriesRead.flatMap { a in fast.entriesRead.map { a + $0 } }
        group = g
    }
}

extension RedisReply {
    /// The text of an error reply, nil for any other.
    var errorText: String? {
        if case .error(let e) = self { return e }
        return nil
    }
}
