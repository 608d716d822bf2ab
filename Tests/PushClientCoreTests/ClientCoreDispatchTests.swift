import PushCore
import PushTransport
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// Dispatch: which queued notifications go on which connection, under the server's and our
/// stream limits. In memory: the harness plays the driver and the connections.
@Suite("ClientCore: dispatch under stream limits", .timeLimit(.minutes(1)))
struct ClientCoreDispatchTests {
    /// A configuration of `connections` connections, at most `localMax` streams on each.
    func configuration(connections: Int = 1, localMax: Int = 1000) -> ClientConfiguration {
        var c = ClientConfiguration()
        c.pool.connections = connections
        c.pool.maxStreamsPerConnection = localMax
        return c
    }

    @Test("A connection takes as many notifications as the server's limit allows, in queue order; the rest waits for a stream to end")
    func serverLimit() {
        var h = CoreHarness(configuration: configuration())
        let id = h.connect(maxStreams: 3)[0]
        let n = h.submit(5)
        #expect(h.turn().compactMap(\.startsStreams) == [id])
        #expect(h.startStreams(on: id) == Array(n[0..<3]))
        #expect(h.pending == Array(n[3...]))
        #expect(h.core.queue.inFlightTotal == 3 && h.state(id)?.inFlight == 3)
        #expect(h.turn().compactMap(\.startsStreams).isEmpty, "no room: no streams are asked for")

        h.answer(n[1], on: id)
        #expect(h.finished == [n[1]])
        #expect(h.dispatch() == [id: [n[3]]], "one stream ended, one more starts")
        #expect(h.pending == [n[4]])
    }

    @Test("Our own limit caps a server that allows more")
    func localLimit() {
        var h = CoreHarness(configuration: configuration(localMax: 2))
        let id = h.connect(maxStreams: 1000)[0]
        let n = h.submit(4)
        #expect(h.dispatch() == [id: Array(n[0..<2])])
        #expect(h.pending == Array(n[2...]))
    }

    @Test("Connections share the queue, each taking what it has room for")
    func sharedQueue() {
        var h = CoreHarness(configuration: configuration(connections: 2))
        let ids = h.connect(maxStreams: 2)
        #expect(ids.count == 2)
        let n = h.submit(5)
        let sent = h.dispatch()
        #expect(sent[ids[0]] == Array(n[0..<2]) && sent[ids[1]] == Array(n[2..<4]))
        #expect(h.pending == [n[4]])
    }

    @Test("A connection gets no stream before the server's SETTINGS, and takes the queue once they come")
    func notBeforeSettings() {
        var h = CoreHarness(configuration: configuration())
        let id = h.startConnections()[0]
        let n = h.submit(2)
        h.core.connectionProgressed(id, .tcpConnected(throughProxy: false))
        h.core.connectionProgressed(id, .handshakeCompleted)
        #expect(h.turn().compactMap(\.startsStreams).isEmpty)
        #expect(h.startStreams(on: id).isEmpty, "asked anyway, it takes nothing")
        h.record([.settings(maxConcurrentStreams: 10)], on: id)
        #expect(h.dispatch() == [id: n])
    }

    @Test("A server lowering its limit holds new streams back until the streams in flight fit under it")
    func limitLowered() {
        var h = CoreHarness(configuration: configuration())
        let id = h.connect(maxStreams: 3)[0]
        let n = h.submit(5)
        h.dispatch()
        h.record([.settings(maxConcurrentStreams: 1)], on: id)
        h.answer(n[0], on: id)
        #expect(h.dispatch().isEmpty, "two still in flight, one allowed")
        h.answer(n[1], on: id)
        h.answer(n[2], on: id)
        #expect(h.dispatch() == [id: [n[3]]])
    }

    @Test("After a GOAWAY a connection takes no new streams and its position opens a replacement, which takes the queue")
    func goawayReplaces() {
        var h = CoreHarness(configuration: configuration())
        let old = h.connect(maxStreams: 10)[0]
        let n = h.submit(2)
        h.dispatch()
        h.record([.goaway(lastStreamID: 3, errorCode: 0)], on: old)
        #expect(h.core.outbox.counters.goaways == 1)
        let more = h.submit(1)
        #expect(h.startStreams(on: old).isEmpty, "a draining connection takes nothing new")
        let new = h.connect(maxStreams: 10)
        #expect(new.count == 1 && new[0] != old)
        #expect(h.dispatch() == [new[0]: more])
        // The old one drains: its streams are answered, then it is closed in order.
        h.answer(n[0], on: old)
        h.answer(n[1], on: old)
        #expect(h.takeActions().compactMap(\.closes) == [old])
        #expect(h.finished == [n[0], n[1]])
    }

    @Test("A notification whose deadline passed while it waited ends FAILED QueueTimeout when its turn comes, and is not sent")
    func expiredOnTheWay() {
        var h = CoreHarness(configuration: configuration())
        let id = h.connect(maxStreams: 10)[0]
        let late = h.submit(1, deadlineMillis: 5)
        let fine = h.submit(1, deadlineMillis: 10_000)
        h.advance(millis: 5)
        #expect(h.startStreams(on: id) == fine)
        #expect(h.finished == late)
        let r = h.result(late[0])
        #expect(r.outcome == ClientCore.Outcome.failed.rawValue && r.reason == .queueTimeout && r.attempts == 0)
        #expect(h.slot(late[0]).pointee.transmission.streamID == 0)
    }

    @Test("What nghttp2 refuses to start goes back to the front of the queue in order; running out of stream ids retires the connection")
    func refusedByNghttp2() {
        var h = CoreHarness(configuration: configuration())
        let id = h.connect(maxStreams: 10)[0]
        let n = h.submit(4)
        var batch = h.core.takeStreams(for: id, now: h.now)
        // The first one starts, nghttp2 refuses the second: the rest of the batch is not tried.
        var started = SlotList()
        let first = batch.popFirst(in: h.slots)
        h.slot(first).pointee.transmission.streamID = 1
        started.append(first, in: h.slots)
        h.core.streamsStarted(&started, on: id, tokenGeneration: 0, now: h.now, actions: &h.actions)
        h.core.streamsNotStarted(&batch, on: id, idsExhausted: true, errorText: "stream ids exhausted", actions: &h.actions)
        #expect(h.pending == Array(n[1...]))
        #expect(h.core.queue.inFlightTotal == 1)
        #expect(h.state(id)?.history.retiredByClient == true)
        #expect(h.startStreams(on: id).isEmpty, "retired: it takes nothing new")
        #expect(h.core.pool.positions[0] == nil, "its position reopens")
    }

    @Test("A notification sent without an apns-id gets one, kept across its resends")
    func apnsIdAssigned() {
        var h = CoreHarness(configuration: configuration())
        let id = h.connect(maxStreams: 10)[0]
        let n = h.submit(1)[0]
        h.startStreams(on: id)
        let assigned = Array(ResultView(h.slot(n)).apnsID)
        #expect(assigned.count == 36 && assigned != Array(repeating: 0, count: 36))
        h.reset(n, on: id, errorCode: CoreHarness.refusedStream)
        #expect(h.pending == [n])
        h.startStreams(on: id)
        #expect(Array(ResultView(h.slot(n)).apnsID) == assigned)
    }
}
