#if canImport(Glibc)
import Glibc
#endif
import PushClientMachine
import PushCore

/// The reconnect back-off of one client as the driver keeps it, shared by a group's I/O threads
/// (a PushClientGroup): APNs refuses credentials per client, so one schedule keeps a client of
/// many threads to the bound of one. The core decides with its own `ReconnectBackoff` value and
/// reports each change (`ClientCore.Action.backoff`); the driver makes it here (`apply`) and, in
/// a group, hands the shared value back to its core between turns. The lock is the driver's:
/// the core never reaches it. Also what other threads read (the tests, through `PushClient`).
package final class ReconnectSchedule: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var backoff: ReconnectBackoff

    package init(firstDelayMillis: Int, maxDelayMillis: Int) {
        backoff = ReconnectBackoff(firstDelayMillis: firstDelayMillis, maxDelayMillis: maxDelayMillis)
    }

    /// The back-off as it stands.
    package var value: ReconnectBackoff { lock.withLock { backoff } }

    /// Makes the core's change `step` at `now`; false for a probe refused (another thread
    /// holds it).
    package func apply(_ step: BackoffStep, now: UInt64) -> Bool {
        lock.withLock { backoff.apply(step, now: now) }
    }

    /// Failures since the last accepted notification.
    package var failures: Int { lock.withLock { backoff.failures } }

    /// When the next attempt may start (0 when not backing off).
    package var nextAttemptNanos: UInt64 { lock.withLock { backoff.isBackingOff ? backoff.nextAttemptNanos : 0 } }

    /// Whether the client is backing off.
    package var isBackingOff: Bool { lock.withLock { backoff.isBackingOff } }
}
