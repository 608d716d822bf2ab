import PushCore
import PushTransport
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// A lost connection: what was in flight on it is sent again once if the server never processed
/// it, or ends FAILED ConnectionLost; never both, never neither. Its position reconnects, after
/// a back-off when the loss counts as a refusal. In memory.
@Suite("ClientCore: lost connections and reconnecting", .timeLimit(.minutes(1)))
struct ClientCoreConnectionLossTests {
    static let accepted = ClientCore.Outcome.accepted.rawValue
    static let failed = ClientCore.Outcome.failed.rawValue

    func harness(connections: Int = 1) -> CoreHarness {
        var c = ClientConfiguration()
        c.pool.connections = connections
        return CoreHarness(configuration: c)
    }

    @Test("After a GOAWAY and the loss, streams above its last-stream-id are resent once on the next connection; the others end FAILED ConnectionLost")
    func goawayThenLoss() {
        var h = harness()
        let old = h.connect()[0]
        let n = h.submit(4) // stream ids 1, 3, 5, 7
        h.dispatch()
        h.record([.goaway(lastStreamID: 3, errorCode: 0)], on: old)
        h.core.connectionClosed(old, error: TransportError(.closed, "connection reset by peer"), now: h.now, actions: &h.actions)
        #expect(h.finished.sorted() == [n[0], n[1]])
        for i in n[0...1] {
            let r = h.result(i)
            #expect(r.outcome == Self.failed && r.reason == .connectionLost && r.attempts == 1)
            #expect(r.text == "after GOAWAY: connection reset by peer" || r.text.contains("connection reset by peer"))
        }
        #expect(h.pending == [n[2], n[3]], "unprocessed: at the front, in their order")
        #expect(h.core.queue.inFlightTotal == 0 && h.core.outbox.counters.resent == 2)
        #expect(h.state(old) == nil, "the core forgot it")

        // Nothing was answered on it: its end counts as a failed attempt, so the client backs off.
        #expect(h.startConnections().isEmpty)
        h.waitOutBackoff()
        let new = h.connect()[0]
        #expect(h.dispatch() == [new: [n[2], n[3]]])
        h.answer(n[2], on: new)
        h.answer(n[3], on: new)
        #expect(h.finished.sorted() == n, "each exactly once")
        #expect(h.result(n[2]).outcome == Self.accepted && h.result(n[2]).attempts == 1, "the unprocessed write is not counted")
    }

    @Test("Without a GOAWAY every stream of a lost connection may have been processed: each ends FAILED ConnectionLost, none is resent")
    func abruptLoss() {
        var h = harness()
        let id = h.connect()[0]
        let n = h.submit(3)
        h.dispatch()
        h.core.connectionClosed(id, error: TransportError(.closed, "EOF"), now: h.now, actions: &h.actions)
        #expect(h.finished.sorted() == n.sorted())
        #expect(h.finished.allSatisfy { h.result($0).reason == .connectionLost })
        #expect(h.pending.isEmpty && h.core.queue.inFlightTotal == 0)
        #expect(h.core.outbox.connectionError?.description == "EOF", "an abrupt loss is a connection error")
    }

    @Test("Answers of the last read are taken before the loss: an answered stream ends with its answer, not as lost")
    func lastReadFirst() {
        var h = harness()
        let id = h.connect()[0]
        let n = h.submit(2)
        h.dispatch()
        h.answer(n[0], on: id)
        h.core.connectionClosed(id, error: TransportError(.closed, "EOF"), now: h.now, actions: &h.actions)
        #expect(h.finished == [n[0], n[1]])
        #expect(h.result(n[0]).outcome == Self.accepted)
        #expect(h.result(n[1]).reason == .connectionLost)
    }

    @Test("Facts and events about a connection that is gone find nothing, even when its entry is reused")
    func staleConnection() {
        var h = harness()
        let old = h.connect()[0]
        let n = h.submit(1)
        h.dispatch()
        let streamID = h.slot(n[0]).pointee.transmission.streamID
        h.core.connectionClosed(old, error: nil, now: h.now, actions: &h.actions)
        h.waitOutBackoff()
        let new = h.connect()[0]
        #expect(new.index == old.index && new != old, "the entry is reused under a new generation")
        h.slot(n[0]).pointee.answer.status = 200
        h.record([.streamClosed(slot: n[0], streamID: streamID, errorCode: 0)], on: old)
        h.core.connectionClosed(old, error: TransportError(.closed, "late"), now: h.now, actions: &h.actions)
        #expect(h.finished == n, "ended once, when its connection went")
        #expect(h.state(new)?.phase == .ready)
        #expect(h.startStreams(on: old).isEmpty)
    }

    @Test("A connection lost before the server's SETTINGS is a failed attempt: the position reconnects only after the back-off")
    func failedAttemptBacksOff() {
        var c = ClientConfiguration()
        c.pool.connections = 1
        c.recovery.reconnectFirstDelayMillis = 1_000
        c.recovery.reconnectMaxDelayMillis = 1_000
        var h = CoreHarness(configuration: c)
        let id = h.startConnections()[0]
        h.submit(1)
        h.core.connectionProgressed(id, .tcpConnected(throughProxy: false))
        h.core.connectionClosed(id, error: TransportError(.closed, "reset"), now: h.now, actions: &h.actions)
        #expect(h.core.pool.positions[0] == nil)
        #expect(h.startConnections().isEmpty, "backing off")
        #expect(h.core.sleepMillis(now: h.now) <= 1_000)
        h.advance(millis: 1_000)
        #expect(h.startConnections().count == 1, "the back-off's probe")
    }

    @Test("A TCP connect that fails tries the same answer's next address before counting a failure")
    func fallbackAddress() {
        var h = harness()
        h.maintainPool(callersWaiting: true)
        h.core.resolutionStarted(ticket: 7)
        h.core.resolutionAnswered(ticket: 7, .success([CoreHarness.address, CoreHarness.address]), now: h.now, actions: &h.actions)
        h.maintainPool(callersWaiting: true)
        let first = h.takeActions().compactMap(\.connects)
        #expect(first.count == 1)
        h.core.connectStarted(first[0], fallback: [CoreHarness.address], now: h.now, actions: &h.actions)
        h.core.connectionClosed(first[0], error: TransportError(.connect, "connection refused"), now: h.now, actions: &h.actions)
        let next = h.takeActions().compactMap(\.connects)
        #expect(next.count == 1 && next[0] != first[0], "the next address, at once")
        #expect(h.core.outbox.connectionError == nil, "not a failure yet")
    }

    @Test("A resolution answered after it was given up on is not taken")
    func abandonedResolution() {
        var c = ClientConfiguration()
        c.pool.connections = 1
        c.timing.connectTimeoutMillis = 100
        var h = CoreHarness(configuration: c)
        h.maintainPool(callersWaiting: true)
        h.core.resolutionStarted(ticket: 1)
        h.advance(millis: 101)
        h.maintainPool(callersWaiting: true)
        #expect(h.core.outbox.connectionError?.description.contains("took longer than 100 ms") == true)
        h.core.resolutionAnswered(ticket: 1, .success([CoreHarness.address]), now: h.now, actions: &h.actions)
        #expect(h.core.pool.resolvedAddresses == nil)
    }
}
