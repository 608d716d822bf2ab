import PushCore
import PushTransport
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// Fail-fast (`recovery.unreachableAfterMillis`) and a caller's cancellation of what was not
/// written (`cancelUnsent`), with the harness's clock: each notification ends once, with the
/// reason that says why, and a connection made later sends again. In memory.
@Suite("ClientCore: unreachable APNs and cancelled waits")
struct ClientCoreReachabilityTests {
    static let failed = ClientCore.Outcome.failed.rawValue
    static let refused = TransportError(.connect, "connect: Connection refused")

    /// A one-connection core failing fast after `limit` ms; its first connection attempt is
    /// refused at once (the clock starts then).
    static func refusedCore(limit: Int) -> CoreHarness {
        var c = ClientConfiguration()
        c.pool.connections = 1
        c.recovery.unreachableAfterMillis = limit
        var h = CoreHarness(configuration: c)
        let ids = h.startConnections()
        h.core.connectionClosed(ids[0], error: refused, now: h.now, actions: &h.actions)
        return h
    }

    /// Turns of the loop until the clock has moved `millis` on, every scan interval (50 ms), the
    /// connection attempts the pool asks for refused as they start.
    static func turns(_ h: inout CoreHarness, millis: UInt64) {
        for _ in 0..<(millis / 50) {
            if let id = step(&h) { h.core.connectionClosed(id, error: refused, now: h.now, actions: &h.actions) }
        }
    }

    /// One turn 50 ms on, as the driver takes it: a name to resolve is resolved at once; returns
    /// the connection it started, if it started one.
    static func step(_ h: inout CoreHarness) -> ConnectionID? {
        h.advance(millis: 50)
        var started: ConnectionID?
        for action in h.turn() {
            switch action {
            case .resolve:
                h.core.resolutionStarted(ticket: 9)
                h.core.resolutionAnswered(ticket: 9, .success([CoreHarness.address]), now: h.now, actions: &h.actions)
            case .connect(let id, _):
                h.core.connectStarted(id, fallback: [], now: h.now, actions: &h.actions)
                started = id
            default:
                break
            }
        }
        return started
    }

    @Test("Once no connection could be made for the limit, queued notifications end FAILED Unreachable with the last error, and new ones at once; each once")
    func failsFastThenResumes() {
        var h = Self.refusedCore(limit: 5_000)
        let queued = h.submit(2, deadlineMillis: 60_000)
        Self.turns(&h, millis: 4_950)
        #expect(h.finished.isEmpty && h.pending == queued, "within the limit they wait")
        Self.turns(&h, millis: 50)
        #expect(h.finished == queued)
        for i in queued {
            let r = h.result(i)
            #expect(r.outcome == Self.failed && r.reason == .unreachable && r.attempts == 0)
            #expect(r.text.contains("Connection refused") && r.text.contains("5000 ms"), "\(r.text)")
        }
        // A notification sent while unreachable ends at the next turn, not at its deadline.
        let late = h.submit(1, deadlineMillis: 60_000)
        h.turn()
        #expect(h.finished == queued + late && h.result(late[0]).reason == .unreachable)
        // Nothing ends twice however long it goes on.
        Self.turns(&h, millis: 10_000)
        #expect(h.finished == queued + late)
    }

    @Test("While unreachable the pool still tries at the back-off's pace, and the first connection made sends again")
    func connectionResumesSending() {
        var h = Self.refusedCore(limit: 1_000)
        Self.turns(&h, millis: 1_000)
        #expect(h.core.reachability.isUnreachable)
        #expect(h.core.backoff.isBackingOff)
        // Idle (nothing queued, no caller waiting), it still probes, but not before the back-off allows.
        var id: ConnectionID?
        for _ in 0..<400 where id == nil {
            let due = h.core.backoff.nextAttemptNanos
            if let c = Self.step(&h) {
                #expect(h.now >= due, "no attempt before the back-off's time")
                id = c
            }
        }
        #expect(id != nil, "an unreachable client keeps probing")
        guard let id else { return }
        h.establish(id, maxStreams: 10)
        #expect(!h.core.reachability.isUnreachable && h.core.reachability.failingSinceNanos == nil)
        let n = h.submit(1)
        #expect(h.dispatch()[id] == n, "sent, not failed")
        #expect(h.finished.isEmpty)
    }

    @Test("0 turns fail-fast off: notifications wait for their deadline and end QueueTimeout")
    func offWaitsForDeadline() {
        var h = Self.refusedCore(limit: 0)
        let n = h.submit(1, deadlineMillis: 8_000)
        Self.turns(&h, millis: 7_950)
        #expect(h.finished.isEmpty && h.pending == n)
        Self.turns(&h, millis: 100)
        #expect(h.finished == n && h.result(n[0]).reason == .queueTimeout)
    }

    @Test("A failed attempt while a connection is ready does not start the clock")
    func readyConnectionKeepsReachable() {
        var c = ClientConfiguration()
        c.pool.connections = 1
        c.recovery.unreachableAfterMillis = 1_000
        var h = CoreHarness(configuration: c)
        h.connect()
        let now = h.now
        h.core.deciding(into: &h.actions) { $0.connectionAttemptFailed(startedNanos: now, error: Self.refused, now: now) }
        h.advance(millis: 5_000)
        let n = h.submit(1)
        h.turn()
        #expect(h.pending == n && h.finished.isEmpty)
        #expect(h.core.reachability.failingSinceNanos == nil)
    }

    @Test("cancelUnsent ends FAILED Cancelled the queued notifications in its tag ranges never written, and leaves the written and the others alone")
    func cancelUnsent() {
        var c = ClientConfiguration()
        c.pool.connections = 1
        var h = CoreHarness(configuration: c)
        let id = h.connect(maxStreams: 1)[0]
        let n = h.submit(4)
        for (k, i) in n.enumerated() { h.slot(i).pointee.request.tag = UInt64(k) << 24 }
        h.slot(n[3]).pointee.request.tag = 1 << 24 | 5 // n3 shares n1's waiter
        #expect(h.dispatch()[id] == [n[0]], "one stream: n0 is written")
        h.core.cancelUnsent(tags: [0...(1 << 24 - 1), (1 << 24)...(2 << 24 - 1)], now: h.now)
        #expect(h.finished == [n[1], n[3]], "n0 is in flight: left alone")
        for i in [n[1], n[3]] {
            let r = h.result(i)
            #expect(r.outcome == Self.failed && r.reason == .cancelled && r.attempts == 0)
        }
        #expect(h.pending == [n[2]])
        h.answer(n[0], on: id)
        #expect(h.result(n[0]).outcome == ClientCore.Outcome.accepted.rawValue)
        h.core.cancelUnsent(tags: [0...(1 << 24 - 1), (1 << 24)...(2 << 24 - 1)], now: h.now)
        #expect(h.finished == [n[1], n[3], n[0]], "asking again ends nothing twice")
    }
}
