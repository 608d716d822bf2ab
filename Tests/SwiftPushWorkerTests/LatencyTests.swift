import Testing
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis

/// Issue 31, item 4: a notification that comes alone (an app server's one message) is read,
/// sent and recorded without waiting for company. The machine's clock is the harness's and
/// does not move in these tests: what they check is that nothing waits for time to pass (the
/// 10 ms pause after a short read, the settle's coalescing window), not how long anything takes
/// (timings are `make bench-worker`'s latency rows).
@Suite("Latency: lone notifications do not wait for company")
struct LatencyTests {
    static func accept(_ item: SendItem) -> NoteResult? { NoteResult(tag: item.tag, kind: .accepted, status: 200, reason: .none) }

    /// Reads wait in Redis (500 ms) and the coalescing window is a second: a test that passes
    /// only because time moved would need a second of it.
    static func harness() -> MachineHarness {
        MachineHarness(settings: MachineHarness.settings {
            $0.blockMillis = 500
            $0.coalesceMillis = 1000
        })
    }

    /// The settles the machine sent, each as the entries it carried.
    static func settles(_ h: MachineHarness) -> [[String]] {
        h.requests.compactMap { if case .settle(let s) = $0 { return s.map(\.entryID) }; return nil }
    }

    @Test("An entry added while another is in flight is read and sent at once: the read after a short one waits in Redis, not 10 ms in the worker")
    func loneEntryReadAtOnce() {
        let h = Self.harness()
        h.answer = { _ in nil }
        h.handle(.tick)
        #expect(h.sends.isEmpty)
        h.shard.add(Entries.single("a"))
        h.handle(.tick)
        #expect(h.sends.count == 1)
        // "a" is in flight (no answer yet): the worker is not idle, and its last read came back
        // short. "b" comes alone, with no time passing.
        h.shard.add(Entries.single("b", token: Entries.token(1)))
        h.handle(.tick)
        #expect(h.sends.count == 2, "the entry added after a short read waited for a pause")
        h.shard.add(Entries.single("c", token: Entries.token(2)))
        h.handle(.tick)
        #expect(h.sends.count == 3)
        #expect(h.machine.inFlightCount == 3)
    }

    @Test("A lone outcome is settled at once; outcomes decided while a settle is in flight go together in the next, the moment it is answered")
    func loneOutcomeSettledAtOnce() throws {
        let h = Self.harness()
        h.settleMillis = 2
        h.answer = { _ in nil }
        for (k, id) in ["a", "b", "c"].enumerated() { h.shard.add(Entries.single(id, token: Entries.token(k))) }
        h.handle(.tick)
        #expect(h.machine.inFlightCount == 3)
        let tags = h.inFlight.keys.sorted()
        func answer(_ tag: UInt64) {
            h.inFlight[tag] = nil
            h.handle(.results([NoteResult(tag: tag, kind: .accepted, status: 200, reason: .none)]))
        }
        // "a" answered: its settle goes now, with no company and no time passing.
        answer(tags[0])
        #expect(Self.settles(h).count == 1, "a lone outcome waited for company")
        // "b" and "c" answered while that settle is in flight: they wait for it.
        answer(tags[1])
        answer(tags[2])
        #expect(Self.settles(h).count == 1)
        // Its reply (2 ms later) sends the next at once, carrying both.
        h.advance(millis: 2)
        h.handle(.tick)
        #expect(Self.settles(h).map(\.count) == [1, 2])
        h.advance(millis: 2)
        h.handle(.tick)
        #expect(h.shard.outcomes.count == 3 && h.machine.heldEntryCount == 0)
    }

    @Test("Behind its stream (reads come back full), a worker's settles still wait for company: a quarter of max_in_flight, or coalesceMillis")
    func behindGathers() throws {
        // 100 entries, max_in_flight 40: the read takes 40 (full: the stream has more).
        let h = MachineHarness(settings: MachineHarness.settings {
            $0.maxInFlight = 40
            $0.blockMillis = 500
            $0.coalesceMillis = 1000
        })
        for k in 0..<100 { h.shard.add(Entries.single("s-\(k)", token: Entries.token(k))) }
        h.answer = { _ in nil }
        h.handle(.tick)
        #expect(h.machine.behind && h.machine.inFlightCount == 40)
        // Answers one at a time, no time passing: every request here is answered at once, so
        // a settle that went without company would carry one entry.
        for tag in h.inFlight.keys.sorted() {
            h.inFlight[tag] = nil
            h.handle(.results([NoteResult(tag: tag, kind: .accepted, status: 200, reason: .none)]))
        }
        #expect(Self.settles(h).map(\.count) == [10, 10, 10, 10])
        h.answer = { Self.accept($0) }
        #expect(h.run(stepMillis: 10, limitMillis: 60_000) { h.shard.isDrained })
        #expect(try h.outcomesByNotification().count == 100)
    }
}
