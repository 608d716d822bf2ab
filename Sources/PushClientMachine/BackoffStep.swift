import PushCore

/// A change the core made to its reconnect back-off (`ClientCore.backoff`), handed to the driver
/// as an action (`.backoff`) so that the client's schedule, which a group's I/O threads share
/// (the back-off bound is per client), makes it too. Applied in order to a schedule that saw
/// every step before, a step leaves it equal to the core's value (the jitter's draw travels
/// with the failure); a schedule another thread changed may refuse a probe (`probeStarted`),
/// which the driver reports with `ClientCore.probeRefused`.
package enum BackoffStep: Equatable, Sendable {
    /// Connection `id` starts as the back-off's one attempt (`ReconnectBackoff.beginAttempt`).
    case probeStarted(ConnectionID)
    /// An attempt started at `startedNanos` failed at `now`; `unit` is the jitter's draw
    /// (`ReconnectBackoff.failed`).
    case failed(now: UInt64, startedNanos: UInt64, unit: Double)
    /// The probe ended without failing and without an accepted notification.
    case probeEnded
    /// A notification was accepted: the back-off is over.
    case succeeded
}

extension ReconnectBackoff {
    /// Makes `step` (the core's change) to this back-off. Returns false when it is a probe this
    /// back-off does not allow (another thread of the group holds it, or its delay is not over).
    package mutating func apply(_ step: BackoffStep, now: UInt64) -> Bool {
        switch step {
        case .probeStarted:
            return beginAttempt(now: now, mayProbe: true) != .denied
        case .failed(let at, let startedNanos, let unit):
            failed(now: at, attemptStartedNanos: startedNanos, unit: unit)
        case .probeEnded:
            probeEnded()
        case .succeeded:
            succeeded()
        }
        return true
    }
}
