import Foundation
@testable import SwiftPushStatus
import SwiftPushWorker
import Testing
import SwiftPushKeys

@Suite("FleetStatus", .timeLimit(.minutes(1)))
struct FleetStatusTests {
    static let now = 1_700_000_100_000

    /// A counted shard: 1,000 enqueued, 600 accepted, 40 rejected (30 Unregistered, 10 BadDeviceToken),
    /// campaign "spring" 500 enqueued and 200 accepted in it.
    static func counted(_ shard: String) -> ShardReading {
        var r = ShardReading(shard: shard, timeMillis: now)
        r.streamExists = true
        r.streamLength = 360
        r.group = GroupInfo(pending: 60, lag: 300, entriesRead: nil, consumers: 2)
        r.unregistered = 30
        r.stats = StatsCounters(fields: [("enqueued", "1000"), ("accepted", "600"), ("rejected", "40"), ("reason:Unregistered", "30"),
                                         ("reason:BadDeviceToken", "10"), ("app:demo:accepted", "600"), ("app:demo:rejected", "40"),
                                         ("campaign:spring:enqueued", "500"), ("campaign:spring:accepted", "200"),
                                         ("campaign:spring:rejected", "5"), ("campaign:spring:reason:Unregistered", "5")])
        return r
    }

    static func snapshot(_ readings: [ShardReading], rates: [RateKey: Double] = [:]) -> StatusSnapshot {
        StatusSnapshot(group: "senders", timeMillis: now, readings: readings,
                       history: [StatusSnapshot.Tick(timeMillis: now - 1000, rates: rates.mapValues { $0 / 2 }),
                                 StatusSnapshot.Tick(timeMillis: now, rates: rates)])
    }

    @Test("The fleet adds its shards up: queue, outcomes by reason, progress, rate and time left")
    func fleetSums() {
        let all0 = RateKey(shard: "0", scope: .all, unit: .notifications), all1 = RateKey(shard: "1", scope: .all, unit: .notifications)
        let s = FleetStatus(Self.snapshot([Self.counted("0"), Self.counted("1")], rates: [all0: 40, all1: 60]))
        #expect(s.fleet.shards == 2 && s.fleet.waitingEntries == 600 && s.fleet.pendingEntries == 120 && s.fleet.unregisteredNotifications == 60)
        #expect(s.fleet.state == .working)
        #expect(s.fleet.outcomes?.accepted == 1200 && s.fleet.outcomes?.reasons == ["Unregistered": 60, "BadDeviceToken": 20])
        let p = s.fleet.progress
        #expect(p.unit == .notifications && p.done == 1280 && p.remaining == 720 && p.rate == 100 && p.etaSeconds == 7.2)
        #expect(s.rateHistory == RateHistory(unit: .notifications, segments: [[RatePoint(timeMillis: Self.now - 1000, rate: 50), RatePoint(timeMillis: Self.now, rate: 100)]]))
        #expect(s.apps.map(\.name) == ["demo"] && s.apps[0].outcomes.accepted == 1200)
        #expect(s.campaigns.map(\.name) == ["spring"] && s.campaigns[0].progress.done == 410 && s.campaigns[0].progress.remaining == 590)
        #expect(s.notes.isEmpty && s.error == nil)
    }

    @Test("Each campaign shows its control (cancelled on any shard wins, then paused) and its rate limit summed over the shards, in the JSON too")
    func campaignControls() {
        var a = Self.counted("0"), b = Self.counted("1")
        let plain = FleetStatus(Self.snapshot([a, b]))
        #expect(plain.campaigns.map(\.control) == ["active"] && plain.campaigns[0].rateLimit == nil && plain.apps[0].control == nil)
        a.controls = ["spring": CampaignControl(state: .paused, rate: 30)]
        b.controls = ["spring": CampaignControl(state: .cancelled, rate: 20)]
        let s = FleetStatus(Self.snapshot([a, b]))
        #expect(s.campaigns.map(\.control) == ["cancelled"] && s.campaigns[0].rateLimit == 50)
        b.controls = [:]
        let json = FleetStatus(Self.snapshot([a, b])).json()
        #expect(json.contains(#""control":"paused""#) && json.contains(#""rate_limit_per_s":30"#))
    }

    @Test("A campaign's view shows its counts, 410s and progress; an unknown campaign says so, its figures unknown, and names the known ones")
    func campaignFocus() {
        let spring = RateKey(shard: "0", scope: .campaign("spring"), unit: .notifications)
        let s = FleetStatus(Self.snapshot([Self.counted("0")], rates: [spring: 20]), focus: StatusFocus(campaign: "spring"))
        #expect(s.campaign == "spring" && s.fleet.outcomes?.accepted == 200 && s.fleet.unregisteredNotifications == 5 && s.fleet.state == .working)
        #expect(s.fleet.progress.done == 205 && s.fleet.progress.remaining == 295 && s.fleet.progress.rate == 20)
        #expect(s.apps.isEmpty && s.campaigns.map(\.name) == ["spring"] && s.recentUnregistered.isEmpty)
        let none = FleetStatus(Self.snapshot([Self.counted("0")]), focus: StatusFocus(campaign: "nope"))
        #expect(none.fleet.state == .unknown && none.fleet.outcomes == nil && none.fleet.progress.done == nil && none.fleet.progress.remaining == nil)
        #expect(none.fleet.progress.etaSeconds == nil && none.campaigns.map(\.state) == [.unknown])
        #expect(none.campaigns.map(\.name) == ["nope"] && none.notes == ["campaign nope unknown: no shard shown counts it; known campaigns: spring"])
        #expect(none.error == nil)
    }

