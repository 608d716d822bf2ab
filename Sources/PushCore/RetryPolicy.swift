/// What becomes of a notification after one attempt ends (an answer, a refusal, a timeout, a lost
/// connection): a pure rule (no clock, no randomness of its own), the one every answer path asks
/// (`decide(_:answered:writes:now:deadline:unit:)`), tested with made-up times
/// (Tests/PushCoreTests). The README's "Retry policy" paragraph describes the same rule; what an
/// answer does to its connection is `ConnectionState`'s decision, and the side effects
/// (re-signing the token, backing off) are the client's, not this rule's.
public struct RetryPolicy: Sendable, Equatable {
    /// The most answered attempts (`PUSH_OPT_MAX_ATTEMPTS`).
    public let maxAnsweredAttempts: UInt32
    /// The first retry delay (`PUSH_OPT_RETRY_DELAY_MS`), doubled for each further attempt.
    public let baseDelayNanos: UInt64
    /// The most writes of one notification, whatever happened to them: a bound on resends of
    /// unprocessed writes (REFUSED_STREAM, GOAWAY), which the attempt budget does not count.
    public static let maxWrites: UInt32 = 32

    public init(maxAnsweredAttempts: Int, baseDelayMillis: Int) {
        self.maxAnsweredAttempts = UInt32(max(1, min(maxAnsweredAttempts, Int(UInt32.max))))
        self.baseDelayNanos = UInt64(max(baseDelayMillis, 1)) * 1_000_000
    }

    /// How an attempt ended, as far as the notification is concerned.
    public enum AttemptEnd: Sendable, Equatable {
        /// APNs accepted it (200).
        case accepted
        /// An error answer with this reason.
        case rejected(APNsReason)
        /// The server never processed it: refused with REFUSED_STREAM, or above a GOAWAY's
        /// last-stream-id (RFC 9113 §8.7, §6.8); safe to send again.
        case unprocessed
        /// No answer, and the server may have processed it (a reset stream, a deadline passed, a
        /// lost connection): never sent again, or it might arrive twice.
        case unanswered
    }

    /// The decision.
    public enum Decision: Sendable, Equatable {
        /// Final: ACCEPTED.
        case accept
        /// Final: REJECTED with this answer.
        case reject
        /// Final: FAILED (no answer, or never processed with no write or time left to resend).
        case fail
        /// Send again at once, on any connection: the server never processed it, so the attempt
        /// budget is not spent (only the bound on writes, `maxWrites`).
        case resend
        /// Send again after this many nanoseconds (429, 5xx).
        case retryAfter(UInt64)
        /// Send again on another connection as soon as there is one (expired token, a connection
        /// APNs will not use any more).
        case resendOnNewConnection
    }

    /// The decision after an attempt ended with `end`, after `answered` answered attempts (this
    /// one included when answered) and `writes` writes, at `now`, due by `deadline` (monotonic
    /// ns). `unit` in [0, 1) draws the jitter (read only for error answers). Inlinable so that the
    /// accepted case costs nothing on the hot path.
    @inlinable
    public func decide(_ end: AttemptEnd, answered: UInt32, writes: UInt32, now: UInt64, deadline: UInt64,
                       unit: @autoclosure () -> Double) -> Decision {
        switch end {
        case .accepted:
            return .accept
        case .rejected(let reason):
            return decide(reason: reason, answered: answered, writes: writes, now: now, deadline: deadline, unit: unit())
        case .unprocessed:
            return writes < Self.maxWrites && now < deadline ? .resend : .fail
        case .unanswered:
            return .fail
        }
    }

    /// The decision for a notification answered with `reason`, after `answered` answered
    /// attempts (this one included) and `writes` writes, at `now`, due by `deadline` (monotonic
    /// ns). `unit` in [0, 1) draws the jitter.
    public func decide(reason: APNsReason, answered: UInt32, writes: UInt32, now: UInt64, deadline: UInt64, unit: Double) -> Decision {
        let budgetLeft = answered < maxAnsweredAttempts && writes < Self.maxWrites
        switch reason.retryClass {
        case .later, .backoff:
            let delay = self.delay(afterAnswered: answered, unit: unit)
            return budgetLeft && now + delay < deadline ? .retryAfter(delay) : .reject
        case .token:
            // A token APNs calls expired is retried with a new one until the deadline: the
            // attempt budget is for server trouble, not for a clock being fixed.
            return writes < Self.maxWrites && now < deadline ? .resendOnNewConnection : .reject
        case .connection:
            return budgetLeft ? .resendOnNewConnection : .reject
        case .never, .refused, .unknown, .local:
            return .reject
        }
    }

    /// The delay before a retry after `answered` answered attempts: `d = base × 2^(answered-1)`,
    /// jittered into [d/2, d) so retries of many notifications don't arrive together.
    public func delay(afterAnswered answered: UInt32, unit: Double) -> UInt64 {
        let shift = UInt64(min(max(Int(answered) - 1, 0), 16))
        let d = baseDelayNanos << shift
        return d / 2 + UInt64(Double(d / 2) * min(max(unit, 0), 0.999_999))
    }
}
