import PushCore
import PushTransport
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// Answers: what a connection's facts mean for the notifications (their outcomes, retries after
/// a back-off measured on the injected clock) and for the connection. In memory.
@Suite("ClientCore: answers, outcomes and retries", .timeLimit(.minutes(1)))
struct ClientCoreAnswersTests {
    static let accepted = ClientCore.Outcome.accepted.rawValue
    static let rejected = ClientCore.Outcome.rejected.rawValue
    static let failed = ClientCore.Outcome.failed.rawValue

    /// One ready connection with room for 100 streams, retries as given.
    func harness(maxAttempts: Int = 3, retryDelayMillis: Int = 100, retireAfterServerErrors: Int = 3) -> (CoreHarness, ConnectionID) {
        var c = ClientConfiguration()
        c.pool.connections = 1
        c.recovery.maxAttempts = maxAttempts
        c.recovery.retryDelayMillis = retryDelayMillis
        c.recovery.retireAfterServerErrors = retireAfterServerErrors
        var h = CoreHarness(configuration: c, unit: 0)
        let id = h.connect(maxStreams: 100)[0]
        return (h, id)
    }

    @Test("A 200 ends ACCEPTED after one attempt, with its latency on the injected clock, and frees its stream")
    func accepted() {
        var (h, id) = harness()
        let n = h.submit(1)[0]
        h.dispatch()
        h.advance(millis: 7)
        h.answer(n, on: id)
        let r = h.result(n)
        #expect(h.finished == [n])
        #expect(r.outcome == Self.accepted && r.status == 200 && r.reason == APNsReason.none && r.attempts == 1)
        #expect(ResultView(h.slot(n)).latencyMicros == 7_000)
        #expect(h.core.outbox.counters.accepted == 1 && h.core.outbox.counters.sent == 1)
        #expect(h.core.queue.inFlightTotal == 0 && h.state(id)?.inFlight == 0)
        #expect(h.core.outbox.latencies.total == 1)
    }

    @Test("An error answer APNs will not change its mind about ends REJECTED with its status and reason, not retried")
    func rejected() {
        var (h, id) = harness()
        let n = h.submit(1)[0]
        h.dispatch()
        h.answer(n, on: id, status: 400, reason: "BadDeviceToken")
        let r = h.result(n)
        #expect(r.outcome == Self.rejected && r.status == 400 && r.reason == .badDeviceToken && r.attempts == 1)
        #expect(h.core.queue.isIdle)
    }

    @Test("A 429 is sent again after its back-off on the injected clock, then ends with the second answer, two attempts counted")
    func retriedAfterBackoff() {
        var (h, id) = harness(retryDelayMillis: 100) // first delay d/2 = 50 ms with unit 0
        let n = h.submit(1)[0]
        h.dispatch()
        h.answer(n, on: id, status: 429, reason: "TooManyRequests")
        #expect(h.finished.isEmpty && h.core.queue.delayed.firstDue == h.now + 50 * CoreHarness.ms)
        #expect(h.core.sleepMillis(now: h.now) <= 50, "the loop wakes for the retry")
        h.advance(millis: 49)
        #expect(h.dispatch().isEmpty, "not before its delay")
        h.advance(millis: 1)
        #expect(h.dispatch() == [id: [n]])
        h.answer(n, on: id)
        let r = h.result(n)
        #expect(r.outcome == Self.accepted && r.attempts == 2)
        #expect(h.core.outbox.counters.resent == 1)
    }

    @Test("A 500 without a body is classified by its status, retried until the budget is spent, then REJECTED with it")
    func serverErrorBudget() {
        var (h, id) = harness(maxAttempts: 2, retryDelayMillis: 10, retireAfterServerErrors: 10)
        let n = h.submit(1)[0]
        h.dispatch()
        h.answer(n, on: id, status: 500)
        #expect(h.finished.isEmpty)
        h.advance(millis: 10)
        #expect(h.dispatch() == [id: [n]])
        h.answer(n, on: id, status: 500)
        let r = h.result(n)
        #expect(h.finished == [n])
        #expect(r.outcome == Self.rejected && r.status == 500 && r.reason == .internalServerError && r.attempts == 2)
        #expect(r.text == "HTTP 500 without a reason")
    }

