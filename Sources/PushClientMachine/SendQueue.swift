/// The notifications `ClientCore` holds between taking them from `Handoff.submissions` and
/// ending them (`ResultOutbox`): waiting for a stream, waiting out a retry delay, in flight.
package struct SendQueue {
    /// Waiting for a stream, in order (resends at the front).
    package var pending = SlotList()
    /// Waiting out a retry delay (429/5xx), by due time.
    package var delayed = RetryTimers()
    /// Streams open on all connections (pool and retiring).
    package var inFlightTotal = 0

    /// Nothing waits and nothing is in flight (a closing client may stop).
    package var isIdle: Bool { pending.isEmpty && delayed.isEmpty && inFlightTotal == 0 }
    /// Notifications wait to be sent, now or after a delay.
    package var hasWaiting: Bool { !pending.isEmpty || !delayed.isEmpty }
}