    @Test("A shard asked for but not read is an empty view; others are left out")
    func shardFocus() {
        let s = FleetStatus(Self.snapshot([Self.counted("0"), Self.counted("1")]), focus: StatusFocus(shards: ["1", "9"]))
        #expect(s.shards.map(\.shard) == ["1", "9"] && !s.shards[1].known && s.shards[1].pendingEntries == 0 && s.shards[1].state == .unknown)
        #expect(s.fleet.pendingEntries == 60 && s.error == nil && s.fleet.state == .working)
        #expect(s.notes == ["shard 9 unknown: no key of it in Redis"])
        var known = Self.snapshot([Self.counted("0")])
        known.knownShards = ["0", "1"]
        let only = FleetStatus(known, focus: StatusFocus(shards: ["9"]))
        #expect(only.fleet.state == .unknown && only.notes == ["shard 9 unknown: no key of it in Redis; known shards: 0, 1"])
    }

    @Test("Shards with and without counters: no fleet sums across units, and a note says why")
    func mixedUnits() {
        var legacy = ShardReading(shard: "2", timeMillis: Self.now)
        legacy.streamExists = true
        legacy.streamLength = 50
        legacy.group = GroupInfo(pending: 5, lag: 10, entriesRead: 40, consumers: 1)
        let s = FleetStatus(Self.snapshot([Self.counted("0"), legacy]))
        #expect(s.fleet.progress.unit == .mixed && s.fleet.progress.done == nil)
        #expect(s.shards[1].progress.unit == .entries && s.shards[1].progress.done == 35 && s.shards[1].progress.remaining == 15)
        #expect(s.fleet.outcomes?.accepted == 600)
        #expect(s.notes.count == 1 && s.notes[0].hasPrefix("shard 2: no stats:{s}"))
    }

    @Test("A shard that could not be read is shown with its error and left out of the sums")
    func unreadable() {
        let s = FleetStatus(Self.snapshot([Self.counted("0"), ShardReading(shard: "1", timeMillis: Self.now, error: "connection refused")]))
        #expect(s.shards[1].error == "connection refused" && s.fleet.shards == 1 && s.fleet.pendingEntries == 60)
        #expect(s.fleet.progress.done == 640)
    }

    @Test("Workers merge heartbeats and consumers by name; an old heartbeat is stale")
    func workers() {
        var r0 = Self.counted("0"), r1 = Self.counted("1")
        var fresh = Heartbeat(consumer: "a")
        fresh.heartbeatMillis = Self.now - 1500
        fresh.shards = ["0", "1"]
        fresh.inFlight = 12
        var old = Heartbeat(consumer: "b")
        old.heartbeatMillis = Self.now - 45_000
        r0.heartbeats = [fresh, old]
        r1.heartbeats = [fresh]
        r0.consumers = [ConsumerInfo(name: "a", pending: 3, idleMillis: 20), ConsumerInfo(name: "quiet", pending: 0, idleMillis: 900_000)]
        r1.consumers = [ConsumerInfo(name: "a", pending: 4, idleMillis: 10)]
        let w = FleetStatus(Self.snapshot([r0, r1])).workers
        #expect(w.map(\.consumer) == ["a", "b", "quiet"])
        #expect(w[0].heartbeatAgeMillis == 1500 && w[0].stale == false && w[0].shards == ["0", "1"] && w[0].redisPending == 7 && w[0].redisIdleMillis == 10)
        #expect(w[1].stale == true && w[1].redisPending == nil)
        #expect(w[2].heartbeatMillis == nil && w[2].stale == nil && w[2].shards == ["0"] && w[2].redisIdleMillis == 900_000)
    }

    @Test("The JSON holds the documented fields and never a full token")
    func json() throws {
        var r = Self.counted("0")
        r.recentUnregistered = [UnregisteredToken(shard: "0", token: TokenText.shortened(String(repeating: "ab", count: 32)),
                                                  app: "demo", reason: "Unregistered", timeMillis: Self.now - 10)]
        let text = FleetStatus(Self.snapshot([r])).json()
        #expect(!text.contains(String(repeating: "ab", count: 32)) && text.contains("ababab…abab"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(Set(object.keys) == ["time_ms", "group", "campaign", "fleet", "shards", "apps", "campaigns", "workers",
                                     "recent_unregistered", "rate_history", "notes", "error", "this_worker"])
        let fleet = try #require(object["fleet"] as? [String: Any])
        let progress = try #require(fleet["progress"] as? [String: Any])
        #expect(progress["done_notifications"] as? Int == 640 && progress["done_entries"] is NSNull)
        #expect(progress["unit"] as? String == "notifications" && progress["eta_s"] is NSNull)
        let reasons = try #require((fleet["outcomes"] as? [String: Any])?["reasons"] as? [[String: Any]])
        #expect(reasons.first?["reason"] as? String == "Unregistered" && reasons.first?["notifications"] as? Int == 30)
    }
}
