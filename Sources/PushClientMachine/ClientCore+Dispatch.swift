import PushCore

/// Dispatch: which queued notifications go on which connection. The driver asks for a batch
/// (`takeStreams`), submits each to nghttp2 and writes its stream id into the slot, then reports
/// what started (`streamsStarted`) and what nghttp2 refused (`streamsNotStarted`).
extension ClientCore {
    /// Queued notifications for connection `id`, as many as it has room for, in queue order:
    /// a list of slots to submit, each with a fresh apns-id if it brought none and its answer
    /// fields cleared. Empty when nothing waits, or when `id` does not hold its pool position
    /// (only those take new streams). Notifications past their deadline end on the way
    /// (`expireQueued`).
    package mutating func takeStreams(for id: ConnectionID, now: UInt64) -> SlotList {
        guard !queue.pending.isEmpty, let e = pool.entry(id), pool.holdsPosition(e) else { return SlotList() }
        var room = pool.entries[e].state.availableStreams
        var batch = SlotList()
        while room > 0 {
            let index = queue.pending.popFirst(in: slots)
            if index < 0 { break }
            let slot = slots[index]
            if now >= slot.pointee.request.deadlineNanos {
                expireQueued(index, now: now)
                continue
            }
            if !slot.pointee.request.hasCallerApnsId && slot.pointee.transmission.attempts == 0 {
                random.writeUUID(to: slot.pointee.storage.buffer! + SlotLayout.apnsId)
            }
            slot.pointee.answer.status = 0
            slot.pointee.answer.bodyLength = 0
            batch.append(index, in: slots)
            room -= 1
        }
        return batch
    }

    /// The driver submitted the notifications of `started` (a prefix of a `takeStreams` batch)
    /// on connection `id` at `now`, each slot's `transmission.streamID` written, carrying the
    /// provider token of `tokenGeneration`: they are in flight on it. Leaves `started` empty.
    mutating func streamsStarted(_ started: inout SlotList, on id: ConnectionID, tokenGeneration: Int, now: UInt64) {
        guard !started.isEmpty else { return }
        guard let e = pool.entry(id) else {
            // Not reached: a connection that is gone has no session, so nothing submitted on it
            // starts, and nothing runs between the driver's submits and this report. Were it
            // reached, these would end as on a lost connection: never twice, never silently.
            while true {
                let index = started.popFirst(in: slots)
                if index < 0 { break }
                slots[index].pointee.transmission.attempts += 1
                complete(index, outcome: .failed, status: 0, reason: .connectionLost, text: "its connection was gone as it was sent", now: now)
            }
            return
        }
        let n = started.count
        while true {
            let index = started.popFirst(in: slots)
            if index < 0 { break }
            let slot = slots[index]
            slot.pointee.transmission.attempts += 1
            if let shift = configuration.startedTagShift, slot.pointee.transmission.attempts == 1 {
                // One report per run of tags equal above `shift` (a worker entry's tokens).
                let tag = slot.pointee.request.tag
                if outbox.started.last.map({ $0 >> shift != tag >> shift }) ?? true { outbox.started.append(tag) }
            }
            pool.entries[e].inFlight.link(index, slot, in: slots)
            pool.entries[e].state.streamOpened()
        }
        pool.entries[e].record.tokenGeneration = tokenGeneration
        outbox.counters.sent += UInt64(n)
        queue.inFlightTotal += n
    }

    /// nghttp2 refused to start the first notification of `rest` on connection `id` (the rest
    /// of its batch was not tried): all of them go back to the front of the queue, in order.
    /// A connection whose stream ids ran out (`idsExhausted`) is retired (a replacement takes
    /// over); any other refusal (out of memory) leaves it alone, since another would fare no
    /// better: the notifications go out on a later turn, or end at their deadline.
    mutating func streamsNotStarted(_ rest: inout SlotList, on id: ConnectionID, idsExhausted: Bool, errorText: @autoclosure () -> String) {
        rest.splice(&queue.pending, in: slots)
        queue.pending = rest
        rest = SlotList()
        guard let e = pool.entry(id) else { return }
        if idsExhausted {
            perform(pool.entries[e].state.retire(), on: e)
        } else {
            log(.error, .protocolError, "a stream could not be started on the connection to \(endpointText) "
                + "(pool position \(pool.entries[e].position)): \(errorText()); the notification waits")
        }
    }
}
