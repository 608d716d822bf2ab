import PushCore
import PushTransport
import Testing
@testable import PushClientCore
@testable import PushClientMachine

/// What `ClientCore` does with a notification when an attempt ends, and with notifications that
/// wait: retries after a back-off, resends, final outcomes, queue deadlines. In memory, with a
/// clock the test moves.
@Suite("ClientCore: settling attempts, retries and queue deadlines", .timeLimit(.minutes(1)))
struct ClientCoreRetryTests {
    /// The notification in `index` as after one write answered with `status`.
    func answered(_ h: CoreHarness, _ index: Int32, status: Int32, writes: UInt32 = 1, answered: UInt32 = 1) {
        h.slot(index).pointee.transmission.attempts = writes
        h.slot(index).pointee.transmission.answeredAttempts = answered
        h.slot(index).pointee.answer.status = status
    }

    @Test("A 429 waits out its back-off in the retry heap, then goes to the front of the queue, within its deadline")
    func tooManyRequestsWaitsOutItsBackoff() {
        var h = CoreHarness(maxAttempts: 3, retryDelayMillis: 100, unit: 0) // delay d/2 = 50 ms
        let other = h.notification()
        h.core.queue.pending.append(other, in: h.slots)
        let n = h.notification(deadlineMillis: 1_000)
        answered(h, n, status: 429)
        h.core.settle(n, h.slot(n), after: .rejected(.tooManyRequests), status: 429, reason: .tooManyRequests, text: "429", now: h.now)
        #expect(h.finished.isEmpty, "a 429 within its budget and deadline is not final")
        #expect(h.core.queue.delayed.firstDue == h.now + 50 * CoreHarness.ms)
        #expect(h.core.outbox.counters.resent == 1)
        h.advance(millis: 49)
        h.core.releaseDelayed(now: h.now)
        #expect(h.pending == [other], "not before its delay")
        h.advance(millis: 1)
        h.core.releaseDelayed(now: h.now)
        #expect(h.pending == [n, other], "due: at the front, before what waited for its first stream")
        #expect(h.core.queue.delayed.isEmpty)
    }

    @Test("A 429 whose back-off would end after its deadline is REJECTED at once with the answer")
    func tooManyRequestsPastTheDeadline() {
        var h = CoreHarness(maxAttempts: 3, retryDelayMillis: 1_000, unit: 0) // delay 500 ms
        let n = h.notification(deadlineMillis: 400)
        answered(h, n, status: 429)
        h.core.settle(n, h.slot(n), after: .rejected(.tooManyRequests), status: 429, reason: .tooManyRequests, text: "TooManyRequests", now: h.now)
        #expect(h.finished == [n])
        let r = h.result(n)
        #expect(r.outcome == ClientCore.Outcome.rejected.rawValue && r.status == 429 && r.reason == .tooManyRequests)
        #expect(r.text == "TooManyRequests")
        #expect(h.core.queue.delayed.isEmpty)
    }

    @Test("The last answered attempt the budget allows ends REJECTED, naming the answer")
    func budgetSpent() {
        var h = CoreHarness(maxAttempts: 2)
        let n = h.notification()
        answered(h, n, status: 503, writes: 2, answered: 2)
        h.core.settle(n, h.slot(n), after: .rejected(.serviceUnavailable), status: 503, reason: .serviceUnavailable, text: "ServiceUnavailable", now: h.now)
        #expect(h.finished == [n])
        #expect(h.result(n).outcome == ClientCore.Outcome.rejected.rawValue && h.result(n).reason == .serviceUnavailable)
    }

    @Test("A write the server never processed goes to the front of the queue at once and is left out of the result's attempts")
    func unprocessedIsResent() {
        var h = CoreHarness()
        let waiting = h.notification()
        h.core.queue.pending.append(waiting, in: h.slots)
        let n = h.notification()
        answered(h, n, status: 0, writes: 1, answered: 0)
        h.slot(n).pointee.transmission.streamID = 7
        h.core.settle(n, h.slot(n), after: .unprocessed, status: 0, reason: .protocolError, text: "refused", now: h.now)
        #expect(h.pending == [n, waiting])
        #expect(h.slot(n).pointee.transmission.streamID == 0, "no stream until it is sent again")
        #expect(h.slot(n).pointee.transmission.unprocessedWrites == 1)
        // Sent again and accepted: one attempt, as the server saw it.
        _ = h.core.queue.pending.popFirst(in: h.slots)
        h.slot(n).pointee.transmission.attempts = 2
        h.core.settle(n, h.slot(n), after: .accepted, status: 200, reason: .none, text: nil, now: h.now)
        #expect(h.finished == [n] && h.result(n).attempts == 1)
    }

    @Test("An unanswered attempt that the server may have processed ends FAILED with its reason, never sent twice")
    func unansweredFails() {
        var h = CoreHarness()
        let n = h.notification()
        answered(h, n, status: 0, writes: 1, answered: 0)
        h.core.settle(n, h.slot(n), after: .unanswered, status: 0, reason: .connectionLost, text: "connection lost", now: h.now)
        #expect(h.finished == [n] && h.pending.isEmpty)
        let r = h.result(n)
        #expect(r.outcome == ClientCore.Outcome.failed.rawValue && r.reason == .connectionLost && r.text == "connection lost")
    }

    @Test("Queued notifications past their deadline end: never sent, FAILED QueueTimeout naming the last connection error; answered before, REJECTED with that answer")
    func queueDeadlines() {
        var h = CoreHarness()
        let early = h.notification(deadlineMillis: 100)
        let retried = h.notification(deadlineMillis: 100)
        let late = h.notification(deadlineMillis: 1_000)
        answered(h, retried, status: 503)
        h.slot(retried).pointee.answer.reason = APNsReason.serviceUnavailable.rawValue
        for n in [early, retried, late] { h.core.queue.pending.append(n, in: h.slots) }
        h.core.lastConnectionError = TransportError(.connect, "connect: Connection refused")
        h.advance(millis: 99)
        h.core.expirePending(now: h.now)
        #expect(h.finished.isEmpty && h.pending == [early, retried, late])
        h.advance(millis: 1)
        h.core.expirePending(now: h.now)
        #expect(h.finished == [early, retried] && h.pending == [late])
        #expect(h.result(early).outcome == ClientCore.Outcome.failed.rawValue && h.result(early).reason == .queueTimeout)
        #expect(h.result(early).text == "not sent within the deadline; last connection error: connect: Connection refused")
        #expect(h.result(retried).outcome == ClientCore.Outcome.rejected.rawValue && h.result(retried).status == 503)
        #expect(h.result(retried).reason == .serviceUnavailable)
        #expect(h.core.queue.pending.earliestDeadline == h.slot(late).pointee.request.deadlineNanos, "the bound is exact again")
    }

    @Test("A result always carries an apns-id: one never sent gets one when it ends")
    func neverSentGetsAnApnsId() {
        var h = CoreHarness()
        let n = h.notification(deadlineMillis: 1)
        h.core.queue.pending.append(n, in: h.slots)
        h.advance(millis: 1)
        h.core.expirePending(now: h.now)
        let id = String(decoding: ResultView(h.slot(n)).apnsID, as: UTF8.self)
        #expect(id.count == 36 && id.filter { $0 == "-" }.count == 4)
    }
}
