import PushCore

/// The reconnect back-off as the core keeps it: a `ReconnectBackoff` value it decides with,
/// each change also reported as an action (`.backoff`) for the client's schedule, and the
/// driver's two reports about a group's shared schedule.
extension ClientCore {
    /// An attempt started at `startedNanos` failed: the back-off counts it, with the jitter drawn
    /// from `random`. Returns the delay before the next attempt, or nil when the failure belongs
    /// to an episode already counted.
    mutating func backoffFailed(startedNanos: UInt64, now: UInt64) -> UInt64? {
        let unit = random.unit()
        let delay = backoff.failed(now: now, attemptStartedNanos: startedNanos, unit: unit)
        if delay != nil { act(.backoff(.failed(now: now, startedNanos: startedNanos, unit: unit))) }
        return delay
    }

    /// A notification was accepted: the back-off is over (said even when this core's value shows
    /// none: another thread of a group may be backing off).
    mutating func backoffSucceeded() {
        backoff.succeeded()
        act(.backoff(.succeeded))
    }

    /// The probe ended without failing and without an accepted notification.
    mutating func endProbe() {
        backoff.probeEnded()
        act(.backoff(.probeEnded))
    }

    /// The client's shared schedule as it stands (a group's threads share one): the core decides
    /// with it from now on. One that is backing off makes the next accepted notification end it.
    ///
    /// Why only a probe is checked against the shared schedule as it starts (`.backoff(.probeStarted)`)
    /// and an ordinary attempt is not: an ordinary attempt is made only while the value adopted at
    /// the turn's start is not backing off, and once the shared schedule counts an episode's first
    /// failure every later turn of every thread adopts a value that is (until an accepted
    /// notification ends the episode). So each pool position makes at most one ordinary attempt
    /// per episode, as with one thread. Another thread's first failure landing between this
    /// adoption and `maintainPool` (the same turn) lets this thread's empty positions open once,
    /// as they would have a moment earlier: never more connections than positions, none repeated.
    /// (One of them failing counts as a further failure, having started after the first: the
    /// delay grows a step sooner, and if a probe was out, one more may start before it ends.)
    package mutating func adoptBackoff(_ shared: ReconnectBackoff) {
        backoff = shared
        if shared.isBackingOff { pool.mayBeBackingOff = true }
    }

    /// The shared schedule refused connection `id`'s probe (`.backoff(.probeStarted)`): another
    /// thread of the group holds it. The connection is dropped before it starts (its `.connect`
    /// is then skipped) and counts as nothing.
    package mutating func probeRefused(_ id: ConnectionID) {
        guard let e = pool.entry(id) else { return }
        pool.remove(e)
        pool.mayBeBackingOff = true
    }

    /// Whether connection `id` is still the core's (an action for one that is gone is skipped).
    package func holds(_ id: ConnectionID) -> Bool { pool.entry(id) != nil }
}
