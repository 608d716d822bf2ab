import PushCore
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

/// Issue 31, item 2 on the pure machine: a 410 that arrived is recorded at once (a worker that
/// dies soon after must not lose it), and the records of a re-delivered entry say that an
/// earlier life may have written its request (`maybe_delivered`) and count those lives'
/// deliveries in `attempts`.
@Suite("Truthful outcomes")
struct TruthfulOutcomeTests {
    @Test("A 410 in a multicast still partly in flight is recorded in the unregistered stream at once, not at the next checkpoint")
    func unregisteredAtOnce() throws {
        let h = MachineHarness(settings: MachineHarness.settings { $0.checkpointMillis = 250 })
        let gone = Entries.token(3)
        h.answer = { item in
            let token = String(decoding: item.entry.entry.storage[item.note.token], as: UTF8.self)
            return token == gone ? NoteResult(tag: item.tag, kind: .rejected, status: 410, reason: .unregistered, timestampMs: 5) : nil
        }
        h.shard.add(Entries.multicast("m", tokens: (0..<10).map(Entries.token)))
        // 1 ms steps, 50 ms at most: far less than checkpoint_ms and the settle's coalescing.
        #expect(h.run(stepMillis: 1, limitMillis: 50) { h.shard.unregistered.count == 1 })
        #expect(h.inFlight.count == 9)
    }

    @Test("A single entry's 410 is settled without waiting for company")
    func singleUnregisteredAtOnce() throws {
        let h = MachineHarness(settings: MachineHarness.settings { $0.coalesceMillis = 1000 })
        // The others are never answered: the settle has no company to wait for.
        h.answer = { item in
            item.entry.entry.id == "gone" ? NoteResult(tag: item.tag, kind: .rejected, status: 410, reason: .unregistered, timestampMs: 5) : nil
        }
        h.shard.add(Entries.single("gone"))
        for i in 0..<20 { h.shard.add(Entries.single("s-\(i)", token: Entries.token(i + 10))) }
        #expect(h.run(stepMillis: 1, limitMillis: 100) { h.shard.unregistered.count == 1 })
    }

    @Test("Records of a re-delivered entry carry maybe_delivered and count the earlier lives' deliveries in attempts")
    func redeliveredRecords() throws {
        let shard = InMemoryShard()
        shard.add(Entries.single("a"))
        shard.add(Entries.multicast("m", tokens: [Entries.token(1), Entries.token(2)]))
        // A life that sent both and died before any answer.
        let first = MachineHarness(shard: shard)
        first.answer = { _ in nil }
        #expect(first.run { first.inFlight.count == 3 })
        // The next life: APNs refuses them (400 BadDeviceToken), each after one request.
        let second = MachineHarness(shard: shard)
        second.answer = { NoteResult(tag: $0.tag, kind: .rejected, status: 400, reason: .badDeviceToken) }
        #expect(second.run { shard.isDrained })
        let rows = try second.rows()
        #expect(rows.count == 2 || rows.count == 3)
        for r in rows {
            #expect(r.maybeDelivered, "\(r)")
            #expect(r.attempts == 2, "\(r)")
        }
    }

    @Test("A dead letter says the notification may have been delivered, and how often it was sent over its lives")
    func deadLetterRecord() throws {
        let shard = InMemoryShard()
        shard.add(Entries.single("a"))
        var settings = MachineHarness.settings()
        settings.maxDeliveries = 2
        // Each life killed once its written delivery is recorded (only those count).
        for _ in 0..<3 {
            let life = MachineHarness(shard: shard, settings: settings)
            life.answer = { _ in nil }
            life.runUntilWriteRecorded()
        }
        let last = MachineHarness(shard: shard, settings: settings)
        #expect(last.run { shard.isDrained })
        let rows = try last.rows()
        #expect(rows.count == 1 && rows[0].reason == "DeadLetter")
        #expect(rows[0].maybeDelivered && rows[0].attempts == 3, "\(rows)")
    }
}
