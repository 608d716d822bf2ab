#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// Deadlines: queued and in-flight notifications past theirs, and connection attempts that
/// take too long. On the I/O thread, every scan interval.
extension PushClient {
    /// Ends what is past its deadline: queued (QueueTimeout), waiting to retry (REJECTED with
    /// the last answer), in flight (reset, Timeout); closes connection attempts that take too long.
    func scanDeadlines(now: UInt64) {
        let timers = self.timers
        core.expirePending(now: now)
        // In-flight streams with no answer in time: reset them; the result is unknown.
        for conn in pool.connections.compactMap({ $0 }) + pool.retiring {
            var index = ClientTimers.isDue(conn.inFlightSlots.earliestDeadline, now: now) ? conn.inFlightSlots.head : -1
            if index >= 0 { conn.inFlightSlots.earliestDeadline = .max }
            var expired = false
            while index >= 0 {
                let slot = slots[index]
                let next = slot.pointee.links.next
                if !ClientTimers.isDue(slot.pointee.request.deadlineNanos, now: now) {
                    conn.inFlightSlots.earliestDeadline = min(conn.inFlightSlots.earliestDeadline, slot.pointee.request.deadlineNanos)
                } else {
                    conn.inFlightSlots.unlink(index, slot, in: slots)
                    core.queue.inFlightTotal -= 1
                    conn.cancel(streamID: slot.pointee.transmission.streamID)
                    slot.pointee.transmission.streamID = 0 // a close recorded before the cancel is not its any more
                    core.settle(index, slot, after: .unanswered, status: 0, reason: .timeout, text: "no answer within the deadline", now: now)
                    perform(conn.state.streamTimedOut(), on: conn)
                    expired = true
                }
                index = next
            }
            if expired { conn.flush() }
            // Connection attempts that take too long.
            perform(conn.state.checkConnectTimeout(now: now, timers: timers), on: conn)
        }
    }
}
