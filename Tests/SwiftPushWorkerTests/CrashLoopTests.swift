import PushCore
@testable import SwiftPushWorker
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

    @Test("An entry that kills its worker while it is in flight is dead-lettered; the ones sent beside it are accepted")
    func poisonEntry() throws {
        let shard = InMemoryShard()
        for i in 0..<10 { shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        shard.add(Entries.single("poison", token: Entries.token(99)))
        for i in 10..<20 { shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        var lives = 0
        while lives < 20 && !shard.isDrained {
            lives += 1
            let life = MachineHarness(shard: shard)
            // The poison one kills its worker while in flight: nothing sent with it is answered.
            life.answer = { [unowned life] item in
                life.inFlight.values.contains { $0.entry.entry.id == "poison" } ? nil
                    : NoteResult(tag: item.tag, kind: .accepted, status: 200, reason: .none)
            }
            life.run(limitMillis: 10_000) { shard.isDrained || life.inFlight.values.contains { $0.entry.entry.id == "poison" } }
        }
        #expect(shard.isDrained, "after \(lives) lives")
        var rows: [OutcomeRow] = []
        for o in shard.outcomes { rows += try OutcomeRow.rows(streamID: o.id, fields: o.fields) }
        let dead = rows.filter { $0.reason == "DeadLetter" }
        #expect(dead.map(\.id) == ["poison"], "\(dead)")
        #expect(rows.filter { $0.outcome == "ACCEPTED" }.count == 20)
    }
}
