import PushCore

/// What to do with the result the client gave for one send: record it as final, send again
/// later, or park the entry in the delayed-retry set. Pure (time and counts are arguments), so
/// each rule has a unit test.
public struct ResultPolicy: Sendable {
    /// What to do with a result whose request may have reached APNs (Timeout, ConnectionLost,
    /// ProtocolError after the request was written).
    public enum UnknownResults: String, Sendable {
        /// Send again (at-least-once; the device may get it twice: apns-collapse-id makes the
        /// second replace the first). The default.
        case resend
        /// Record FAILED with `maybe_delivered` (at-most-once).
        case record
    }

    /// The decision for one result.
    public enum Decision: Sendable, Equatable {
        /// Final: record the outcome and acknowledge.
        case record
        /// Send again after this many milliseconds (kept in memory; the entry stays pending).
        case resend(afterMillis: Int)
        /// Move to the delayed-retry set, due at this UNIX time in milliseconds.
        case delay(untilMillis: Int64)
        /// Do nothing: the entry stays pending for another delivery (our own shutdown cancelled it).
        case leavePending
    }

    /// Unknown results: resend or record.
    public var unknownResults: UnknownResults = .resend
    /// Sends of one delivery (each may be several requests inside the client) before a
    /// transport failure becomes final.
    public var maxSends = 3
    /// Trips through the delayed-retry set before a 429 becomes final.
    public var maxDelayedRetries = 5
    /// First delayed-retry wait for a 429, doubled per trip.
    public var delayedRetryMillis = 60_000
    /// Wait before resending after a transport failure, doubled per send.
    public var resendDelayMillis = 500

    /// The default policy.
    public init() {}

    /// The decision for a result with `reason` (`APNsReason.none` when accepted) after `sends`
    /// sends of this delivery and `retries` delayed retries; `notAfter` in UNIX seconds.
    public func decide(outcome: OutcomeRecord.Kind, reason: APNsReason, sends: Int, retries: Int,
                       notAfter: Int64?, nowMillis: Int64, stopping: Bool) -> Decision {
        if outcome == .accepted { return .record }
        if stopping && (reason == .cancelled || reason == .cancelledInFlight) { return .leavePending }
        let deadline = notAfter.map { $0 * 1000 } ?? Int64.max
        switch reason.retryClass {
        case .later where outcome == .rejected:
            guard retries < maxDelayedRetries else { return .record }
            let due = nowMillis + Int64(delayedRetryMillis) << Int64(min(retries, 20))
            return due < deadline ? .delay(untilMillis: due) : .record
        case .unknown where unknownResults == .record:
            return .record
        case .unknown, .local, .connection:
            guard outcome == .failed, sends < maxSends, !stopping else { return stopping && outcome == .failed ? .leavePending : .record }
            let wait = resendDelayMillis << min(sends - 1, 10)
            return nowMillis + Int64(wait) < deadline ? .resend(afterMillis: wait) : .record
        default:
            return .record
        }
    }
}
