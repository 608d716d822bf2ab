import PushCore
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

/// Issue 31, items 1 and 3 on the pure machine: a restarted worker takes its own pending
/// entries back in bulk, and a stop finishes what it took back or hands it back so that any
/// worker takes it at once (Tests/worker/run.sh checks both against Redis and the mock).
@Suite("Take-back and stop")
struct TakeBackTests {
    /// A first life that read `count` single entries and was killed with all of them in flight.
    static func killedLife(_ shard: InMemoryShard, count: Int, settings: MachineSettings) -> MachineHarness {
        for i in 0..<count { shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        let first = MachineHarness(shard: shard, settings: settings)
        first.answer = { _ in nil }
        #expect(first.run { first.inFlight.count == count })
        return first
    }

    @Test("5,000 own pending entries come back in one listing, one take-back and one claim")
    func bulkTakeBack() throws {
        let shard = InMemoryShard()
        let settings = MachineHarness.settings { $0.maxInFlight = 5000; $0.batch = 500 }
        _ = Self.killedLife(shard, count: 5000, settings: settings)
        let second = MachineHarness(shard: shard, settings: settings)
        second.answer = { _ in nil }
        #expect(second.run { second.machine.heldEntryCount == 5000 })
        let kinds = second.requests.map(InMemoryWorkQueue.kind)
        let trips = kinds.filter { ["ownPending", "takeOwn", "claim"].contains($0) }
        #expect(trips == ["ownPending", "takeOwn", "claim"], "\(trips)")
        #expect(second.logs.contains { $0.message == "re-read own pending entries" && $0.fields["taken"] == "5000" })
        // Nothing counted by the take-back: only the first paced group (one entry), being sent.
        #expect(shard.pending.values.filter { $0.deliveries > 1 }.count <= 1)
    }

    @Test("A take-back stops at the room there is and goes on from where it stopped")
    func budgetedTakeBack() throws {
        let shard = InMemoryShard()
        let big = MachineHarness.settings { $0.maxInFlight = 3000; $0.batch = 100 }
        for i in 0..<6 { shard.add(bytes: Entries.packedMulticast("m-\(i)", tokens: (0..<500).map { Entries.token(i * 1000 + $0) })) }
        let first = MachineHarness(shard: shard, settings: big)
        first.answer = { _ in nil }
        #expect(first.run { first.inFlight.count == 3000 })
        let small = MachineHarness.settings { $0.maxInFlight = 1200; $0.batch = 100 }
        let second = MachineHarness(shard: shard, settings: small)
        second.answer = { _ in nil }
        #expect(second.run(limitMillis: 2000) { second.machine.heldEntryCount == 2 })
        // Two entries fit; the rest waits for room, pending, not taken.
        second.run(limitMillis: 200) { false }
        #expect(second.machine.heldEntryCount == 2)
        second.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        #expect(second.run { shard.isDrained })
        let by = try second.outcomesByNotification()
        #expect(by.count == 3000 && by.values.allSatisfy { $0 == 1 })
    }

    @Test("SIGTERM right after a take-back: what was taken back is sent and finished within drain_ms, exit clean")
    func stopAfterTakeBack() throws {
        let shard = InMemoryShard()
        let settings = MachineHarness.settings { $0.maxInFlight = 2000; $0.drainMillis = 5000 }
        _ = Self.killedLife(shard, count: 1000, settings: settings)
        let second = MachineHarness(shard: shard, settings: settings)
        second.answer = { _ in nil }
        // Taken back: paced re-delivery has sent one entry, 999 wait their turn.
        #expect(second.run { second.machine.heldEntryCount == 1000 && !second.inFlight.isEmpty })
        #expect(second.inFlight.count < 1000)
        second.handle(.stop)
        second.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        #expect(second.run(limitMillis: 5000) { second.stopped != nil })
        #expect(second.stopped == 0 && second.machine.counters.handedBack == 0)
        #expect(shard.pendingCount == 0 && shard.length == 0)
        let by = try second.outcomesByNotification()
        #expect(by.count == 1000 && by.values.allSatisfy { $0 == 1 })
    }

    @Test("SIGTERM during a take-back (before the listing): the stop takes back and finishes it too")
    func stopDuringTakeBack() throws {
        let shard = InMemoryShard()
        let settings = MachineHarness.settings { $0.maxInFlight = 2000; $0.drainMillis = 5000 }
        _ = Self.killedLife(shard, count: 500, settings: settings)
        let second = MachineHarness(shard: shard, settings: settings)
        second.handle(.stop)
        #expect(second.run(limitMillis: 5000) { second.stopped != nil })
        #expect(second.stopped == 0 && second.machine.counters.handedBack == 0 && shard.pendingCount == 0)
        #expect(try second.outcomesByNotification().count == 500)
    }

    @Test("What a stop cannot finish is handed back: its delivery count unchanged, and another worker takes it at once, not after min_idle_ms")
    func handBack() throws {
        let shard = InMemoryShard()
        let settings = MachineHarness.settings { $0.maxInFlight = 2000; $0.drainMillis = 300 }
        _ = Self.killedLife(shard, count: 200, settings: settings)
        let second = MachineHarness(shard: shard, settings: settings)
        second.answer = { _ in nil }
        #expect(second.run { second.machine.heldEntryCount == 200 && !second.inFlight.isEmpty })
        second.handle(.stop)
        #expect(second.run(limitMillis: 5000) { second.stopped != nil })
        let counts = shard.pending.mapValues(\.deliveries)
        #expect(second.machine.counters.handedBack == 200 && shard.pendingCount == 200)
        #expect(second.logs.contains { $0.message.hasPrefix("handed back") && $0.fields["handed_back"] == "200" })
        // Each was sent once more in the stop (counted: 2), and the hand-back counted nothing.
        #expect(counts.count == 200 && counts.values.allSatisfy { $0 == 2 })
        // Another consumer reclaims them in its first rounds, within two seconds of its time,
        // although min_idle_ms is a minute.
        let other = MachineHarness(shard: shard, consumer: "w2", settings: MachineHarness.settings { $0.reclaimIntervalMillis = 100 },
                                   minIdleMillis: 60_000)
        other.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        #expect(other.run(limitMillis: 2000) { shard.isDrained })
        #expect(try other.outcomesByNotification().count == 200)
    }
}
