#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore

/// Outcomes: filling a notification's result into its slot, and handing finished ones to
/// pollers or the callback. On the I/O thread (except markCancelled).
extension PushClient {
    /// The outcome kinds, matching `PUSH_OUTCOME_*`.
    enum Outcome: Int32 { case accepted = 1, rejected = 2, failed = 3 }

    /// Gives notification `index` its one outcome and queues it for publishing.
    /// `now` may be passed by a caller that has just read the clock (per answer, it shows).
    func complete(_ index: Int32, outcome: Outcome, status: Int32, reason: APNsReason, text: String?,
                  now given: UInt64? = nil) {
        let now = given ?? configuration.timing.clock.monotonicNanos()
        let slot = slots[index]
        if slot.pointee.transmission.attempts == 0 && !slot.pointee.request.hasCallerApnsId {
            // Never sent, so never given an apns-id: results always carry one.
            queue.uuid.write(to: slot.pointee.storage.buffer! + SlotLayout.apnsId)
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

    /// Fills a FAILED/Cancelled result into a slot that never reached the I/O thread (a send
    /// that raced with close). Called under the lock by a caller thread.
    static func markCancelled(_ slot: UnsafeMutablePointer<Slot>, now: UInt64) {
        let text: StaticString = "the client was closed before it was sent"
        slot.pointee.answer.outcome = Outcome.failed.rawValue
        slot.pointee.answer.status = 0
        slot.pointee.answer.reason = APNsReason.cancelled.rawValue
        slot.pointee.answer.timestampMs = 0
        slot.pointee.answer.latencyUs = Int64((now &- slot.pointee.request.submitNanos) / 1000)
        (slot.pointee.storage.buffer! + SlotLayout.reasonText).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        slot.pointee.answer.reasonTextLength = Int32(text.utf8CodeUnitCount)
        // The apns-id is assigned on the I/O thread; this one never got there (rare: a fresh
        // generator is fine).
        if !slot.pointee.request.hasCallerApnsId {
            var generator = UUIDGenerator()
            generator.write(to: slot.pointee.storage.buffer! + SlotLayout.apnsId)
        }
    }

    /// Puts a notification to be sent again at the front of the queue. `processed` is false
    /// when the server said it never processed the write (REFUSED_STREAM, above a GOAWAY's
    /// last-stream-id): such writes are left out of the result's `attempts`.
    func requeue(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, processed: Bool) {
        outbox.counters.resent += 1
        if !processed { slot.pointee.transmission.unprocessedWrites += 1 }
        slot.pointee.transmission.streamID = 0
        queue.pending.prepend(index, in: slots)
    }

    /// Ends every queued notification with a FAILED outcome (nothing can send them).
    func failPending(reason: APNsReason, text: String) {
        while true {
            let index = queue.pending.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: reason, text: text)
        }
    }

    /// Copies what the stats show of the I/O thread's state (every scan interval, so stats
    /// cost nothing per notification).
    func refreshPublishedState() {
        var p = PublishedState()
        p.queued = queue.pending.count + queue.delayed.count
        p.inFlight = queue.inFlightTotal
        p.lastGoawayReason = queue.lastGoawayReason
        for conn in pool.connections.compactMap({ $0 }) + pool.retiring {
            let state: Int32
            switch conn.state.phase {
            case .connecting, .tunneling, .handshaking, .awaitingSettings: state = 1; p.connectionsOpening += 1
            case .ready: state = 2; p.connectionsOpen += 1
            case .draining: state = 3
            case .closed: continue
            }
            p.connections.append((state, Int32(min(conn.state.streamLimit, Int(Int32.max))), Int32(conn.state.inFlight)))
        }
        handoff.withLock { $0.published = p }
    }

    /// Hands finished notifications to pollers (one lock for the whole batch).
    func publish() {
        if outbox.finished.isEmpty && outbox.counters == ClientCounters() && outbox.latencies.total == 0 { return }
        if let callback = configuration.callbacks.result {
            deliver(&outbox.finished, to: callback, buffer: outbox.callbackBuffer)
        }
        let newResults = !outbox.finished.isEmpty // (empty after a callback took them)
        handoff.withLockNotifying { h, waiters in
            h.completions.splice(&outbox.finished, in: slots)
            h.counters.add(outbox.counters)
            h.outcomeCounts.drain(&outbox.outcomeCounts)
            // The queue gauges ride along (no allocation); the per-connection list is refreshed at
            // each scan and when connections come and go.
            h.published.queued = queue.pending.count + queue.delayed.count
            h.published.inFlight = queue.inFlightTotal
            if outbox.latencies.total > 0 { h.latencies.merge(outbox.latencies) }
            if h.waiters > 0 { waiters.broadcast() }
        }
        if newResults {
            resultSignal?.notify()
            readiness.signal()
        }
        outbox.counters = ClientCounters()
        if outbox.latencies.total > 0 { outbox.latencies = LatencyHistogram() }
    }
}
