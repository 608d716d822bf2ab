import Testing
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis

/// The fast lane (issue 32, item 1; `FastLane`, ShardMachine+Lanes.swift): every read names it
/// first, in the same call as the bulk lane, and with a reserve it has a read of its own waiting
/// on its own connection; the bulk lane may hold at most max_in_flight less `fast_reserve`, so
/// fast entries are taken in while a bulk backlog fills the rest; and a fast entry goes through
/// the protocol exactly as a bulk one (claim, settle, take-back, reclaim).
@Suite("Fast lane: read first, a reserve of max_in_flight, the same guarantees")
struct FastLaneTests {
    /// max_in_flight 2000 of which 500 are kept for the fast lane; nothing answered.
    static func harness(_ shard: InMemoryShard = InMemoryShard(), consumer: String = "w1", minIdleMillis: Int = 60_000,
                        reserve: Int = 500, blockMillis: Int = 0) -> MachineHarness {
        let h = MachineHarness(shard: shard, consumer: consumer, settings: MachineHarness.settings {
            $0.maxInFlight = 2000
            $0.fastReserve = reserve
            $0.blockMillis = blockMillis
        }, minIdleMillis: minIdleMillis)
        h.answer = { _ in nil }
        return h
    }

    static func tokens(_ n: Int, from first: Int = 0) -> [String] { (first..<(first + n)).map(Entries.token) }

    @Test("The main read names both lanes, the fast one first: fast entries added after a bulk backlog are claimed and sent before it")
    func fastFirstInOneRead() {
        // No reserve: no read of the fast lane's own, so the main read is the only one.
        let h = Self.harness(reserve: 0)
        // A first entry, so that the machine knows entries are singles (until a read, it counts
        // an entry as 1,000 notifications and asks for one).
        h.shard.add(Entries.single("warm", token: Entries.token(99)))
        h.handle(.tick)
        #expect(h.sentEntries.count == 1)
        let before = h.requests.count
        for k in 0..<10 { h.shard.add(Entries.single("b\(k)", token: Entries.token(k))) }
        let fast = (0..<2).map { h.shard.add(Entries.single("f\($0)", token: Entries.token(100 + $0)), fast: true) }
        // Past the pause after the warm-up's short read (reads do not wait in Redis here).
        h.advance(millis: 20)
        h.handle(.tick)
        #expect(h.sentEntries.count == 13)
        #expect(Array(h.sentEntries.dropFirst().prefix(2)) == fast, "the fast lane's entries were not sent first")
        let after = h.requests.dropFirst(before)
        let reads = after.filter { if case .read = $0 { return true }; return false }.count
        let fastReads = after.filter { if case .readFast = $0 { return true }; return false }.count
        #expect(reads == 1 && fastReads == 0, "a read of both lanes should be one request")
    }

    @Test("With a reserve, the fast lane's own read waits in Redis on its own connection: an entry added while the bulk lane's share is full is read, claimed there and sent at once")
    func ownReadTakesAnEntryAtOnce() {
        let h = Self.harness(blockMillis: 500)
        for k in 0..<10 { h.shard.add(Entries.multicast("camp#\(k)", tokens: Self.tokens(500, from: k * 500))) }
        h.run(limitMillis: 200) { false }
        #expect(h.machine.heldNotes == 1500)
        // The fast lane's read is in flight on its connection, waiting; what it reserved is
        // not the bulk lane's.
        #expect(h.machine.fastReservedNotes > 0 && h.machine.fastReservedNotes <= 500)
        #expect(h.machine.bulkRoom <= 0)
        let before = h.requests.count
        let single = h.shard.add(Entries.single("otp", token: Entries.token(20_000)), fast: true)
        // No time passes: the waiting read has it, then its claim, on the fast connection.
        h.handle(.tick)
        #expect(h.sentEntries.last == single, "the fast entry was not sent at once")
        let after = Array(zip(h.requests, h.requestLanes).dropFirst(before))
        #expect(after.contains { if case .claim = $0.0 { return $0.1 == .fast }; return false }, "the fast entry's claim was not sent on the fast connection")
        #expect(!after.contains { if case .readFast = $0.0 { return $0.1 != .fast }; return false })
        // And the next read of the fast lane waits again.
        #expect(h.machine.fastReservedNotes > 0)
    }

    @Test("fast_reserve 0: no read of the fast lane's own; its entries come with the main read")
    func noReserveNoOwnRead() {
        let h = Self.harness(reserve: 0, blockMillis: 500)
        h.shard.add(Entries.single("f", token: Entries.token(1)), fast: true)
        h.run(limitMillis: 100) { false }
        #expect(!h.requests.contains { if case .readFast = $0 { return true }; return false })
        #expect(h.sentEntries.filter(FastLane.isFast).count == 1)
    }

