import Testing
import PushCore

/// The retry rule as a pure function: made-up times, given jitter.
@Suite("Retry policy", .timeLimit(.minutes(1)))
struct RetryPolicyTests {
    static let ms: UInt64 = 1_000_000
    let policy = RetryPolicy(maxAnsweredAttempts: 4, baseDelayMillis: 100)

    @Test("429 and 5xx are retried after [d/2, d), d doubling per answered attempt, while the budget and the deadline allow")
    func delayedRetries() {
        for reason in [APNsReason.tooManyRequests, .internalServerError, .serviceUnavailable] {
            #expect(policy.decide(reason: reason, answered: 1, writes: 1, now: 0, deadline: 10_000 * Self.ms, unit: 0) == .retryAfter(50 * Self.ms))
            #expect(policy.decide(reason: reason, answered: 2, writes: 2, now: 0, deadline: 10_000 * Self.ms, unit: 0) == .retryAfter(100 * Self.ms))
            #expect(policy.decide(reason: reason, answered: 3, writes: 3, now: 0, deadline: 10_000 * Self.ms, unit: 0.5) == .retryAfter(300 * Self.ms))
            // The budget: the fourth answered attempt is the last.
            #expect(policy.decide(reason: reason, answered: 4, writes: 4, now: 0, deadline: 10_000 * Self.ms, unit: 0) == .reject)
            // The deadline: a retry that could not go out before it is not scheduled.
            #expect(policy.decide(reason: reason, answered: 1, writes: 1, now: 0, deadline: 50 * Self.ms, unit: 0) == .reject)
            #expect(policy.decide(reason: reason, answered: 1, writes: 1, now: 0, deadline: 50 * Self.ms + 1, unit: 0) == .retryAfter(50 * Self.ms))
        }
    }

    @Test("Jitter stays in [d/2, d) and the delay stops doubling after 16 attempts", arguments: [0.0, 0.3, 0.999999, 1.0, -1.0])
    func jitterBounds(unit: Double) {
        for answered in UInt32(1)...UInt32(20) {
            let d = (100 * Self.ms) << UInt64(min(Int(answered) - 1, 16))
            let delay = policy.delay(afterAnswered: answered, unit: unit)
            #expect(delay >= d / 2 && delay < d, "\(answered): \(delay)")
        }
    }

    @Test("An expired token is resent on a new connection until the deadline, whatever the attempt budget")
    func expiredToken() {
        #expect(policy.decide(reason: .expiredProviderToken, answered: 9, writes: 9, now: 0, deadline: 1, unit: 0) == .resendOnNewConnection)
        #expect(policy.decide(reason: .expiredProviderToken, answered: 1, writes: 1, now: 1, deadline: 1, unit: 0) == .reject)
        #expect(policy.decide(reason: .expiredProviderToken, answered: 1, writes: RetryPolicy.maxWrites, now: 0, deadline: 1, unit: 0) == .reject)
    }

    @Test("A connection APNs will not use is left for another within the budget")
    func connectionClass() {
        for reason in [APNsReason.tooManyProviderTokenUpdates, .idleTimeout] {
            #expect(policy.decide(reason: reason, answered: 3, writes: 3, now: 0, deadline: 1, unit: 0) == .resendOnNewConnection)
            #expect(policy.decide(reason: reason, answered: 4, writes: 4, now: 0, deadline: 1, unit: 0) == .reject)
        }
    }

    @Test("Permanent answers and refused credentials are final at once", arguments: [
        APNsReason.badDeviceToken, .unregistered, .payloadTooLarge, .topicDisallowed, .invalidProviderToken,
        .badCertificate, .missingProviderToken,
    ])
    func permanent(reason: APNsReason) {
        #expect(policy.decide(reason: reason, answered: 1, writes: 1, now: 0, deadline: .max, unit: 0) == .reject)
    }

    @Test("One attempt means no retries; absurd settings are clamped")
    func limits() {
        let once = RetryPolicy(maxAnsweredAttempts: 1, baseDelayMillis: 100)
        #expect(once.decide(reason: .serviceUnavailable, answered: 1, writes: 1, now: 0, deadline: .max, unit: 0) == .reject)
        #expect(RetryPolicy(maxAnsweredAttempts: 0, baseDelayMillis: 0) == RetryPolicy(maxAnsweredAttempts: 1, baseDelayMillis: 1))
    }

    // MARK: Every way an attempt ends

    @Test("An accepted attempt is final, whatever the budget, the writes and the deadline")
    func acceptedIsFinal() {
        #expect(policy.decide(.accepted, answered: 1, writes: 1, now: 0, deadline: .max, unit: 0) == .accept)
        #expect(policy.decide(.accepted, answered: 9, writes: RetryPolicy.maxWrites, now: 5, deadline: 1, unit: 0) == .accept)
    }

    @Test("An error answer through the one entry point decides as decide(reason:) does")
    func rejectedSameAsReason() {
        for reason in [APNsReason.tooManyRequests, .serviceUnavailable, .expiredProviderToken, .idleTimeout, .badDeviceToken] {
            for (answered, now) in [(UInt32(1), UInt64(0)), (4, 0), (1, 10_000 * Self.ms)] {
                #expect(policy.decide(.rejected(reason), answered: answered, writes: answered, now: now, deadline: 1_000 * Self.ms, unit: 0.25)
                        == policy.decide(reason: reason, answered: answered, writes: answered, now: now, deadline: 1_000 * Self.ms, unit: 0.25))
            }
        }
    }

    @Test("An unprocessed write (REFUSED_STREAM, above a GOAWAY's last-stream-id) is resent within the writes bound and the deadline, budget or not")
    func unprocessedResent() {
        #expect(policy.decide(.unprocessed, answered: 9, writes: 1, now: 0, deadline: 1, unit: 0) == .resend)
        #expect(policy.decide(.unprocessed, answered: 0, writes: RetryPolicy.maxWrites - 1, now: 0, deadline: 1, unit: 0) == .resend)
        #expect(policy.decide(.unprocessed, answered: 0, writes: RetryPolicy.maxWrites, now: 0, deadline: 1, unit: 0) == .fail)
        #expect(policy.decide(.unprocessed, answered: 0, writes: 1, now: 1, deadline: 1, unit: 0) == .fail, "deadline reached")
    }

    @Test("An attempt with no answer that may have been processed (reset, timed out, connection lost) is never resent")
    func unansweredFails() {
        #expect(policy.decide(.unanswered, answered: 0, writes: 1, now: 0, deadline: .max, unit: 0) == .fail)
    }

    @Test("The jitter is drawn only for error answers")
    func jitterDrawnOnlyWhenRejected() {
        var draws = 0
        func unit() -> Double { draws += 1; return 0 }
        _ = policy.decide(.accepted, answered: 1, writes: 1, now: 0, deadline: .max, unit: unit())
        _ = policy.decide(.unprocessed, answered: 0, writes: 1, now: 0, deadline: .max, unit: unit())
        _ = policy.decide(.unanswered, answered: 0, writes: 1, now: 0, deadline: .max, unit: unit())
        #expect(draws == 0)
        _ = policy.decide(.rejected(.serviceUnavailable), answered: 1, writes: 1, now: 0, deadline: .max, unit: unit())
        #expect(draws == 1)
    }
}
