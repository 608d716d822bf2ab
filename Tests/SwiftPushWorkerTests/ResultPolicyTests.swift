import PushCore
import SwiftPushWorker
import Testing

@Suite("ResultPolicy", .timeLimit(.minutes(1)))
struct ResultPolicyTests {
    let policy = ResultPolicy()
    let now: Int64 = 1_700_000_000_000

    func decide(_ kind: OutcomeRecord.Kind, _ reason: APNsReason, sends: Int = 1, retries: Int = 0,
                notAfter: Int64? = nil, stopping: Bool = false, policy: ResultPolicy? = nil) -> ResultPolicy.Decision {
        (policy ?? self.policy).decide(outcome: kind, reason: reason, sends: sends, retries: retries,
                                       notAfter: notAfter, nowMillis: now, stopping: stopping)
    }

    @Test("Accepted and permanent rejections are recorded at once")
    func final() {
        #expect(decide(.accepted, .none) == .record)
        #expect(decide(.rejected, .unregistered) == .record)
        #expect(decide(.rejected, .badDeviceToken) == .record)
        #expect(decide(.rejected, .internalServerError) == .record) // the client retried 5xx already
    }

    @Test("A 429 goes to the delayed set, doubling per trip, until max_delayed_retries or not_after")
    func tooManyRequests() {
        #expect(decide(.rejected, .tooManyRequests) == .delay(untilMillis: now + 60_000))
        #expect(decide(.rejected, .tooManyRequests, retries: 2) == .delay(untilMillis: now + 240_000))
        #expect(decide(.rejected, .tooManyRequests, retries: 5) == .record)
        #expect(decide(.rejected, .tooManyRequests, notAfter: now / 1000 + 30) == .record)
    }

    @Test("Unknown results are resent by default (with back-off), up to max_sends, then recorded")
    func unknownResend() {
        #expect(decide(.failed, .timeout, sends: 1) == .resend(afterMillis: 500))
        #expect(decide(.failed, .connectionLost, sends: 2) == .resend(afterMillis: 1000))
        #expect(decide(.failed, .timeout, sends: 3) == .record)
    }

    @Test("With unknown_results=record an unknown result is final at once; local failures are still resent")
    func unknownRecord() {
        var p = ResultPolicy()
        p.unknownResults = .record
        #expect(decide(.failed, .timeout, policy: p) == .record)
        #expect(decide(.failed, .connectFailed, policy: p) == .resend(afterMillis: 500))
    }

    @Test("While stopping, cancelled and failed notifications stay pending instead of being recorded")
    func stopping() {
        #expect(decide(.failed, .cancelledInFlight, stopping: true) == .leavePending)
        #expect(decide(.failed, .cancelled, stopping: true) == .leavePending)
        #expect(decide(.failed, .connectFailed, stopping: true) == .leavePending)
        #expect(decide(.accepted, .none, stopping: true) == .record)
    }

    @Test("A resend that would land after not_after is recorded instead")
    func notAfter() {
        #expect(decide(.failed, .timeout, notAfter: now / 1000) == .record)
    }
}