    @Test("A lost connection gives back what the waiting fast-lane read reserved; the read waits again once connected")
    func lostConnectionEndsTheWait() {
        let h = Self.harness(blockMillis: 500)
        h.handle(.tick)
        #expect(h.machine.fastReservedNotes > 0)
        h.handle(.connectionLost(QueueError("gone", connectionLost: true)))
        #expect(h.machine.fastReservedNotes == 0 && h.machine.reservedNotes == 0)
        let reads = h.requests.filter { if case .readFast = $0 { return true }; return false }.count
        #expect(h.run(limitMillis: 2000) { h.requests.filter { if case .readFast = $0 { return true }; return false }.count > reads })
        #expect(h.machine.fastReservedNotes > 0)
    }

    @Test("The bulk lane holds at most max_in_flight less fast_reserve; fast entries are still taken in and sent, by the fast lane's own read")
    func bulkLeavesTheReserve() {
        let h = Self.harness()
        for k in 0..<10 { h.shard.add(Entries.multicast("camp#\(k)", tokens: Self.tokens(500, from: k * 500))) }
        h.run(limitMillis: 200) { false }
        #expect(h.machine.heldNotes == 1500, "bulk took \(h.machine.heldNotes) of 2000 with 500 reserved")
        #expect(h.machine.fastHeldNotes == 0)
        for k in 0..<3 { h.shard.add(Entries.multicast("tx\(k)", tokens: Self.tokens(100, from: 10_000 + k * 100)), fast: true) }
        h.run(limitMillis: 100) { false }
        #expect(h.machine.fastHeldNotes == 300)
        #expect(h.machine.heldNotes == 1800, "bulk must not take what is left of the reserve")
        #expect(h.requests.contains { if case .readFast = $0 { return true }; return false })
        #expect(h.sentEntries.filter { FastLane.isFast($0) }.count == 300)
    }

    @Test("Fast entries are recorded, acknowledged and deleted from their own stream; outcome records name them f<id>")
    func settledInTheirLane() throws {
        let h = Self.harness()
        h.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        let single = h.shard.add(Entries.single("f-single"), fast: true)
        let multi = h.shard.add(Entries.multicast("f-multi", tokens: Self.tokens(3, from: 1)), fast: true)
        h.shard.add(Entries.single("bulk", token: Entries.token(9)))
        #expect(h.run { h.shard.isDrained })
        #expect(h.shard.length == 0)
        let by = try h.outcomesByNotification()
        #expect(by["\(single)#0"] == 1)
        #expect((0..<3).allSatisfy { by["\(multi)#\($0)"] == 1 })
        #expect(by.count == 5 && by.values.allSatisfy { $0 == 1 })
    }

    @Test("Killed holding entries of both lanes: the next life takes both back, and each notification gets exactly one outcome")
    func takeBackBothLanes() throws {
        let shard = InMemoryShard()
        let first = Self.harness(shard)
        for k in 0..<5 { shard.add(Entries.single("b\(k)", token: Entries.token(k))) }
        for k in 0..<5 { shard.add(Entries.single("f\(k)", token: Entries.token(50 + k)), fast: true) }
        first.handle(.tick)
        #expect(shard.pendingCount(of: "w1") == 10)
        // SIGKILL: the machine is gone; the same consumer starts again.
        let second = Self.harness(shard)
        second.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        #expect(second.run { shard.isDrained })
        #expect(Set(second.sentEntries.filter(FastLane.isFast)).count == 5)
        let by = try second.outcomesByNotification()
        #expect(by.count == 10 && by.values.allSatisfy { $0 == 1 })
        #expect(shard.length == 0)
    }

    @Test("A dead worker's fast entries are reclaimed by another worker after min_idle, and settled once")
    func reclaimedByAnother() throws {
        let shard = InMemoryShard()
        let dead = Self.harness(shard, consumer: "dead")
        for k in 0..<3 { shard.add(Entries.single("f\(k)", token: Entries.token(k)), fast: true) }
        shard.add(Entries.single("b", token: Entries.token(7)))
        dead.handle(.tick)
        #expect(shard.pendingCount(of: "dead") == 4)
        let other = Self.harness(shard, consumer: "w2", minIdleMillis: 1000)
        other.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        #expect(other.run(limitMillis: 30_000) { shard.isDrained })
        let by = try other.outcomesByNotification()
        #expect(by.count == 4 && by.values.allSatisfy { $0 == 1 })
    }
}
