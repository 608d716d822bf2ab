import PushCore

/// Outcomes: a notification's one result written into its slot and queued for publishing, and
/// the lists a notification to be sent again goes back to.
extension ClientCore {
    /// The outcome kinds, matching `PUSH_OUTCOME_*`.
    package enum Outcome: Int32 { case accepted = 1, rejected = 2, failed = 3 }

    /// Gives notification `index` its one outcome at `now` and queues it for publishing.
    package mutating func complete(_ index: Int32, outcome: Outcome, status: Int32, reason: APNsReason, text: String?, now: UInt64) {
        let slot = slots[index]
        if slot.pointee.transmission.attempts == 0 && !slot.pointee.request.hasCallerApnsId {
            // Never sent, so never given an apns-id: results always carry one.
            random.writeUUID(to: slot.pointee.storage.buffer! + SlotLayout.apnsId)
        }
        slot.pointee.answer.outcome = outcome.rawValue
        slot.pointee.answer.status = status
        slot.pointee.answer.reason = reason.rawValue
        if outcome != .rejected { slot.pointee.answer.timestampMs = 0 }
        slot.pointee.answer.latencyUs = Int64((now &- slot.pointee.request.submitNanos) / 1000)
        if let whole = text {
            var text = whole.prefix(utf8Bytes: SlotLayout.reasonTextCapacity)
            let n = text.utf8.count
            text.withUTF8 { (slot.pointee.storage.buffer! + SlotLayout.reasonText).copyMemory(from: $0.baseAddress!, byteCount: n) }
            slot.pointee.answer.reasonTextLength = Int32(n)
        } else {
            slot.pointee.answer.reasonTextLength = 0
        }
        outbox.outcomeCounts.record(outcome: outcome.rawValue, reason: reason.rawValue)
        switch outcome {
        case .accepted: outbox.counters.accepted += 1
        case .rejected: outbox.counters.rejected += 1
        case .failed: outbox.counters.failed += 1
        }
        outbox.finished.append(index, in: slots)
    }

    /// Puts a notification to be sent again at the front of the queue. `processed` is false
    /// when the server said it never processed the write (REFUSED_STREAM, above a GOAWAY's
    /// last-stream-id): such writes are left out of the result's `attempts`.
    package mutating func requeue(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, processed: Bool) {
        outbox.counters.resent += 1
        if !processed { slot.pointee.transmission.unprocessedWrites += 1 }
        slot.pointee.transmission.streamID = 0
        queue.pending.prepend(index, in: slots)
    }

    /// Ends every queued notification with a FAILED outcome (nothing can send them).
    package mutating func failPending(reason: APNsReason, text: String, now: UInt64) {
        while true {
            let index = queue.pending.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: reason, text: text, now: now)
        }
    }
}

/// What the stats show of the I/O thread's state.
extension ClientCore {
    /// The queue, the in-flight count, the last GOAWAY's reason and each connection's state,
    /// stream limit and streams in flight (pool positions first, then draining connections).
    package func publishedState() -> PublishedState {
        var p = PublishedState()
        p.queued = queue.pending.count + queue.delayed.count
        p.inFlight = queue.inFlightTotal
        p.lastGoawayReason = lastGoawayReason
        for e in pool.liveEntries {
            let state = pool.entries[e].state
            let code: Int32
            switch state.phase {
            case .connecting, .tunneling, .handshaking, .awaitingSettings: code = 1; p.connectionsOpening += 1
            case .ready: code = 2; p.connectionsOpen += 1
            case .draining: code = 3
            case .closed: continue
            }
            p.connections.append((code, Int32(min(state.streamLimit, Int(Int32.max))), Int32(state.inFlight)))
        }
        return p
    }
}
