import PushCore
@testable import SwiftPushWorker
@testable import SwiftPushWorkerMachine
import Testing

/// `ShardMachine`'s life (`Lifecycle`: running, stopping, finished) as its events move it:
/// what a stop fixes once (its drain deadline), what the end of a stop and the end by a failure
/// each leave (`isStopping`, `isFinished`), and that an ended machine answers nothing.
@Suite("ShardMachine lifecycle", .timeLimit(.minutes(1)))
struct ShardLifecycleTests {
    /// The drain time of these tests.
    static let drainNanos: UInt64 = 100_000_000

    @Test("A stop sets its drain deadline once: a second stop neither moves it nor starts another; past it the clients close once, the hand-back is asked once, and the machine ends stopped")
    func stopTransitions() {
        let h = MachineHarness(settings: MachineHarness.settings { $0.drainMillis = 100 })
        h.shard.add(Entries.multicast("m", tokens: (0..<4).map(Entries.token)))
        h.answer = { _ in nil }
        #expect(h.run { h.inFlight.count == 4 })
        #expect(h.machine.lifecycle == .running && !h.machine.isStopping && !h.machine.isFinished)

        let stopAt = h.now.nanos
        h.handle(.stop)
        let stopping = Lifecycle.stopping(.init(drainDeadlineNanos: stopAt + Self.drainNanos))
        #expect(h.machine.lifecycle == stopping && h.machine.isStopping && !h.machine.isFinished)
        #expect(h.logs.filter { $0.message.hasPrefix("stopping") }.count == 1)

        h.advance(millis: 60)
        h.handle(.stop)
        #expect(h.machine.lifecycle == stopping, "a second stop moved the drain deadline")
        #expect(h.logs.filter { $0.message.hasPrefix("stopping") }.count == 1)
        #expect(!h.clientsClosed)

        // Past the first stop's deadline, before what a second one would have set.
        h.advance(millis: 50)
        h.handle(.tick)
        #expect(h.clientsClosed)
        #expect(h.requests.filter { if case .handBack = $0 { true } else { false } }.count == 1)
        #expect(h.machine.lifecycle == .finished(stopped: true))
        #expect(h.machine.isFinished && h.machine.isStopping)
        #expect(h.stopped == 1 && h.shard.pendingCount == 1)
    }

    @Test("A failure retrying cannot fix ends a running machine unstopped; after the end, a stop, a tick or results do nothing")
    func failureEnds() {
        var m = ShardMachine(settings: MachineHarness.settings(), apps: ["demo": AppPolicy(topics: ["com.example.app"])])
        let t = WorkerTime(nanos: 1_000_000_000, wallMillis: 1_700_000_000_000)
        #expect(m.handle(.tick, at: t).contains { if case .connect = $0 { true } else { false } })
        let actions = m.handle(.connectFailed(QueueError("WRONGPASS invalid username-password pair", connectionLost: true, permanent: true)), at: t)
        #expect(actions.contains { if case .fatal = $0 { true } else { false } })
        #expect(m.lifecycle == .finished(stopped: false))
        #expect(m.isFinished && !m.isStopping)

        #expect(m.handle(.stop, at: t).isEmpty)
        #expect(m.lifecycle == .finished(stopped: false), "a stop after the end started one")
        #expect(m.handle(.tick, at: t.adding(millis: 10_000)).isEmpty)
        // A connection that comes up after the end (the driver's connect was under way) reads nothing.
        #expect(m.handle(.connected, at: t).isEmpty)
        #expect(m.handle(.results([NoteResult(tag: 1 << 10, kind: .accepted, status: 200, reason: .none)]), at: t).isEmpty)
        #expect(m.nextWakeNanos() == nil)
    }

    @Test("A stop before the queue is reached waits for the connection, then ends stopped with nothing to hand back")
    func stopWhileConnecting() {
        let h = MachineHarness(settings: MachineHarness.settings { $0.drainMillis = 100 })
        h.handle(.stop)
        #expect(h.machine.isStopping)
        #expect(h.run { h.stopped != nil })
        #expect(h.machine.lifecycle == .finished(stopped: true) && h.stopped == 0 && !h.clientsClosed)
    }
}
