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
    /// Ends a queued notification whose deadline has passed. One that was answered before and
    /// waits to be resent (a 429/5xx retry, an expired token waiting for a new connection) ends
    /// REJECTED with that answer; one never answered ends FAILED QueueTimeout, naming the last
    /// connection error.
    func expireQueued(_ index: Int32) {
        let slot = slots[index]
        if slot.pointee.answer.status != 0, let reason = APNsReason(rawValue: slot.pointee.answer.reason), reason != .none {
            let text = (reason == .expiredProviderToken ? queue.clockSuspectText : nil)
                ?? "deadline reached while waiting to retry (last answer: \(reason.text))"
            complete(index, outcome: .rejected, status: slot.pointee.answer.status, reason: reason, text: text)
            return
        }
        // The clock's text alone: with a prefix it would not fit the result's 127 bytes.
        let text = queue.clockSuspectText
            ?? handoff.withLock { $0.lastConnectionError }.map { "not sent within the deadline; last connection error: \($0.description)" }
        complete(index, outcome: .failed, status: 0, reason: .queueTimeout, text: text ?? "not sent within the deadline")
    }

    /// Ends what is past its deadline: queued (QueueTimeout), waiting to retry (REJECTED with
    /// the last answer), in flight (reset, Timeout); closes connection attempts that take too long.
    func scanDeadlines(now: UInt64) {
        let timers = self.timers
        // Queued notifications whose deadline passed: never sent, or waiting to be resent.
        // Walked only when one may have (the list's lower bound); rebuilding it makes the
        // bound exact again.
        if ClientTimers.isDue(queue.pending.earliestDeadline, now: now) {
            var kept = SlotList()
            while true {
                let index = queue.pending.popFirst(in: slots)
                if index < 0 { break }
                if ClientTimers.isDue(slots[index].pointee.request.deadlineNanos, now: now) {
                    expireQueued(index)
                } else {
                    kept.append(index, in: slots)
                }
            }
            queue.pending = kept
        }
        // (Delayed retries need no scan: one is delayed only when it is due before its deadline.)
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
                    queue.inFlightTotal -= 1
                    conn.cancel(streamID: slot.pointee.transmission.streamID)
                    settle(index, slot, after: .unanswered, status: 0, reason: .timeout, text: "no answer within the deadline", now: now)
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
