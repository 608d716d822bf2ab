/// When a client may open its next connection after APNs (or the network) refused the last
/// ones: a pure value, so the rule is tested with made-up times (Tests/PushCoreTests).
///
/// A *failure* is any persistent, connection-level refusal: a credential rejection
/// (ExpiredProviderToken, InvalidProviderToken, BadCertificate, ... — the reasons table's
/// `token` and `refused` classes and TooManyProviderTokenUpdates), a TLS handshake failure, a
/// TCP connect that fails, or a connection that closes before its first answer. Only an
/// accepted notification (`succeeded`) ends the back-off: a connection that merely comes up is
/// not proof that the next request will be accepted.
///
/// The rule (the README's "Reliability" section quotes it):
/// - After `n` failures in a row the next attempt waits a delay drawn uniformly from
///   `[d/2, d)`, with `d = min(first · 2^(n-1), max)` (defaults 1 s and 60 s). The jitter keeps
///   a fleet of clients from reconnecting in step.
/// - While backing off, one attempt at a time (the *probe*): the other pool positions open
///   only once a notification is accepted again, so a pool of 64 connections probes like a
///   pool of one.
/// - Failures of connections that were started before the last counted failure belong to the
///   same episode and do not double the delay again (two connections refused together count
///   once).
///
/// So with the defaults a client whose pool has N positions opens at most N + 5 connections in
/// its first 30 s of refusals (the N it starts with, then probes no sooner than 0.5, 1.5, 3.5,
/// 7.5 and 15.5 s in), N + 6 in its first minute, and at most 2 a minute once the delay has
/// reached its cap (after about two minutes).
public struct ReconnectBackoff: Sendable, Equatable {
    /// The first delay (`d` after one failure).
    public let firstDelayNanos: UInt64
    /// The largest `d`.
    public let maxDelayNanos: UInt64
    /// Failures since the last accepted notification.
    public private(set) var failures = 0
    /// No attempt before this time (monotonic ns) while backing off.
    public private(set) var nextAttemptNanos: UInt64 = 0
    /// When the last counted failure happened (monotonic ns).
    public private(set) var lastFailureNanos: UInt64 = 0
    /// An attempt made while backing off has not failed or succeeded yet.
    public private(set) var probeInProgress = false

    /// Defaults: 1 s first, 60 s cap.
    public static let defaultFirstDelayMillis = 1000
    public static let defaultMaxDelayMillis = 60_000

    public init(firstDelayMillis: Int = Self.defaultFirstDelayMillis, maxDelayMillis: Int = Self.defaultMaxDelayMillis) {
        let first = UInt64(max(firstDelayMillis, 1)) * 1_000_000
        firstDelayNanos = first
        maxDelayNanos = max(first, UInt64(max(maxDelayMillis, 1)) * 1_000_000)
    }

    /// True after a failure, until a notification is accepted.
    public var isBackingOff: Bool { failures > 0 }

    /// `d` after `n` failures (no jitter): first · 2^(n-1), at most the cap; 0 for n == 0.
    public func delayBound(afterFailures n: Int) -> UInt64 {
        guard n > 0 else { return 0 }
        let shift = min(n - 1, 40)
        let (d, overflow) = firstDelayNanos.multipliedReportingOverflow(by: UInt64(1) << UInt64(shift))
        return overflow ? maxDelayNanos : min(d, maxDelayNanos)
    }

    /// Whether an attempt may start now.
    public func mayAttempt(now: UInt64) -> Bool {
        failures == 0 || (!probeInProgress && now >= nextAttemptNanos)
    }

    /// What `beginAttempt` allows.
    public enum Attempt: Sendable { case denied, ordinary, probe }

    /// Whether a connection may start now; if so it is counted as started. While backing off
    /// the one attempt allowed is the probe, and only a caller with a use for it (`mayProbe`:
    /// notifications waiting, or a caller in waitUntilConnected) takes it: an idle I/O thread's
    /// probe would never be answered and would hold back the threads that have work.
    public mutating func beginAttempt(now: UInt64, mayProbe: Bool) -> Attempt {
        guard mayAttempt(now: now) else { return .denied }
        if !isBackingOff { return .ordinary }
        guard mayProbe else { return .denied }
        attemptStarted()
        return .probe
    }

    /// An attempt starts (call only when `mayAttempt`): while backing off it is the probe.
    public mutating func attemptStarted() {
        if failures > 0 { probeInProgress = true }
    }

    /// A connection started at `attemptStartedNanos` failed at `now`. `unit` is a uniform
    /// random number in [0, 1) for the jitter. Returns the delay chosen, or nil when the
    /// failure belongs to an episode already counted.
    @discardableResult
    public mutating func failed(now: UInt64, attemptStartedNanos: UInt64, unit: Double) -> UInt64? {
        // The probe always starts after the last failure (a delay after it), so this never
        // drops the probe's. An attempt started at the very instant of the last failure is of
        // the same episode: with a clock that stands still between events (a ManualClock), the
        // pool's connections start and fail at one reading.
        if failures > 0 && attemptStartedNanos <= lastFailureNanos { return nil }
        failures += 1
        probeInProgress = false
        lastFailureNanos = now
        let d = delayBound(afterFailures: failures)
        let jitter = UInt64(Double(d / 2) * min(max(unit, 0), 0.999_999))
        let delay = d / 2 + jitter
        nextAttemptNanos = now + delay
        return delay
    }

    /// The probe ended without failing and without an accepted notification (it answered with
    /// per-notification errors and then closed normally): the next attempt may start at once.
    public mutating func probeEnded() {
        probeInProgress = false
    }

    /// A notification was accepted: the back-off is over.
    public mutating func succeeded() {
        failures = 0
        probeInProgress = false
        nextAttemptNanos = 0
    }
}
