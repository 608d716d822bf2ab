#if canImport(Glibc)
import Glibc
#endif
import PushClientMachine
import PushCore

/// Handing finished notifications (`ClientCore`'s outbox) to pollers or the callback. On the I/O
/// thread (except markCancelled).
extension PushClient {
    /// Fills a FAILED/Cancelled result into a slot that never reached the I/O thread (a send
    /// that raced with close). Called under the lock by a caller thread.
    static func markCancelled(_ slot: UnsafeMutablePointer<Slot>, now: UInt64) {
        let text: StaticString = "the client was closed before it was sent"
        slot.pointee.answer.outcome = ClientCore.Outcome.failed.rawValue
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

    /// Hands what the core has for the callers (`ClientCore.outbox`) over: finished notifications
    /// to the result callback or to pollers, counters, latencies and the connections' news, in
    /// one lock; wakes whoever waits.
    func publish() {
        if core.outbox.isEmpty { return }
        var finished = core.outbox.takeFinished()
        if let callback = configuration.callbacks.result {
            deliver(&finished, to: callback, buffer: callbackBuffer)
        }
        let newResults = !finished.isEmpty // (empty after a callback took them)
        // The per-connection list is rebuilt at each scan and when connections come and go;
        // otherwise the queue gauges ride along (no allocation).
        let state = core.outbox.stateChanged ? core.publishedState() : nil
        let queued = core.queue.pending.count + core.queue.delayed.count, inFlight = core.queue.inFlightTotal
        handoff.withLockNotifying { h, waiters in
            h.completions.splice(&finished, in: slots)
            moveOutbox(into: &h)
            if let state { h.published = state }
            h.published.queued = queued
            h.published.inFlight = inFlight
            if h.waiters > 0 { waiters.broadcast() }
        }
        if newResults {
            resultSignal?.notify()
            readiness.signal()
        }
    }

    /// Moves the outbox's counters, outcome counts, latencies and connection news into the
    /// hand-off (under its lock), leaving the outbox with nothing to publish but its finished list.
    func moveOutbox(into h: inout Handoff) {
        h.counters.add(core.outbox.counters)
        core.outbox.counters = ClientCounters()
        h.outcomeCounts.drain(&core.outbox.outcomeCounts)
        if core.outbox.latencies.total > 0 {
            h.latencies.merge(core.outbox.latencies)
            core.outbox.latencies = LatencyHistogram()
        }
        if let error = core.outbox.connectionError {
            h.lastConnectionError = error
            core.outbox.connectionError = nil
        }
        h.openConnections += core.outbox.openConnectionsChange
        core.outbox.openConnectionsChange = 0
        core.outbox.stateChanged = false
        if !core.outbox.started.isEmpty {
            if h.started.isEmpty { swap(&h.started, &core.outbox.started) } else { h.started += core.outbox.started }
            core.outbox.started.removeAll(keepingCapacity: true)
        }
    }
}

extension PushClient {
    /// The tags whose request started since the last call (`ClientConfiguration.startedTagShift`;
    /// empty without it), in the order they started. They wake no poller: a caller takes them
    /// along with its results, or on its own timer.
    package func takeStarted() -> [UInt64] {
        handoff.withLock { h in
            var tags: [UInt64] = []
            if !h.started.isEmpty { swap(&tags, &h.started) }
            return tags
        }
    }
}
