import Testing
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
@testable import SwiftPushWorkerRedis
import SwiftPushKeys

/// Campaign control (issue 32): the pure decision, the worker's copy of the controls, and the
/// machine on an in-memory shard: a cancelled campaign's notifications REJECTED `Cancelled`
/// and never sent, a paused one's entries moved aside and back.
@Suite struct CampaignControlTests {
    @Test("The decision follows the campaign's state and rate; no campaign, or no control, is sent")
    func decisions() {
        let controls = ["a": CampaignControl(state: .active), "p": CampaignControl(state: .paused),
                        "c": CampaignControl(state: .cancelled), "t": CampaignControl(state: .active, rate: 5)]
        #expect(CampaignDecision.of(campaign: "", controls) == .send)
        #expect(CampaignDecision.of(campaign: "other", controls) == .send)
        #expect(CampaignDecision.of(campaign: "a", controls) == .send)
        #expect(CampaignDecision.of(campaign: "t", controls) == .throttle)
        #expect(CampaignDecision.of(campaign: "p", controls) == .park)
        #expect(CampaignDecision.of(campaign: "c", controls) == .cancel)
    }

    @Test("A control hash reads leniently: an unknown state is active, a rate that is not positive is none")
    func parsing() {
        let c = CampaignControl(fields: [("state", "paused"), ("rate", "200"), ("updated_ms", "17")])
        #expect(c == CampaignControl(state: .paused, rate: 200, updatedMillis: 17))
        #expect(CampaignControl(fields: [("state", "frozen"), ("rate", "-3")]) == CampaignControl())
        #expect(CampaignControl(fields: [("rate", "abc")]).rate == nil)
    }

    @Test("The worker logs a control once, when it changes")
    func logsChanges() {
        var board = CampaignBoard()
        #expect(!board.loaded)
        #expect(board.update(["x": CampaignControl()]).isEmpty)
        #expect(board.loaded)
        let lines = board.update(["x": CampaignControl(state: .cancelled)])
        #expect(lines.map(\.fields) == [["campaign": "x", "state": "cancelled", "rate": "none"]])
        #expect(board.update(["x": CampaignControl(state: .cancelled)]).isEmpty)
    }

    @Test("A cancelled campaign's notifications are REJECTED Cancelled with status 0, counted, never sent; another campaign's are sent")
    func cancel() throws {
        let h = MachineHarness()
        h.shard.campaigns["spring"] = CampaignControl(state: .cancelled)
        for i in 0..<10 { h.shard.add(Entries.single("s-\(i)", token: Entries.token(i), [("campaign", "spring")])) }
        let m = h.shard.add(Entries.multicast("m", tokens: (0..<30).map(Entries.token), [("campaign", "spring")]))
        for i in 0..<5 { h.shard.add(Entries.single("o-\(i)", token: Entries.token(i), [("campaign", "other")])) }
        #expect(h.run { h.shard.isDrained && h.shard.length == 0 })
        let rows = try h.rows()
        let by = try h.outcomesByNotification()
        #expect(by.count == 45 && by.values.allSatisfy { $0 == 1 })
        #expect(h.sends.count == 5)
        let cancelled = rows.filter { $0.reason == "Cancelled" }
        #expect(cancelled.allSatisfy { $0.outcome == "REJECTED" && $0.status == 0 })
        #expect(cancelled.filter { $0.entry == m }.map(\.count) == [30])
        #expect(h.shard.stats["reason:Cancelled"] == 40 && h.shard.stats["campaign:spring:rejected"] == 40)
        #expect(h.logs.contains { $0.message == "campaign control applied" && $0.fields["campaign"] == "spring" })
    }

    @Test("A paused campaign's entries are moved aside (nothing sent) while another drains; moved back, each is sent once")
    func pauseResume() throws {
        let h = MachineHarness()
        h.shard.campaigns["big"] = CampaignControl(state: .paused)
        for i in 0..<20 { h.shard.add(Entries.single("b-\(i)", token: Entries.token(i), [("campaign", "big")])) }
        h.shard.add(Entries.multicast("bm", tokens: (0..<10).map(Entries.token), [("campaign", "big")]))
        for i in 0..<5 { h.shard.add(Entries.single("o-\(i)", token: Entries.token(i), [("campaign", "other")])) }
        #expect(h.run { h.shard.isDrained && h.shard.length == 0 })
        #expect(h.sends.count == 5)
        #expect(h.shard.paused["big"]?.count == 21 && h.shard.stats["campaign:big:paused"] == 30)
        #expect(h.shard.moveBack("big") == nil)
        h.shard.campaigns["big"] = CampaignControl(state: .active)
        #expect(h.shard.moveBack("big") == 21)
        #expect(h.run { h.shard.isDrained && h.shard.length == 0 })
        let by = try h.outcomesByNotification()
        #expect(by.values.reduce(0, +) == 35 && by.values.allSatisfy { $0 == 1 })
        #expect(h.sends.count == 35 && Set(h.sends).count == 35)
        #expect(try h.rows().allSatisfy { $0.outcome == "ACCEPTED" })
    }

    @Test("Nothing is read before the controls are: a worker restarted during a cancel sends nothing of it")
    func readsWaitForControls() {
        let h = MachineHarness()
        h.shard.campaigns["spring"] = CampaignControl(state: .cancelled)
        h.shard.add(Entries.single("s-0", [("campaign", "spring")]))
        #expect(h.run { h.shard.isDrained })
        let firstRead = h.requests.firstIndex { if case .read = $0 { return true }; return false }
        let firstControls = h.requests.firstIndex { if case .controls = $0 { return true }; return false }
        #expect(firstControls != nil && firstRead != nil && firstControls! < firstRead!)
        #expect(h.sends.isEmpty)
    }

