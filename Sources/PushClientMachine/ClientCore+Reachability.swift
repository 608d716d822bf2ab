import PushCore

/// Fail-fast when APNs cannot be reached (`PUSH_OPT_UNREACHABLE_AFTER_MS`): once no connection
/// could be made for that long (every attempt failing, none ready), what waits to be sent and
/// what is sent from then on ends at once FAILED Unreachable, naming the last connection error,
/// instead of waiting out its deadline (60 s by default) to end QueueTimeout. Attempts go on at
/// the back-off's pace, unchanged (the probe is taken as if notifications waited, so a client
/// that fails everything at once still finds out when APNs is back); the first connection made
/// ends it.
///
/// The clock starts at the start of the first failed attempt made while no connection was
/// ready: a refused port starts it at once, a black hole when its attempt times out (already
/// past the limit if the connect timeout is longer). Looked at every turn: the loop turns at
/// least every scan interval (50 ms), which bounds how late the limit is noticed. Written only
/// by the I/O thread.
package struct Reachability {
    /// When the first attempt of the current run of failures started; nil while a connection
    /// is ready, or none failed since the last one was.
    package var failingSinceNanos: UInt64?
    /// The limit passed: notifications end Unreachable until a connection is made.
    package var isUnreachable = false
}

extension ClientCore {
    /// A connection attempt that started at `startedNanos` failed.
    package mutating func noteAttemptFailed(startedNanos: UInt64) {
        if pool.readyCount == 0 && reachability.failingSinceNanos == nil {
            reachability.failingSinceNanos = startedNanos
        }
    }

    /// A connection became ready: sending resumes.
    mutating func noteConnectionReady() {
        reachability.failingSinceNanos = nil
        if reachability.isUnreachable {
            reachability.isUnreachable = false
            log(.info, .reachable, "a connection to \(endpointText) was made: notifications are sent again")
        }
    }

    /// At each turn: whether the limit has passed at `now` (logged once when it does), and if
    /// so every queued notification never answered ends Unreachable. Those waiting out a retry
    /// delay keep their timer (they were answered, and end with that answer at their deadline).
    mutating func failIfUnreachable(now: UInt64) {
        let limit = configuration.recovery.unreachableAfterMillis
        guard limit > 0, let since = reachability.failingSinceNanos else { return }
        if !reachability.isUnreachable {
            guard now >= since &+ UInt64(limit) * 1_000_000 else { return }
            reachability.isUnreachable = true
            log(.error, .unreachable, "no connection to \(endpointText) could be made for \(limit) ms"
                + (lastConnectionError.map { " (last error: \($0.description))" } ?? "")
                + "; notifications end Unreachable until one is made")
        }
        guard !queue.pending.isEmpty else { return }
        let text = "APNs unreachable for \(limit) ms: " + (lastConnectionError?.description ?? "no connection could be made")
        failPending(reason: .unreachable, text: text, now: now)
    }
}
