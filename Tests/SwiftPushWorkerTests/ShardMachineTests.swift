import PushCore
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import Testing

/// The worker's rules, one at a time, on the pure machine with the in-memory queue and a made-up
/// clock (Tests/worker/run.sh checks the same guarantees end to end against Redis and the mock).
@Suite("ShardMachine", .timeLimit(.minutes(1)))
struct ShardMachineTests {
    @Test("Single and multicast entries: every notification gets exactly one outcome and the stream ends empty")
    func exactlyOnce() throws {
        let h = MachineHarness()
        for i in 0..<50 { h.shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        let m = h.shard.add(Entries.multicast("m-1", tokens: (0..<300).map(Entries.token)))
        #expect(h.run { h.shard.isDrained && h.shard.length == 0 })
        let by = try h.outcomesByNotification()
        #expect(by.count == 350 && by.values.allSatisfy { $0 == 1 })
        #expect(Set(h.sends).count == h.sends.count && h.sends.count == 350)
        let multicast = try h.rows().filter { $0.entry == m }
        #expect(multicast.count == 1 && multicast[0].outcome == "ACCEPTED" && multicast[0].count == 300)
    }

    @Test("An id used by an earlier entry is REJECTED DuplicateId and not sent, for a multicast entry as a whole")
    func duplicateIDs() throws {
        let h = MachineHarness()
        h.shard.add(Entries.single("a"))
        let dupSingle = h.shard.add(Entries.single("a"))
        h.shard.add(Entries.multicast("m", tokens: [Entries.token(1), Entries.token(2)]))
        let dupMulticast = h.shard.add(Entries.multicast("m", tokens: [Entries.token(3)]))
        #expect(h.run { h.shard.isDrained })
        let rows = try h.rows()
        #expect(rows.filter { $0.entry == dupSingle }.map(\.reason) == ["DuplicateId"])
        #expect(rows.filter { $0.entry == dupMulticast }.map(\.reason) == ["DuplicateId"])
        #expect(h.sends.count == 3)
    }

    @Test("A multicast entry's 410s go to the unregistered stream one per token; the rest are counted accepted")
    func unregisteredTokens() throws {
        let h = MachineHarness()
        let gone: Set<String> = [Entries.token(3), Entries.token(7)]
        h.answer = { item in
            let token = String(decoding: item.entry.entry.storage[item.note.token], as: UTF8.self)
            return gone.contains(token) ? NoteResult(tag: item.tag, kind: .rejected, status: 410, reason: .unregistered, timestampMs: 5)
                                        : NoteResult(tag: item.tag, kind: .accepted, status: 200, reason: .none)
        }
        h.shard.add(Entries.multicast("m", tokens: (0..<10).map(Entries.token)))
        #expect(h.run { h.shard.isDrained })
        let rows = try h.rows()
        #expect(rows.filter { $0.outcome == "ACCEPTED" }.map(\.count) == [8])
        #expect(Set(rows.filter { $0.reason == "Unregistered" }.map(\.token)) == gone)
        #expect(h.shard.unregistered.count == 2)
    }

    @Test("A worker killed mid-multicast: its next life resends only what had no checkpointed outcome")
    func checkpointBoundsResends() throws {
        let shard = InMemoryShard()
        let first = MachineHarness(shard: shard)
        first.shard.add(Entries.multicast("m", tokens: (0..<500).map(Entries.token)))
        // APNs answers the first 300 tokens only; the rest stay in flight.
        first.answer = { item in
            let i = Int(item.tag & 1023)
            return i < 300 ? NoteResult(tag: item.tag, kind: .accepted, status: 200, reason: .none) : nil
        }
        // Past checkpoint_ms the 300 outcomes are recorded while the entry is still held.
        #expect(first.run { first.machine.counters.checkpoints > 0 && first.machine.unsettledCount == 0 && shard.progress.count == 1 })
        #expect(first.inFlight.count == 200)
        // SIGKILL: the machine is gone. Its next life (same consumer) re-reads the entry.
        let second = MachineHarness(shard: shard)
        #expect(second.run { shard.isDrained })
        #expect(second.sends.count == 200)
        let by = try second.outcomesByNotification()
        #expect(by.count == 500 && by.values.allSatisfy { $0 == 1 })
    }

    @Test("A failover that takes back a checkpoint: the final settle falls short, the entry is taken back and only what lost its outcome is sent again; every token ends with one outcome")
    func lostCheckpoint() throws {
        let h = MachineHarness()
        h.shard.add(Entries.multicast("m", tokens: (0..<500).map(Entries.token)))
        var answering = 300
        h.answer = { item in Int(item.tag & 1023) < answering ? NoteResult(tag: item.tag, kind: .accepted, status: 200, reason: .none) : nil }
        #expect(h.run { h.machine.counters.checkpoints > 0 && h.machine.unsettledCount == 0 && h.shard.progress.count == 1 })
        // The master dies; its replica, promoted, never had the checkpoint: no progress, no records.
        let outcomesBefore = h.shard.outcomes.count
        h.shard.progress.removeAll()
        h.shard.outcomes.removeAll()
        #expect(outcomesBefore > 0)
        answering = 500
        #expect(h.run { h.shard.isDrained })
        #expect(h.sends.count == 500 + 300)
        #expect(h.logs.contains { $0.message.hasPrefix("entries settled short of their count") })
        let by = try h.outcomesByNotification()
        #expect(by.count == 500 && by.values.allSatisfy { $0 == 1 })
    }

    @Test("A worker whose max_in_flight is below the largest entry size still takes back its own pending entries at start, in few round trips")
    func smallBudgetReread() throws {
        let shard = InMemoryShard()
        let settings = MachineHarness.settings { $0.maxInFlight = 500 }
        let first = MachineHarness(shard: shard, settings: settings)
        for i in 0..<400 { shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        first.answer = { _ in nil }
        #expect(first.run { first.inFlight.count == 400 })
        let second = MachineHarness(shard: shard, settings: settings)
        #expect(second.run { shard.isDrained })
        #expect(second.sends.count == 400)
        #expect((second.queue.performed["takeOwn"] ?? 0) <= 12)
    }

    @Test("An entry delivered max_deliveries times, a request written each time, is dead-lettered, each notification FAILED DeadLetter, not sent")
    func deadLetters() throws {
        let shard = InMemoryShard()
        shard.add(Entries.multicast("m", tokens: [Entries.token(1), Entries.token(2)]))
        var settings = MachineHarness.settings()
        settings.maxDeliveries = 2
        // Three lives, each killed (dropped) once the entry's written delivery is recorded (the
        // third dead-letters it at intake).
        for _ in 0..<3 {
            let life = MachineHarness(shard: shard, settings: settings)
            life.answer = { _ in nil }
            life.runUntilWriteRecorded()
        }
        let last = MachineHarness(shard: shard, settings: settings)
        #expect(last.run { shard.isDrained })
        #expect(last.sends.isEmpty)
        let rows = try last.rows()
        #expect(rows.count == 1 && rows[0].reason == "DeadLetter" && rows[0].count == 2)
    }

    @Test("A 429 that outlives the client's retries parks the notification in the delayed set; it comes back when due and is accepted once",
          arguments: [false, true])
    func delayedRetry(packed: Bool) throws {
        var settings = MachineHarness.settings()
        settings.policy.delayedRetryMillis = 1000
        settings.reclaimIntervalMillis = 200
        let h = MachineHarness(settings: settings)
        var throttled = true
        h.answer = { item in
            throttled ? NoteResult(tag: item.tag, kind: .rejected, status: 429, reason: .tooManyRequests)
                      : NoteResult(tag: item.tag, kind: .accepted, status: 200, reason: .none)
        }
        // Packed tokens (tokens_bin) go to the delayed set, and come back, as text.
        if packed {
            h.shard.add(bytes: Entries.packedMulticast("m", tokens: [Entries.token(1), Entries.token(2)]))
        } else {
            h.shard.add(Entries.multicast("m", tokens: [Entries.token(1), Entries.token(2)]))
        }
        #expect(h.run { h.shard.delayedCount == 1 && h.shard.length == 0 })
        throttled = false
        #expect(h.run { h.shard.isDrained && h.shard.length == 0 && h.shard.delayedCount == 0 })
        let rows = try h.rows()
        #expect(rows.filter { $0.outcome == "ACCEPTED" }.map(\.count) == [2])
        #expect(h.machine.counters.delayed == 2 && h.machine.counters.promoted == 1)
        #expect(Set(h.sends).count == 2)
    }

    @Test("Past not_after a notification is FAILED Expired and not sent")
    func notAfter() throws {
        let h = MachineHarness()
        let past = String(h.now.wallMillis / 1000 - 1)
        h.shard.add(Entries.single("old", [("not_after", past)]))
        h.shard.add(Entries.multicast("m", tokens: [Entries.token(1)], [("not_after", past)]))
        #expect(h.run { h.shard.isDrained })
        #expect(h.sends.isEmpty)
        #expect(try h.rows().map(\.reason) == ["Expired", "Expired"])
    }

    @Test("A stop reads nothing more, lets what is in flight finish within drain_ms, settles it and stops with nothing left")
    func stopDrains() throws {
        let h = MachineHarness()
        for i in 0..<20 { h.shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        h.answer = { _ in nil }
        #expect(h.run { h.inFlight.count == 20 })
        h.handle(.stop)
        h.shard.add(Entries.single("late"))
        h.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        #expect(h.run { h.stopped != nil })
        #expect(h.stopped == 0 && h.sends.count == 20 && h.shard.length == 1 && h.shard.pendingCount == 0)
    }

    @Test("A stop whose drain time passes closes the clients; what was cancelled stays pending, never acknowledged")
    func stopPastDrain() throws {
        let h = MachineHarness(settings: MachineHarness.settings { $0.drainMillis = 100 })
        h.shard.add(Entries.multicast("m", tokens: (0..<4).map(Entries.token)))
        h.answer = { _ in nil }
        #expect(h.run { h.inFlight.count == 4 })
        h.handle(.stop)
        #expect(h.run { h.stopped != nil })
        #expect(h.clientsClosed && h.stopped == 1 && h.shard.pendingCount == 1 && h.shard.outcomes.isEmpty)
    }

    @Test("A settle whose reply is lost with the connection is sent again after the reconnect and records nothing twice")
    func lostSettleReply() throws {
        let h = MachineHarness()
        for i in 0..<10 { h.shard.add(Entries.single("s-\(i)", token: Entries.token(i))) }
        h.answer = { _ in nil }
        #expect(h.run { h.inFlight.count == 10 })
        h.queue.faults = [.lostAfter]
        h.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        #expect(h.run { h.shard.isDrained && h.machine.heldEntryCount == 0 })
        let by = try h.outcomesByNotification()
        #expect(by.count == 10 && by.values.allSatisfy { $0 == 1 })
        #expect(h.machine.counters.redisReconnects == 1)
    }

    @Test("Entries finishing one by one: reads wait for a quarter of max_in_flight, settles for company (within coalesceMillis while behind the stream, behind the settle in flight once caught up); every notification still gets exactly one outcome")
    func coalescedRequests() throws {
        // 40 entries of 100 tokens, max_in_flight 2,000 (20 entries held); APNs answers one
        // entry's tokens per millisecond, so that entries finish one at a time. A settle takes
        // 3 ms to be answered: once the stream is read to its end, what finishes meanwhile
        // gathers behind it.
        let h = MachineHarness()
        h.settleMillis = 3
        for k in 0..<40 { h.shard.add(Entries.multicast("m-\(k)", tokens: (0..<100).map { Entries.token(k * 100 + $0) })) }
        h.answer = { _ in nil }
        var steps = 0
        while !(h.shard.isDrained && h.shard.length == 0) && steps < 10_000 {
            h.handle(.tick)
            // The entry with the lowest serial still in flight gets all its answers.
            if let serial = h.inFlight.keys.map({ $0 >> 10 }).min() {
                let tags = h.inFlight.keys.filter { $0 >> 10 == serial }.sorted()
                h.handle(.results(tags.map { tag in
                    h.inFlight[tag] = nil
                    return NoteResult(tag: tag, kind: .accepted, status: 200, reason: .none)
                }))
            }
            h.advance(millis: 1)
            steps += 1
        }
        #expect(h.shard.isDrained && h.shard.length == 0)
        let by = try h.outcomesByNotification()
        #expect(by.count == 4000 && by.values.allSatisfy { $0 == 1 })
        let settles = h.requests.filter { if case .settle = $0 { return true }; return false }.count
        let reads = h.requests.filter { if case .read = $0 { return true }; return false }.count
        // Without coalescing: 40 settles (one per entry finished) and 24 reads (coalesceMillis 0).
        // With it, a read waits for a quarter of the budget (5 entries); a settle, while reads
        // come back full (the first 20 entries), for 5 entries too (4 settles), and once the
        // stream is read to its end, for the settle in flight (the last 20, finishing one per
        // ms, 3 to a settle: 7).
        #expect(settles <= 12 && reads <= 10, "settles \(settles), reads \(reads)")
    }

    @Test("Redis unreachable: connects are retried with back-off growing to 5 s, never faster")
    func backoff() {
        let h = MachineHarness()
        var attempts: [UInt64] = []
        // Every connect fails: the queue is closed and faults make open fail (not supported), so
        // count the machine's connect actions by feeding connectFailed ourselves.
        var t = h.now
        var actions = h.machine.handle(.tick, at: t)
        for _ in 0..<12 {
            guard actions.contains(where: { if case .connect = $0 { return true }; return false }) else { break }
            attempts.append(t.nanos)
            actions = h.machine.handle(.connectFailed(QueueError("refused", connectionLost: true)), at: t)
            t = WorkerTime(nanos: h.machine.nextWakeNanos()!, wallMillis: t.wallMillis)
            actions = h.machine.handle(.tick, at: t)
        }
        let gaps = zip(attempts.dropFirst(), attempts).map { ($0 - $1) / 1_000_000 }
        #expect(gaps.count == 11 && gaps.allSatisfy { $0 >= 50 && $0 <= 5000 } && gaps.last! >= 2500)
    }

    @Test("A Redis answering LOADING (restarted, reading its data back) is a warning that says so; other failures stay errors")
    func loadingIsAWarning() {
        var m = ShardMachine(settings: MachineHarness.settings(), apps: ["demo": AppPolicy(topics: ["com.example.app"])])
        let t = WorkerTime(nanos: 1_000_000_000, wallMillis: 1_700_000_000_000)
        _ = m.handle(.tick, at: t)
        let loading = m.handle(.connectFailed(QueueError("Redis: LOADING Redis is loading the dataset in memory", connectionLost: true)), at: t)
        let refused = m.handle(.connectFailed(QueueError("connection refused", connectionLost: true)), at: t)
        func lines(_ actions: [WorkerAction]) -> [WorkerLogLine] { actions.compactMap { if case .log(let l) = $0 { return l }; return nil } }
        #expect(lines(loading).map(\.level) == [.warning] && lines(loading)[0].message.hasPrefix("Redis is loading its data set"))
        #expect(lines(refused).map(\.level) == [.error] && lines(refused)[0].message == "cannot reach Redis; retrying")
    }
}
