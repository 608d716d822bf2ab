import SwiftPushStatus
import SwiftPushRedis
import SwiftPushWorker
import Testing

/// The reader against a real redis-server seeded with the documented keys.
@Suite("StatusReader against redis-server", .serialized, .timeLimit(.minutes(5)))
struct StatusReaderTests {
    /// Shard "0" as today's workers leave it (no counters): 20 entries, 8 delivered to w1, one
    /// parked in the delayed set, two 410s; shard "1" as counting workers leave it; a string
    /// named like a stream, which is not a shard.
    static func seed(_ redis: RedisServerProcess) throws {
        for i in 1...20 { try redis.run("XADD", "push:{0}", "*", "id", "n\(i)", "app", "demo", "token", "00fc13ad\(i)", "payload", "{}") }
        try redis.run("XGROUP", "CREATE", "push:{0}", "senders", "0")
        try redis.run("XREADGROUP", "GROUP", "senders", "w1", "COUNT", "8", "STREAMS", "push:{0}", ">")
        try redis.run("ZADD", "delayed:{0}", "1", "1-1")
        for token in ["00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0", "a1"] {
            try redis.run("XADD", "unregistered:{0}", "*", "token", token, "app", "demo", "id", "n-\(token)", "reason", "Unregistered", "timestamp_ms", "1700000000000")
        }
        try redis.run("XADD", "outcomes:{0}", "*", "v", "1", "id", "n1", "outcome", "ACCEPTED")
        try redis.run("XADD", "push:{1}", "*", "v", "2", "app", "demo")
        try redis.run("HSET", "stats:{1}", "enqueued", "1000", "accepted", "300", "rejected", "5", "reason:BadDeviceToken", "5",
                      "campaign:spring:enqueued", "400", "campaign:spring:accepted", "100")
        try redis.run("HSET", "workers:{1}", "w2", #"{"consumer":"w2","host":"b","pid":9,"heartbeat_ms":1,"shards":["1"]}"#)
        try redis.run("SET", "push:{str}", "not a stream")
    }

    @Test("A read finds every shard with a stream and reads each shard's documented keys")
    func readsSeededKeys() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        try Self.seed(redis)
        let reader = StatusReader(group: "senders", shards: .discovered(including: [], rescanMillis: 60_000)) { try redis.connect() }
        let snapshot = reader.read()
        #expect(snapshot.error == nil && snapshot.readings.map(\.shard) == ["0", "1"])
        let r0 = snapshot.readings[0], r1 = snapshot.readings[1]
        #expect(r0.streamLength == 20 && r0.pending == 8 && r0.waiting == 12 && r0.delayed == 1 && r0.unregistered == 2 && r0.outcomeRecords == 1)
        #expect(!r0.counted && r0.done(.all) == 0 && r0.remaining(.all) == 21)
        #expect(r0.consumers.map(\.name) == ["w1"] && r0.consumers[0].pending == 8)
        #expect(r0.recentUnregistered.map(\.token) == ["…", "00fc13ad…e8f0"])
        #expect(r1.counted && r1.done(.all) == 305 && r1.remaining(.all) == 695 && r1.done(.campaign("spring")) == 100)
        #expect(r1.heartbeats.map(\.consumer) == ["w2"] && r1.waiting == 1)
        let view = FleetStatus(snapshot, focus: StatusFocus(campaign: "spring"))
        #expect(view.fleet.progress.done == 100 && view.fleet.progress.remaining == 300)
    }

    @Test("Listed shards are read as asked: one that does not exist is empty, not an error")
    func listedShards() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        try Self.seed(redis)
        let snapshot = StatusReader(group: "senders", shards: .listed(["1", "nope"])) { try redis.connect() }.read()
        #expect(snapshot.error == nil && snapshot.readings.map(\.shard) == ["1", "nope"])
        #expect(snapshot.readings[1].streamExists == false && snapshot.readings[1].remaining(.all) == 0)
        // Beside the unknown one, the known ones (the reader looked for them once).
        #expect(snapshot.knownShards == ["0", "1"])
    }

    @Test("Two reads give the rate of what was counted between them, on Redis's clock")
    func rate() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        try Self.seed(redis)
        let reader = StatusReader(group: "senders", shards: .listed(["1"]), rates: RateTracker(windowMillis: 10_000, minimumSpanMillis: 1)) { try redis.connect() }
        let first = reader.read()
        try redis.run("HINCRBY", "stats:{1}", "accepted", "500")
        // Redis's clock must have moved on by a millisecond (the rate's time step).
        let millis = { () -> Int in
            let t = (try? redis.connect().command("TIME"))?.elements.compactMap(\.integer) ?? []
            return t.count == 2 ? Int(t[0]) * 1000 + Int(t[1]) / 1000 : 0
        }
        _ = waitUntil(seconds: 5) { millis() > first.timeMillis }
        let second = reader.read()
        let key = RateKey(shard: "1", scope: .all, unit: .notifications)
        let expected = 500 * 1000 / Double(second.timeMillis - first.timeMillis)
        #expect(second.timeMillis > first.timeMillis && second.rate(key) == expected)
        #expect(second.history.count == 2)
    }

    @Test("Redis going away is said in the snapshot; the next read after it is back reconnects")
    func reconnects() throws {
        let redis = try RedisServerProcess()
        defer { redis.stop() }
        try Self.seed(redis)
        let port = redis.port
        let reader = StatusReader(group: "senders", shards: .listed(["0"])) {
            try TestRedis.router(port: port)
        }
        #expect(reader.read().error == nil)
        redis.stop()
        let lost = reader.read()
        #expect(lost.error != nil && lost.readings.first?.error != nil)
        #expect(reader.read().error != nil)
        let again = try RedisServerProcess(port: port)
        try again.run("XADD", "push:{0}", "*", "id", "x")
        let back = reader.read()
        #expect(back.error == nil && back.readings.first?.streamLength == 1)
    }
}
