#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore

/// Deadlines: queued, delayed and in-flight notifications past theirs, and connection
/// attempts that take too long. On the I/O thread, every scan interval.
extension PushClient {
    /// Ends what is past its deadline: queued (QueueTimeout), waiting to retry (REJECTED with
    /// the last answer), in flight (reset, Timeout); closes connection attempts that take too long.
    func scanDeadlines(now: UInt64) {
        // Queued notifications whose deadline passed were never sent.
        var kept = SlotList()
        while true {
            let index = pending.popFirst(in: slots)
            if index < 0 { break }
            if now >= slots[index].pointee.deadlineNanos {
                let text = lock.withLock { lastConnectionError }.map { "not sent within the deadline; last connection error: \($0.description)" }
                complete(index, outcome: .failed, status: 0, reason: .queueTimeout, text: text ?? "not sent within the deadline")
            } else {
                kept.append(index, in: slots)
            }
        }
        pending = kept
        var keptDelayed = SlotList()
        while true {
            let index = delayed.popFirst(in: slots)
            if index < 0 { break }
            let slot = slots[index]
            if now >= slot.pointee.deadlineNanos {
                // Its last answer was a retryable error; the deadline ended the retries.
                complete(index, outcome: .rejected, status: slot.pointee.status, reason: APNsReason(rawValue: slot.pointee.reason) ?? .unknown,
                         text: "deadline reached while waiting to retry")
            } else {
                keptDelayed.append(index, in: slots)
            }
        }
        delayed = keptDelayed
        // In-flight streams with no answer in time: reset them; the result is unknown.
        for conn in pool.compactMap({ $0 }) + retiring {
            var index = conn.inFlightHead
            var expired = false
            while index >= 0 {
                let slot = slots[index]
                let next = slot.pointee.next
                if now >= slot.pointee.deadlineNanos {
                    conn.unlinkInFlight(index, slot)
                    inFlightTotal -= 1
                    conn.cancel(streamID: slot.pointee.streamID)
                    complete(index, outcome: .failed, status: 0, reason: .timeout, text: "no answer within the deadline")
                    let action = conn.state.streamTimedOut()
                    if action != .none { retire(conn, action: action) }
                    expired = true
                }
                index = next
            }
            if expired { conn.flush() }
            // Connection attempts that take too long.
            if conn.phase == .connecting || conn.phase == .handshaking,
               now > conn.startedNanos, now - conn.startedNanos > UInt64(configuration.connectTimeoutMillis) * 1_000_000 {
                conn.close(TransportError(.connect, "connecting to \(configuration.host):\(configuration.port) timed out"))
            }
        }
    }
}
