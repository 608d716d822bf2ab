import PushCore

/// Deadlines: queued and in-flight notifications past theirs, and connection attempts that take
/// too long. Looked at every scan interval (`turn`).
extension ClientCore {
    /// Ends what is past its deadline: queued (QueueTimeout), waiting to retry (REJECTED with
    /// the last answer), in flight (reset, Timeout); gives up on connection attempts that take
    /// too long.
    mutating func scanDeadlines(now: UInt64) {
        expirePending(now: now)
        // In-flight streams with no answer in time: reset them; the result is unknown.
        for e in pool.liveEntries {
            let id = pool.id(e)
            var index = ClientTimers.isDue(pool.entries[e].inFlight.earliestDeadline, now: now) ? pool.entries[e].inFlight.head : -1
            if index >= 0 { pool.entries[e].inFlight.earliestDeadline = .max }
            var expired = false
            while index >= 0 {
                let slot = slots[index]
                let next = slot.pointee.links.next
                if !ClientTimers.isDue(slot.pointee.request.deadlineNanos, now: now) {
                    pool.entries[e].inFlight.earliestDeadline = min(pool.entries[e].inFlight.earliestDeadline, slot.pointee.request.deadlineNanos)
                } else {
                    pool.entries[e].inFlight.unlink(index, slot, in: slots)
                    queue.inFlightTotal -= 1
                    act(.cancelStream(id, streamID: slot.pointee.transmission.streamID))
                    slot.pointee.transmission.streamID = 0 // its close, if recorded meanwhile, is not its any more
                    settle(index, slot, after: .unanswered, status: 0, reason: .timeout, text: "no answer within the deadline", now: now)
                    perform(pool.entries[e].state.streamTimedOut(), on: e)
                    expired = true
                }
                index = next
            }
            if expired { act(.flush(id)) }
            // Connection attempts that take too long.
            perform(pool.entries[e].state.checkConnectTimeout(now: now, timers: timers), on: e)
        }
    }

    /// Ends a queued notification whose deadline has passed. One that was answered before and
    /// waits to be resent (a 429/5xx retry, an expired token waiting for a new connection) ends
    /// REJECTED with that answer; one never answered ends FAILED QueueTimeout, naming the last
    /// connection error.
    package mutating func expireQueued(_ index: Int32, now: UInt64) {
        let slot = slots[index]
        if slot.pointee.answer.status != 0, let reason = APNsReason(rawValue: slot.pointee.answer.reason), reason != .none {
            let text = (reason == .expiredProviderToken ? clockSuspectText : nil)
                ?? "deadline reached while waiting to retry (last answer: \(reason.text))"
            complete(index, outcome: .rejected, status: slot.pointee.answer.status, reason: reason, text: text, now: now)
            return
        }
        // The clock's text alone: with a prefix it would not fit the result's 127 bytes.
        let text = clockSuspectText
            ?? lastConnectionError.map { "not sent within the deadline; last connection error: \($0.description)" }
        complete(index, outcome: .failed, status: 0, reason: .queueTimeout, text: text ?? "not sent within the deadline", now: now)
    }

    /// Ends the queued notifications whose deadline has passed: never sent, or waiting to be
    /// resent. Walked only when one may have (the list's lower bound); rebuilding it makes the
    /// bound exact again. (Delayed retries need no scan: one is delayed only when it is due
    /// before its deadline.)
    package mutating func expirePending(now: UInt64) {
        guard ClientTimers.isDue(queue.pending.earliestDeadline, now: now) else { return }
        var kept = SlotList()
        while true {
            let index = queue.pending.popFirst(in: slots)
            if index < 0 { break }
            if ClientTimers.isDue(slots[index].pointee.request.deadlineNanos, now: now) {
                expireQueued(index, now: now)
            } else {
                kept.append(index, in: slots)
            }
        }
        queue.pending = kept
    }
}
