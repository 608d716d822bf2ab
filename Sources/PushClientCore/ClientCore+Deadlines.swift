import PushCore

/// Deadlines of notifications that wait: queued ones past theirs end here.
extension ClientCore {
    /// Ends a queued notification whose deadline has passed. One that was answered before and
    /// waits to be resent (a 429/5xx retry, an expired token waiting for a new connection) ends
    /// REJECTED with that answer; one never answered ends FAILED QueueTimeout, naming the last
    /// connection error.
    mutating func expireQueued(_ index: Int32, now: UInt64) {
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
    mutating func expirePending(now: UInt64) {
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
