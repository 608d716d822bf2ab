@testable import SwiftPushStatus
import SwiftPushRedis
import SwiftPushWorker
import Testing
import SwiftPushKeys

@Suite("ShardReading", .timeLimit(.minutes(1)))
struct ShardReadingTests {
    @Test("One read is thirteen commands on the shard's keys (the fast lane's, then the campaign controls' script), in the order the parser expects")
    func commands() {
        let c = ShardReading.commands(StatusKeys(shard: "7"), group: "g")
        #expect(c.dropLast().map { $0.joined(separator: " ") } == [
            "TIME", "XLEN push:{7}", "XINFO GROUPS push:{7}", "XINFO CONSUMERS push:{7} g", "ZCARD delayed:{7}",
            "XLEN unregistered:{7}", "XLEN outcomes:{7}", "HGETALL stats:{7}", "HGETALL workers:{7}",
            "XREVRANGE unregistered:{7} + - COUNT 5", "XLEN push:{7}:fast", "XINFO GROUPS push:{7}:fast"])
        #expect(c.last.map { [$0[0]] + $0.suffix(3) } == ["EVAL", "1", "campaigns:{7}", "campaign:{7}:"])
    }

    @Test("The campaign controls are read with the rest; a Redis that refuses the script shows none, not an error")
    func controls() throws {
        let s = { (t: String) in RedisReply.string(Array(t.utf8)) }
        let reply = RedisReply.array([s("spring"), .array([s("state"), s("paused"), s("rate"), s("50")]), s("gone"), .array([])])
        let r = try Replies.reading("0", Replies.shard(controls: reply))
        #expect(r.controls == ["spring": CampaignControl(state: .paused, rate: 50)])
        #expect(try Replies.reading("0", Replies.shard(controls: .error("NOSCRIPT no scripts"))).controls.isEmpty)
    }

    @Test("Without counters, progress is in entries from the group: done = read - pending - delayed")
    func uncounted() throws {
        let r = try Replies.reading("0", Replies.shard(length: 100, groups: Replies.group(pending: 8, lag: 30, entriesRead: 70),
                                                       consumers: .array([Replies.fields([("name", "w1"), ("pending", 8), ("idle", 1500)])]),
                                                       delayed: 2, unregistered: 3, outcomes: 60))
        #expect(r.timeMillis == 1_700_000_000_123 && r.streamExists && r.streamLength == 100 && r.pending == 8)
        #expect(!r.counted && r.unit == .entries && r.waiting == 30)
        #expect(r.done(.all) == 60 && r.remaining(.all) == 40)
        #expect(r.done(.campaign("x")) == nil && r.counts(.all) == nil)
        #expect(r.consumers == [ConsumerInfo(name: "w1", pending: 8, idleMillis: 1500)])
    }

    @Test("With counters, progress is in notifications: done = accepted + rejected + failed, remaining = enqueued - done")
    func counted() throws {
        let r = try Replies.reading("1", Replies.shard(length: 5, groups: Replies.group(pending: 2, lag: nil, entriesRead: nil),
                                                       stats: [("enqueued", "1000"), ("accepted", "600"), ("failed", "10"),
                                                               ("campaign:c:enqueued", "100"), ("campaign:c:accepted", "40")]))
        #expect(r.counted && r.unit == .notifications)
        // Redis cannot tell the lag: the stream holds only what is unsettled, less what is pending.
        #expect(r.waiting == 3)
        #expect(r.done(.all) == 610 && r.remaining(.all) == 390)
        #expect(r.done(.campaign("c")) == 40 && r.remaining(.campaign("c")) == 60)
        // A campaign this shard never saw: nothing done, nothing enqueued.
        #expect(r.done(.campaign("other")) == 0 && r.remaining(.campaign("other")) == 0)
    }

    @Test("Without counters or a known lag, waiting and remaining are unknown, not guessed")
    func unknownLag() throws {
        let r = try Replies.reading("0", Replies.shard(length: 100, groups: Replies.group(pending: 1, lag: nil, entriesRead: nil)))
        #expect(r.waiting == nil && r.remaining(.all) == nil && r.done(.all) == nil)
    }

    @Test("A shard with no keys at all is an empty reading, not an error")
    func empty() throws {
        let r = try Replies.reading("nope", Replies.shard())
        #expect(!r.streamExists && r.group == nil && r.waiting == 0 && r.done(.all) == 0 && r.remaining(.all) == 0 && r.stats == nil)
    }

    @Test("A stream before any group: everything in it waits")
    func noGroup() throws {
        let r = try Replies.reading("0", Replies.shard(length: 12, groups: .array([]), consumers: .error("NOGROUP")))
        #expect(r.streamExists && r.group == nil && r.waiting == 12 && r.remaining(.all) == 12 && r.consumers.isEmpty)
    }

    @Test("A key of another type is an error naming the command, never a silent zero")
    func wrongType() {
        var replies = Replies.shard()
        replies[4] = .error("WRONGTYPE Operation against a key holding the wrong kind of value")
        #expect(throws: StatusReadError.self) { try Replies.reading("0", replies) }
        replies = Replies.shard()
        replies[7] = .error("WRONGTYPE")
        #expect(throws: StatusReadError.self) { try Replies.reading("0", replies) }
    }

    @Test("Heartbeats keep their documented fields only; the latest 410s come with shortened tokens")
    func heartbeatsAndTokens() throws {
        let beat = #"{"consumer":"w2","host":"b","pid":7,"version":"1.2","started_ms":5,"heartbeat_ms":9,"shards":["1",2],"in_flight":3,"held_entries":1,"counters":{"sent":10,"note":"x"},"secret":"s"}"#
        let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
        let recent = RedisReply.array([.array([Replies.s("1700000000000-0"), Replies.fields([("token", token), ("app", "demo"), ("id", "n-1"), ("reason", "Unregistered"), ("timestamp_ms", "0")])])])
        let r = try Replies.reading("1", Replies.shard(workers: [("w2", beat), ("broken", "not json")], recent: recent))
        #expect(r.heartbeats.count == 1)
        let h = try #require(r.heartbeats.first)
        #expect(h.consumer == "w2" && h.host == "b" && h.pid == 7 && h.version == "1.2" && h.startedMillis == 5 && h.heartbeatMillis == 9)
        #expect(h.shards == ["1", "2"] && h.inFlight == 3 && h.heldEntries == 1 && h.counters == ["sent": 10])
        // No timestamp from APNs: the entry's own time.
        #expect(r.recentUnregistered == [UnregisteredToken(shard: "1", token: "00fc13ad…e8f0", app: "demo", reason: "Unregistered", timeMillis: 1_700_000_000_000)])
    }
}
