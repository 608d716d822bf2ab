#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// The reconnect back-off of one client, shared by its I/O threads (a PushClientGroup): APNs
/// refuses credentials per client, so one schedule keeps a client of many threads to the bound
/// of one (`ReconnectBackoff` holds the rule; this adds the lock and the jitter's randomness).
package final class ReconnectSchedule: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var backoff: ReconnectBackoff

    package init(firstDelayMillis: Int, maxDelayMillis: Int) {
        backoff = ReconnectBackoff(firstDelayMillis: firstDelayMillis, maxDelayMillis: maxDelayMillis)
    }

    /// Whether a connection may start now (without counting one as started).
    package func mayAttempt(now: UInt64) -> Bool {
        lock.withLock { backoff.mayAttempt(now: now) }
    }

    /// What `beginAttempt` allows.
    package enum Attempt { case denied, ordinary, probe }

    /// Whether a connection may start now; if so it is counted as started. While backing off
    /// the one attempt allowed is the probe, and only a thread with a use for it (`mayProbe`:
    /// notifications waiting, or a caller in waitUntilConnected) takes it: an idle thread's
    /// probe would never be answered and would hold back the threads that have work.
    package func beginAttempt(now: UInt64, mayProbe: Bool) -> Attempt {
        lock.withLock {
            guard backoff.mayAttempt(now: now) else { return .denied }
            if !backoff.isBackingOff { return .ordinary }
            guard mayProbe else { return .denied }
            backoff.attemptStarted()
            return .probe
        }
    }

    /// A connection started at `startedNanos` failed (a refusal, see `ReconnectBackoff`).
    /// Returns the delay before the next attempt, or nil when the failure was already counted.
    /// `unit`: the jitter's draw in 0..<1, from the caller's random source (the core's
    /// injectable `unitRandom`: one source for every random choice the client makes).
    @discardableResult
    package func failed(now: UInt64, startedNanos: UInt64, unit: Double) -> UInt64? {
        lock.withLock { backoff.failed(now: now, attemptStartedNanos: startedNanos, unit: unit) }
    }

    /// The probe ended, or became ready with nothing to send, without failing and without an
    /// accepted notification: another attempt may go.
    package func probeEnded() {
        lock.withLock { backoff.probeEnded() }
    }

    /// Failures since the last accepted notification.
    package var failures: Int { lock.withLock { backoff.failures } }

    /// A notification was accepted: reconnect freely again. Cheap when not backing off (called
    /// once per connection, on its first accepted notification).
    package func succeeded() {
        lock.withLock { backoff.succeeded() }
    }

    /// When the next attempt may start (0 when not backing off).
    package var nextAttemptNanos: UInt64 { lock.withLock { backoff.isBackingOff ? backoff.nextAttemptNanos : 0 } }

    /// Whether the client is backing off.
    package var isBackingOff: Bool { lock.withLock { backoff.isBackingOff } }
}