    @Test("A cancel reaches re-delivered entries waiting for their paced turn: REJECTED Cancelled, never sent; what was in flight keeps its real outcome")
    func cancelReachesPacedRedeliveries() throws {
        let shard = InMemoryShard()
        for i in 0..<50 { shard.add(Entries.single("s-\(i)", token: Entries.token(i), [("campaign", "spring")])) }
        let first = MachineHarness(shard: shard)
        first.answer = { _ in nil }
        #expect(first.run { first.inFlight.count == 50 })
        // Killed with all 50 in flight. The next life takes them back as suspects, sent in paced
        // groups (1, 1, 2, ...: the next when the last is answered, or after a second): with APNs
        // silent, the first group is out and the rest wait for their turn.
        let second = MachineHarness(shard: shard)
        second.answer = { _ in nil }
        #expect(second.run { second.machine.heldEntryCount == 50 && second.sends.count >= 1 })
        shard.campaigns["spring"] = CampaignControl(state: .cancelled)
        #expect(second.run { second.logs.contains { $0.message == "campaign control applied" && $0.fields["campaign"] == "spring" } })
        let sentBeforeCancel = second.sends.count
        #expect(sentBeforeCancel < 50)
        second.answer = { NoteResult(tag: $0.tag, kind: .accepted, status: 200, reason: .none) }
        #expect(second.run { shard.isDrained && shard.length == 0 })
        let by = try second.outcomesByNotification()
        #expect(by.count == 50 && by.values.allSatisfy { $0 == 1 })
        #expect(second.sends.count == sentBeforeCancel, "\(second.sends.count - sentBeforeCancel) sent after the cancel was read")
        let rows = try second.rows()
        #expect(rows.filter { $0.outcome == "ACCEPTED" }.count == sentBeforeCancel)
        #expect(rows.filter { $0.reason == "Cancelled" }.count == 50 - sentBeforeCancel)
    }

    @Test("A throttled campaign is sent at its rate (token bucket on the shard's clock); an unthrottled one beside it at once")
    func throttle() throws {
        let h = MachineHarness(settings: MachineHarness.settings { $0.reclaimIntervalMillis = 200 })
        h.shard.campaigns["slow"] = CampaignControl(state: .active, rate: 100)
        for i in 0..<300 { h.shard.add(Entries.single("s-\(i)", token: Entries.token(i), [("campaign", "slow")])) }
        for i in 0..<100 { h.shard.add(Entries.single("f-\(i)", token: Entries.token(i), [("campaign", "fast")])) }
        let start = h.now.nanos
        #expect(h.run { h.shard.stats["campaign:fast:accepted"] == 100 })
        let fastDone = (h.now.nanos - start) / 1_000_000
        #expect(fastDone < 1000)
        #expect(h.run { h.shard.isDrained && h.shard.length == 0 })
        let took = Double(h.now.nanos - start) / 1e9
        let by = try h.outcomesByNotification()
        #expect(by.count == 400 && by.values.allSatisfy { $0 == 1 })
        #expect(Set(h.sends).count == 400)
        // 300 at 100/s with a tenth of a second's burst: about 2.9 s, not less.
        #expect(took >= 2.8 && took < 4.5, "took \(took) s")
    }

    @Test("Two workers sharing one bucket send a throttled campaign at its rate, not below 90% of it over 10 s, with what they cannot hold set aside and back in time")
    func throttleTwoWorkers() throws {
        // The default reclaim_interval_ms (5 s): what a worker sets aside must come back when it
        // is due, not at the next maintenance. Each worker holds two seconds of the rate
        // (200); the rest of the 2,000 waits in the delayed set.
        let shard = InMemoryShard()
        shard.campaigns["slow"] = CampaignControl(state: .active, rate: 100)
        for i in 0..<200 { shard.add(Entries.multicast("m-\(i)", tokens: (0..<10).map { Entries.token(i * 10 + $0) }, [("campaign", "slow")])) }
        let workers = [MachineHarness(shard: shard, consumer: "w1"), MachineHarness(shard: shard, consumer: "w2")]
        // Sends so far, per 10 ms step.
        var sentByStep: [Int] = []
        for step in 0..<4000 where !(shard.isDrained && shard.length == 0) {
            // Each goes first every other step: the first to read takes what is there.
            for w in step % 2 == 0 ? workers : workers.reversed() {
                w.handle(.tick)
                w.answerInFlight()
            }
            for w in workers { w.advance(millis: 10) }
            sentByStep.append(workers.reduce(0) { $0 + $1.sends.count })
        }
        #expect(shard.isDrained && shard.length == 0)
        // The shard's outcomes (both workers'), read through either harness.
        let by = try workers[0].outcomesByNotification()
        #expect(by.count == 2000 && by.values.allSatisfy { $0 == 1 })
        #expect(workers.reduce(0) { $0 + $1.sends.count } == 2000)
        // The most and the least sent in a 10 s window (1,000 steps) after the first send, while
        // the campaign lasts: within 10% of the rate's 1,000.
        let first = sentByStep.firstIndex { $0 > 0 } ?? 0
        var windows: [Int] = []
        for start in stride(from: first, through: sentByStep.count - 1000, by: 10) {
            windows.append(sentByStep[start + 999] - (start > 0 ? sentByStep[start - 1] : 0))
        }
        #expect(!windows.isEmpty)
        #expect((windows.max() ?? 0) <= 1100, "at most \(windows.max() ?? 0) in a 10 s window")
        #expect((windows.min() ?? 0) >= 900, "at least \(windows.min() ?? 0) in a 10 s window (each worker: \(workers.map(\.sends.count)))")
    }
}
