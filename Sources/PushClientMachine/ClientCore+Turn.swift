import PushCore

/// The I/O loop's turn as the core sees it: notifications handed over, the pool kept filled,
/// delayed retries released, dispatch asked for, and every scan interval deadlines, health and
/// the pool's size; then how long the loop may sleep; and the end of a close.
extension ClientCore {
    /// Notifications senders handed over (`Handoff.submissions`) join the queue. Leaves `list` empty.
    package mutating func take(_ list: inout SlotList) {
        queue.pending.splice(&list, in: slots)
    }

    /// One turn of the I/O loop at `now`. `closing`: `close` was called, with `drainMillis` for
    /// what is left (counted from the first turn that sees it); `callersWaiting`: a caller waits
    /// on the client (`maintainPool`). Asks for the connections to open (`.resolve`,
    /// `.connect`), for streams on every pool connection with room while notifications wait
    /// (`.startStreams`), and, when a scan is due, for the resets, PINGs and closes that
    /// deadlines and health call for.
    mutating func turn(now: UInt64, closing: Bool, drainMillis: Int32, callersWaiting: Bool) {
        if closing && drainDeadline == nil { drainDeadline = now + UInt64(max(drainMillis, 0)) * 1_000_000 }
        if !closing || !queue.isIdle { maintainPool(now: now, callersWaiting: callersWaiting) }
        failIfUnreachable(now: now)
        releaseDelayed(now: now)
        if !queue.pending.isEmpty {
            for case let id? in pool.positions {
                if let e = pool.entry(id), pool.entries[e].state.availableStreams > 0 { act(.startStreams(id)) }
            }
        }
        if ClientTimers.isDue(nextScanNanos, now: now) {
            scanDeadlines(now: now)
            checkHealth(now: now)
            resizePool(now: now)
            outbox.stateChanged = true
            nextScanNanos = now + ClientTimers.scanIntervalNanos
        }
    }

    /// A closing client's drain is over: nothing is left to send or wait for, or its time is up.
    package func drainIsOver(now: UInt64) -> Bool {
        guard let drainDeadline else { return false }
        return queue.isIdle || ClientTimers.isDue(drainDeadline, now: now)
    }

    /// How long the loop may sleep at `now` (`ClientTimers.sleepMillis`): until the next scan,
    /// the next delayed retry or the next reconnect attempt.
    package func sleepMillis(now: UInt64) -> Int32 {
        ClientTimers.sleepMillis(now: now, nextScanNanos: nextScanNanos, nextRetryNanos: queue.delayed.firstDue,
                                 nextReconnectNanos: pool.hasEmptyPosition ? (backoff.isBackingOff ? backoff.nextAttemptNanos : 0) : nil)
    }

    /// The end of the drain: everything still held ends FAILED (Cancelled if never sent,
    /// CancelledInFlight if in flight), and every connection is to be closed (`.terminate`).
    mutating func shutDown(now: UInt64) {
        for index in queue.delayed.removeAll() { queue.pending.append(index, in: slots) }
        var pending = queue.pending
        queue.pending = SlotList()
        cancel(&pending, now: now)
        for e in pool.liveEntries {
            var index = pool.entries[e].inFlight.head
            while index >= 0 {
                let slot = slots[index]
                let next = slot.pointee.links.next
                pool.entries[e].inFlight.unlink(index, slot, in: slots)
                slot.pointee.transmission.streamID = 0
                queue.inFlightTotal -= 1
                complete(index, outcome: .failed, status: 0, reason: .cancelledInFlight,
                         text: "the client was closed while it was in flight", now: now)
                index = next
            }
            act(.terminate(pool.id(e)))
        }
    }

    /// Ends the notifications of `list` FAILED Cancelled: never sent, the client closed (what
    /// was queued at shutdown, and what a sender handed over as it closed). Leaves `list` empty.
    package mutating func cancel(_ list: inout SlotList, now: UInt64) {
        while true {
            let index = list.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: .cancelled, text: "the client was closed before it was sent", now: now)
        }
    }

    /// Ends FAILED Cancelled the queued notifications that were never written and whose tag is
    /// in one of `tags` (their caller stopped waiting). What was written once (in flight,
    /// waiting out a retry delay, or queued again after a lost connection) is left to end as it
    /// would: APNs may have it, and its outcome still counts.
    package mutating func cancelUnsent(tags: [ClosedRange<UInt64>], now: UInt64) {
        guard !queue.pending.isEmpty else { return }
        var kept = SlotList()
        var cancelled = SlotList()
        while true {
            let index = queue.pending.popFirst(in: slots)
            if index < 0 { break }
            let slot = slots[index]
            let tag = slot.pointee.request.tag
            if slot.pointee.transmission.attempts == 0 && tags.contains(where: { $0.contains(tag) }) {
                cancelled.append(index, in: slots)
            } else {
                kept.append(index, in: slots)
            }
        }
        queue.pending = kept
        while true {
            let index = cancelled.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: .cancelled, text: "its caller cancelled the wait before it was sent", now: now)
        }
    }
}