    @Test("A run of 5xx answers retires the connection; a replacement takes the retries")
    func serverErrorsRetire() {
        var (h, id) = harness(maxAttempts: 3, retryDelayMillis: 10, retireAfterServerErrors: 2)
        let n = h.submit(2)
        h.dispatch()
        h.answer(n[0], on: id, status: 503, reason: "ServiceUnavailable")
        #expect(h.state(id)?.phase == .ready)
        h.answer(n[1], on: id, status: 503, reason: "ServiceUnavailable")
        #expect(h.takeActions().compactMap(\.closes) == [id], "retired with nothing in flight: closed in order")
        h.core.connectionClosed(id, error: nil, now: h.now, actions: &h.actions)
        let new = h.connect(maxStreams: 100)
        #expect(new.count == 1)
        h.advance(millis: 10)
        #expect(h.dispatch() == [new[0]: n])
    }

    @Test("A refused stream is sent again at once, at the front, and the unprocessed write is not counted as an attempt")
    func refusedStream() {
        var (h, id) = harness()
        let n = h.submit(2)
        h.dispatch()
        h.reset(n[1], on: id, errorCode: CoreHarness.refusedStream)
        let waiting = h.submit(1)
        #expect(h.pending == [n[1]] + waiting)
        #expect(h.dispatch() == [id: [n[1]] + waiting])
        h.answer(n[1], on: id)
        #expect(h.result(n[1]).outcome == Self.accepted && h.result(n[1]).attempts == 1)
    }

    @Test("A stream reset without an answer may have been processed: it ends FAILED, never sent twice")
    func resetStream() {
        var (h, id) = harness()
        let n = h.submit(1)[0]
        h.dispatch()
        h.reset(n, on: id, errorCode: CoreHarness.internalError)
        let r = h.result(n)
        #expect(r.outcome == Self.failed && r.reason == .protocolError)
        #expect(r.text.hasPrefix("stream reset by the server"))
        #expect(h.pending.isEmpty && h.core.queue.delayed.isEmpty)
    }

    @Test("A stream's close recorded again, or after the notification ended otherwise, changes nothing")
    func staleClose() {
        var (h, id) = harness()
        let n = h.submit(1)[0]
        h.dispatch()
        let streamID = h.slot(n).pointee.transmission.streamID
        h.answer(n, on: id)
        h.record([.streamClosed(slot: n, streamID: streamID, errorCode: 0)], on: id)
        #expect(h.finished == [n])
        #expect(h.core.outbox.counters.accepted == 1 && h.core.queue.inFlightTotal == 0)
    }

    @Test("An expired provider token retires the connection and the notification waits for a new one, REJECTED at its deadline if none comes")
    func expiredToken() {
        var (h, id) = harness()
        let n = h.submit(1, deadlineMillis: 1_000)[0]
        h.dispatch()
        h.answer(n, on: id, status: 403, reason: "ExpiredProviderToken")
        #expect(h.pending == [n], "waits for a connection with a new token")
        #expect(h.startStreams(on: id).isEmpty, "not on this one")
        #expect(h.takeActions().compactMap(\.closes) == [id])
        h.advance(millis: 1_000)
        h.turn()
        let r = h.result(n)
        #expect(h.finished == [n])
        #expect(r.outcome == Self.rejected && r.status == 403 && r.reason == .expiredProviderToken)
    }

    @Test("A PING's acknowledgement and SETTINGS are taken in order with the answers of the same read")
    func factsInOrder() {
        var (h, id) = harness()
        let n = h.submit(2)
        h.dispatch()
        h.slot(n[0]).pointee.answer.status = 200
        h.slot(n[1]).pointee.answer.status = 200
        h.record([.streamClosed(slot: n[0], streamID: h.slot(n[0]).pointee.transmission.streamID, errorCode: 0),
                  .settings(maxConcurrentStreams: 1),
                  .pingAcknowledged,
                  .streamClosed(slot: n[1], streamID: h.slot(n[1]).pointee.transmission.streamID, errorCode: 0)], on: id)
        #expect(h.finished == n)
        #expect(h.state(id)?.streamLimit == 1 && h.state(id)?.inFlight == 0)
    }
}
