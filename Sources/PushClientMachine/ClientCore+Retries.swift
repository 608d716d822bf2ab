import PushCore

/// What becomes of a notification when one attempt ends, and the retries that wait.
extension ClientCore {
    /// Ends one attempt of the notification in `index`: `RetryPolicy` decides what becomes of it
    /// (the one rule for every answer path: accepted, an error answer, refused, reset, timed
    /// out, its connection lost), and this carries the decision out in one place: the outcome,
    /// or the list it waits in to be sent again. `status`, `reason` and `text` are the outcome's
    /// when the decision is final (an error answer's, or why it FAILED); `text` is built only then.
    package mutating func settle(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, after end: RetryPolicy.AttemptEnd, status: Int32,
                         reason: APNsReason, text: @autoclosure () -> String?, now: UInt64) {
        let decision = retryPolicy.decide(end, answered: slot.pointee.transmission.answeredAttempts, writes: slot.pointee.transmission.attempts,
                                          now: now, deadline: slot.pointee.request.deadlineNanos, unit: random.unit())
        switch decision {
        case .accept:
            complete(index, outcome: .accepted, status: 200, reason: .none, text: nil, now: now)
        case .reject:
            complete(index, outcome: .rejected, status: status, reason: reason, text: text(), now: now)
        case .fail:
            complete(index, outcome: .failed, status: 0, reason: reason, text: text(), now: now)
        case .retryAfter(let delay):
            outbox.counters.resent += 1
            slot.pointee.answer.reason = reason.rawValue
            queue.delayed.insert(index, at: now + delay)
        case .resendOnNewConnection:
            // Waits in the queue (status and reason kept: at its deadline it ends REJECTED with
            // this answer, see expireQueued).
            slot.pointee.answer.reason = reason.rawValue
            requeue(index, slot, processed: true)
        case .resend:
            requeue(index, slot, processed: false)
        }
    }

    /// Moves delayed retries whose time has come to the front of the queue (the heap is in due
    /// order, so this stops at the first one not due).
    package mutating func releaseDelayed(now: UInt64) {
        var ready = SlotList()
        while let first = queue.delayed.firstDue, first <= now {
            ready.append(queue.delayed.popFirst(), in: slots)
        }
        if ready.isEmpty { return }
        ready.splice(&queue.pending, in: slots)
        queue.pending = ready
    }
}
