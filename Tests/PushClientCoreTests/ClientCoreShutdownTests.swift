import PushCore
import PushTransport
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// Close and shutdown: a closing client drains, then every notification still held gets its one
/// outcome, whatever list it was in; and, over many random runs of answers, resets, GOAWAYs,
/// losses and deadlines, no notification ever ends twice or not at all. In memory.
@Suite("ClientCore: close, shutdown and one outcome each", .timeLimit(.minutes(1)))
struct ClientCoreShutdownTests {
    static let failed = ClientCore.Outcome.failed.rawValue

    @Test("A closing client waits for what is in flight, opens no connection when idle, and its drain ends when nothing is left")
    func drain() {
        var c = ClientConfiguration()
        c.pool.connections = 1
        var h = CoreHarness(configuration: c)
        let id = h.connect()[0]
        let n = h.submit(1)
        h.dispatch()
        h.turn(closing: true, drainMillis: 5_000)
        #expect(!h.core.drainIsOver(now: h.now))
        h.answer(n[0], on: id)
        #expect(h.core.drainIsOver(now: h.now))
        h.core.connectionClosed(id, error: nil, now: h.now, actions: &h.actions)
        #expect(h.turn(closing: true, drainMillis: 5_000).compactMap(\.connects).isEmpty && h.takeActions().isEmpty)
        #expect(h.core.pool.positions[0] == nil, "idle and closing: no reconnect")
    }

