import PushCore
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

/// A worker killed again and again (issue 31): re-delivered entries must not starve behind one
/// another, so a crash loop that is not the entries' fault dead-letters none of them, while an
/// entry that kills its worker still ends as the one `DeadLetter`. Each life is a machine
/// dropped (SIGKILL) at a chosen point; the next one, same consumer, takes back what it held.
@Suite("Crash loops")
struct CrashLoopTests {
    @Test("Lives that die before any answer (answers slower than the kills): the counts spread, no dead letter")
    func fasterThanAnswers() throws {
        let shard = InMemoryShard()
        for i in 0..<20 { shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        // 30 lives, each killed once a request of its is out, before APNs answers.
        for _ in 0..<30 {
            let life = MachineHarness(shard: shard)
            life.answer = { _ in nil }
            #expect(life.run(limitMillis: 5000) { !life.inFlight.isEmpty })
        }
        let last = MachineHarness(shard: shard)
        #expect(last.run { shard.isDrained })
        let rows = try last.rows()
        #expect(rows.filter { $0.reason == "DeadLetter" }.isEmpty, "\(rows.filter { $0.reason == "DeadLetter" })")
        #expect(rows.filter { $0.outcome == "ACCEPTED" }.count == 20)
        // Most-delivered first sent the same entry in every life: 1 + 29 deliveries.
        #expect(rows.map(\.deliveries).max()! <= 4, "\(rows.map(\.deliveries))")
    }

    @Test("An entry that kills its worker once its request is written (and recorded) is dead-lettered after max_deliveries + 1 (its first, a read, is not recorded); the ones sent beside it are accepted")
    func poisonEntry() throws {
        let (dead, accepted, lives) = try poisonLoop(maxLives: 20, recorded: true)
        #expect(dead.map(\.id) == ["poison"], "\(dead)")
        #expect(dead.first?.deliveries == 6, "\(dead)")
        #expect(accepted == 20, "after \(lives) lives")
    }

    @Test("An entry that kills its worker before its write is recorded still ends dead-lettered, after 3 x max_deliveries deliveries")
    func poisonBeforeRecord() throws {
        let (dead, accepted, lives) = try poisonLoop(maxLives: 60, recorded: false)
        #expect(dead.map(\.id) == ["poison"], "\(dead)")
        #expect(dead.first?.deliveries == 15, "\(dead)")
        #expect(accepted == 20, "after \(lives) lives")
    }

    /// 20 healthy entries and a poison one that kills every worker it is sent by, once its
    /// written delivery is recorded in the queue (`recorded`) or as soon as it is handed to the
    /// client (before any record can go): lives until the shard is drained. Returns the dead
    /// letters, the notifications accepted and the lives it took.
    func poisonLoop(maxLives: Int, recorded: Bool) throws -> (dead: [OutcomeRow], accepted: Int, lives: Int) {
        let shard = InMemoryShard()
        for i in 0..<10 { shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        let poison = shard.add(Entries.single("poison", token: Entries.token(99)))
        for i in 10..<20 { shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        var lives = 0
        while lives < maxLives && !shard.isDrained {
            lives += 1
            let life = MachineHarness(shard: shard)
            let before = shard.written[poison] ?? 0
            // The poison one kills its worker while in flight: nothing sent with it is answered.
            life.answer = { [unowned life] item in
                life.inFlight.values.contains { $0.entry.entry.id == "poison" } ? nil
                    : NoteResult(tag: item.tag, kind: .accepted, status: 200, reason: .none)
            }
            life.run(limitMillis: 10_000) {
                shard.isDrained || life.inFlight.values.contains { $0.entry.entry.id == "poison" } && (!recorded || shard.written[poison] ?? 0 > before)
            }
        }
        #expect(shard.isDrained, "after \(lives) lives")
        #expect(shard.written.isEmpty, "records of written deliveries left: \(shard.written)")
        var rows: [OutcomeRow] = []
        for o in shard.outcomes { rows += try OutcomeRow.rows(streamID: o.id, fields: o.fields) }
        return (rows.filter { $0.reason == "DeadLetter" }, rows.filter { $0.outcome == "ACCEPTED" }.count, lives)
    }

    @Test("Lives killed before any request is written (APNs cannot be reached) bring no entry nearer a dead letter: 8 lives of 3 s, max_deliveries 5")
    func neverWritten() throws {
        let shard = InMemoryShard()
        for i in 0..<3 { shard.add(Entries.single("u-\(i)", token: Entries.token(i))) }
        for _ in 0..<8 {
            let life = MachineHarness(shard: shard)
            life.writes = false
            life.answer = { _ in nil }
            // Every paced group goes within the 3 s (1, 1, then 2, a second apart): each life
            // counts a delivery of every entry.
            #expect(!life.run(limitMillis: 3000) { shard.isDrained })
        }
        // Past max_deliveries (5): the old rule dead-lettered them all.
        #expect(shard.highestDeliveryCount == 8)
        #expect(shard.written.isEmpty)
        let last = MachineHarness(shard: shard)
        #expect(last.run { shard.isDrained })
        let rows = try last.rows()
        #expect(rows.filter { $0.reason == "DeadLetter" }.isEmpty, "\(rows.filter { $0.reason == "DeadLetter" })")
        #expect(rows.filter { $0.outcome == "ACCEPTED" }.count == 3)
        #expect(try last.outcomesByNotification().values.allSatisfy { $0 == 1 })
        #expect(rows.allSatisfy { $0.deliveries == 9 }, "\(rows.map(\.deliveries))")
    }
}
