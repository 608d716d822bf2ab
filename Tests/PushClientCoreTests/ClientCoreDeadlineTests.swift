import PushCore
import PushTransport
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// Deadlines and timers, looked at every scan interval: streams with no answer in time, queued
/// notifications nothing could send, connection attempts that take too long, idle connections'
/// PINGs. In memory, on the injected clock.
@Suite("ClientCore: deadlines, connect timeouts and health PINGs", .timeLimit(.minutes(1)))
struct ClientCoreDeadlineTests {
    static let failed = ClientCore.Outcome.failed.rawValue

    /// One pool position; the given timing.
    func configuration(connectTimeoutMillis: Int = 10_000, idlePingMillis: Int = 0, pingTimeoutMillis: Int = 5_000,
                       retireAfterTimeouts: Int = 100) -> ClientConfiguration {
        var c = ClientConfiguration()
        c.pool.connections = 1
        c.timing.connectTimeoutMillis = connectTimeoutMillis
        c.timing.idlePingMillis = idlePingMillis
        c.timing.pingTimeoutMillis = pingTimeoutMillis
        c.recovery.retireAfterTimeouts = retireAfterTimeouts
        return c
    }

    @Test("A stream unanswered at its deadline is reset and ends FAILED Timeout at the next scan; its late close is ignored")
    func inFlightDeadline() {
        var h = CoreHarness(configuration: configuration())
        let id = h.connect()[0]
        let n = h.submit(2, deadlineMillis: 100)
        h.turn() // a scan now: the next one is 50 ms on
        h.dispatch()
        let streamID = h.slot(n[0]).pointee.transmission.streamID
        h.answer(n[1], on: id)
        h.advance(millis: 99)
        h.turn() // a scan (due 50 ms after the last): the deadline is 1 ms away
        #expect(h.finished == [n[1]], "not before its deadline")
        h.advance(millis: 49)
        #expect(h.turn().compactMap(\.cancels).isEmpty, "past its deadline, but the next scan is 1 ms away")
        h.advance(millis: 1)
        let actions = h.turn()
        #expect(actions.compactMap(\.cancels).map { [$0.0 == id, $0.1 == streamID] } == [[true, true]])
        #expect(actions.contains { if case .flush(id) = $0 { return true } else { return false } })
        #expect(h.finished == [n[1], n[0]])
        let r = h.result(n[0])
        #expect(r.outcome == Self.failed && r.reason == .timeout && r.attempts == 1)
        #expect(h.core.queue.inFlightTotal == 0 && h.state(id)?.inFlight == 0)
        // nghttp2 reports the reset stream's close afterwards: it is no longer the slot's.
        h.record([.streamClosed(slot: n[0], streamID: streamID, errorCode: 8)], on: id)
        #expect(h.finished == [n[1], n[0]])
    }

    @Test("Deadlines are looked at once per scan interval, not at every turn")
    func scanInterval() {
        var h = CoreHarness(configuration: configuration())
        h.connect()
        h.turn()
        let n = h.submit(1, deadlineMillis: 10)
        h.advance(millis: 20)
        h.turn()
        #expect(h.finished.isEmpty, "the next scan is 50 ms after the last")
        h.advance(millis: 30)
        h.turn()
        #expect(h.finished == n && h.result(n[0]).reason == .queueTimeout)
    }

    @Test("Enough timeouts in a row retire a connection")
    func timeoutsRetire() {
        var h = CoreHarness(configuration: configuration(retireAfterTimeouts: 2))
        let id = h.connect()[0]
        h.submit(2, deadlineMillis: 10)
        h.dispatch()
        h.advance(millis: 50)
        let actions = h.turn()
        #expect(actions.compactMap(\.closes) == [id], "retired with nothing left in flight: closed")
        #expect(h.state(id)?.history.retiredByClient == true)
    }

    @Test("A notification nothing could send ends FAILED QueueTimeout at its deadline, naming the last connection error")
    func queueDeadlineNamesTheError() {
        var h = CoreHarness(configuration: configuration())
        let id = h.startConnections()[0]
        let n = h.submit(1, deadlineMillis: 200)
        h.core.connectionClosed(id, error: TransportError(.connect, "connection refused"), now: h.now, actions: &h.actions)
        h.advance(millis: 200)
        h.turn()
        let r = h.result(n[0])
        #expect(r.outcome == Self.failed && r.reason == .queueTimeout && r.attempts == 0)
        #expect(r.text == "not sent within the deadline; last connection error: connection refused")
        #expect(h.core.outbox.connectionError?.description == "connection refused")
    }

    @Test("A connection still opening at the connect timeout is given up on; one with TLS up and no SETTINGS says so")
    func connectTimeout() {
        var h = CoreHarness(configuration: configuration(connectTimeoutMillis: 300))
        let id = h.startConnections()[0]
        h.core.connectionProgressed(id, .tcpConnected(throughProxy: false))
        h.advance(millis: 299)
        h.turn()
        h.advance(millis: 50)
        let failures = h.turn().compactMap(\.fails)
        #expect(failures.count == 1 && failures.first?.0 == id && failures.first?.1.kind == .connect)

        var h2 = CoreHarness(configuration: configuration(connectTimeoutMillis: 300))
        let id2 = h2.startConnections()[0]
        h2.core.connectionProgressed(id2, .tcpConnected(throughProxy: false))
        h2.core.connectionProgressed(id2, .handshakeCompleted)
        h2.advance(millis: 301)
        let f2 = h2.turn().compactMap(\.fails)
        #expect(f2.count == 1 && f2.first?.1.kind == .protocolError)
        #expect(f2.first?.1.description.contains("SETTINGS") == true)
    }

    @Test("An idle connection gets a PING; acknowledged it stays, unanswered past the PING timeout it is given up on")
    func healthPings() {
        var h = CoreHarness(configuration: configuration(idlePingMillis: 1_000, pingTimeoutMillis: 200))
        let id = h.connect()[0]
        h.turn()
        h.advance(millis: 1_000)
        #expect(h.turn().compactMap(\.pings).isEmpty, "idle for exactly the idle time: not yet")
        h.advance(millis: 51)
        #expect(h.turn().compactMap(\.pings) == [id])
        h.record([.pingAcknowledged], on: id)
        h.advance(millis: 1_001)
        #expect(h.turn().compactMap(\.pings) == [id], "idle again: another PING")
        h.advance(millis: 200)
        #expect(h.turn().compactMap(\.fails).isEmpty, "the PING timeout is not over yet")
        h.advance(millis: 51)
        let failures = h.turn().compactMap(\.fails)
        #expect(failures.count == 1 && failures.first?.0 == id && failures.first?.1.kind == .closed)
    }
}