    @Test("At the end of the drain, queued, delayed and in-flight notifications each end FAILED once (Cancelled or CancelledInFlight), and every connection is terminated")
    func shutdownEndsEverything() {
        var c = ClientConfiguration()
        c.pool.connections = 2
        c.recovery.retryDelayMillis = 10_000
        var h = CoreHarness(configuration: c)
        let ids = h.connect(maxStreams: 2)
        let n = h.submit(6)
        h.dispatch()                                      // n0...n3 in flight on the two connections
        h.answer(n[0], on: ids[0], status: 429, reason: "TooManyRequests") // n0 delayed
        h.answer(n[2], on: ids[1])                        // n2 accepted
        #expect(h.core.queue.delayed.count == 1 && h.pending == [n[4], n[5]])
        h.turn(closing: true, drainMillis: 100)
        h.advance(millis: 100)
        h.turn(closing: true, drainMillis: 100)
        #expect(h.core.drainIsOver(now: h.now))
        h.core.shutDown(now: h.now, actions: &h.actions)
        #expect(h.takeActions().compactMap(\.terminates).sorted { $0.index < $1.index } == ids)
        #expect(h.finished.sorted() == n.sorted(), "each exactly once")
        #expect(h.result(n[2]).outcome == ClientCore.Outcome.accepted.rawValue)
        for i in [n[0], n[4], n[5]] { #expect(h.result(i).outcome == Self.failed && h.result(i).reason == .cancelled) }
        for i in [n[1], n[3]] { #expect(h.result(i).outcome == Self.failed && h.result(i).reason == .cancelledInFlight) }
        #expect(h.core.queue.isIdle)
        // The terminated connections' ends (and any answer that was still in their input) add nothing.
        h.slot(n[1]).pointee.answer.status = 200
        h.record([.streamClosed(slot: n[1], streamID: 1, errorCode: 0)], on: ids[0])
        for id in ids { h.core.connectionClosed(id, error: nil, now: h.now, actions: &h.actions) }
        #expect(h.finished.count == n.count && h.takeActions().compactMap(\.connects).isEmpty)

        // What a sender handed over as the client closed is cancelled too.
        var late = SlotList()
        let l = h.notification()
        late.append(l, in: h.slots)
        h.core.cancel(&late, now: h.now)
        #expect(h.finished.last == l && h.result(l).reason == .cancelled && late.isEmpty)
        #expect(ResultView(h.slot(l)).apnsID.contains { $0 != 0 }, "never sent, it still carries an apns-id")
    }

    /// A SplitMix64 stream: the runs are random but the same at every run of the test.
    struct Draws {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }
    }

    @Test("Whatever happens (answers of every kind, resets, GOAWAYs, lost connections, deadlines, close), every notification ends exactly once",
          arguments: 1...20)
    func exactlyOnce(seed: UInt64) {
        var c = ClientConfiguration()
        c.pool.connections = 3
        c.recovery.maxAttempts = 3
        c.recovery.retryDelayMillis = 20
        c.recovery.reconnectFirstDelayMillis = 10
        c.recovery.reconnectMaxDelayMillis = 40
        var h = CoreHarness(configuration: c, unit: 0.5, capacity: 512)
        var draw = Draws(state: seed)
        var submitted: [Int32] = []
        // What the test's server has open: slot, connection, stream id.
        var inFlight: [(Int32, ConnectionID, Int32)] = []
        let answers: [(Int32, String?)] = [(200, nil), (200, nil), (200, nil), (400, "BadDeviceToken"), (429, "TooManyRequests"),
                                           (500, nil), (503, "ServiceUnavailable"), (403, "ExpiredProviderToken")]
        for _ in 0..<400 {
            switch draw.next(10) {
            case 0, 1:
                submitted += h.submit(1 + draw.next(4), deadlineMillis: UInt64(20 + draw.next(400)))
            case 2:
                // Connections that come up, or fail as they start (after what was asked before).
                for (id, sent) in h.carryOut(h.takeActions()) { inFlight += sent.map { ($0, id, h.slot($0).pointee.transmission.streamID) } }
                for id in h.startConnections() {
                    if draw.next(4) == 0 { h.core.connectionClosed(id, error: TransportError(.closed, "refused"), now: h.now, actions: &h.actions) }
                    else { h.establish(id, maxStreams: UInt32(1 + draw.next(5))) }
                }
            case 3, 4:
                for (id, sent) in h.carryOut(h.turn(), maxStreams: UInt32(1 + draw.next(5))) { inFlight += sent.map { ($0, id, h.slot($0).pointee.transmission.streamID) } }
            case 5, 6:
                if !inFlight.isEmpty {
                    let (index, id, _) = inFlight.remove(at: draw.next(inFlight.count))
                    if draw.next(5) == 0 {
                        h.reset(index, on: id, errorCode: draw.next(2) == 0 ? CoreHarness.refusedStream : CoreHarness.internalError)
                    } else {
                        let (status, reason) = answers[draw.next(answers.count)]
                        h.answer(index, on: id, status: status, reason: reason)
                    }
                }
            case 7:
                if !inFlight.isEmpty {
                    let id = inFlight[draw.next(inFlight.count)].1
                    if draw.next(2) == 0 { h.record([.goaway(lastStreamID: Int32(draw.next(8)), errorCode: 0)], on: id) }
                    else { h.core.connectionClosed(id, error: TransportError(.closed, "lost"), now: h.now, actions: &h.actions) }
                }
            case 8:
                h.advance(millis: UInt64(1 + draw.next(60)))
                for (id, sent) in h.carryOut(h.turn(), maxStreams: UInt32(1 + draw.next(5))) { inFlight += sent.map { ($0, id, h.slot($0).pointee.transmission.streamID) } }
            default:
                h.publish()
            }
            // A stream the core ended otherwise (a deadline, a lost connection) is not answered by
            // this test's server; one sent again is answered under its new stream.
            inFlight.removeAll { h.slot($0.0).pointee.transmission.streamID != $0.2 }
        }
        h.turn(closing: true, drainMillis: 0)
        #expect(h.core.drainIsOver(now: h.now))
        h.core.shutDown(now: h.now, actions: &h.actions)
        #expect(h.carryOut(h.takeActions()).isEmpty, "nothing starts after shutdown")
        #expect(h.outcomes.count == submitted.count, "one outcome each")
        #expect(Set(h.outcomes) == Set(submitted), "no notification without an outcome, none twice")
        #expect(h.core.queue.isIdle)
        let counts = h.core.outbox.counters
        #expect(counts.sent > 0 && counts.accepted > 0 && counts.rejected > 0 && counts.resent > 0 && counts.goaways > 0,
                "the run sent, accepted, rejected, resent and saw GOAWAYs")
        #expect(h.outcomes.allSatisfy { (1...3).contains(h.result($0).outcome) })
    }
}
