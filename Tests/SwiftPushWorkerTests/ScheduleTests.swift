import Testing
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis

/// Scheduled sending (issue 32, item 5; ShardMachine+Schedule.swift): an entry whose `send_at`
/// is ahead is parked whole in the delayed set, due then, with no trip counted; the machine
/// promotes it when it falls due, and sends it then.
@Suite("Schedule: send_at holds an entry in the delayed set until then")
struct ScheduleTests {
    @Test("Held until send_at (nothing sent before), promoted by the machine that parked it, sent once after, retries unchanged; a send_at past or unreadable sends at once")
    func heldUntilSendAt() throws {
        let h = MachineHarness(settings: MachineHarness.settings { $0.reclaimIntervalMillis = 60_000 })
        let at = h.now.wallMillis + 2000
        let later = h.shard.add(Entries.multicast("m", tokens: [Entries.token(0), Entries.token(1)], [("send_at", String(at))]))
        h.shard.add(Entries.single("now", token: Entries.token(5), [("send_at", String(h.now.wallMillis - 1))]))
        h.shard.add(Entries.single("odd", token: Entries.token(6), [("send_at", "soon")]))
        h.run(limitMillis: 1500) { false }
        #expect(h.sends.count == 2, "only the entries whose send_at is not ahead go at once")
        #expect(h.shard.delayedCount == 1)
        let parked = try #require(h.shard.delayed.values.first)
        #expect(parked.due == at)
        #expect(parked.fields.contains { $0.name == Array("retries".utf8) && $0.value == Array("0".utf8) })
        #expect(parked.fields.contains { $0.name == Array("origin".utf8) && $0.value == Array(later.utf8) })
        // Past send_at: promoted (no maintenance due before a minute) and sent, once each.
        #expect(h.run(limitMillis: 1000) { h.shard.isDrained })
        #expect(h.lastSendWallMillis >= at)
        #expect(h.sends.count == 4)
        let accepted = try h.rows().filter { $0.outcome == "ACCEPTED" }.reduce(0) { $0 + max(1, $1.count) }
        #expect(accepted == 4)
    }
}
