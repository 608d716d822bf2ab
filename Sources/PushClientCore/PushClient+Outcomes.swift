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

    /// Hands what the core has for the callers (`ClientCore.takeNews`) over: finished notifications
    /// to the result callback or to pollers, counters, latencies and the connections' news, in
    /// one lock; wakes whoever waits.
    func publish() {
        guard core.hasNews else { return }
        core.takeNews(into: &news)
        var finished = news.takeFinished()
        if let callback = configuration.callbacks.result {
            deliver(&finished, to: callback, buffer: callbackBuffer)
        }
        let newResults = !finished.isEmpty // (empty after a callback took them)
        // The per-connection list is rebuilt at each scan and when connections come and go;
        // otherwise the queue gauges ride along (no allocation).
        let state = news.stateChanged ? core.publishedState() : nil
        let queued = core.queuedCount, inFlight = core.inFlightCount
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

    /// Moves the taken outbox's (`news`) counters, outcome counts, latencies and connection news
    /// into the hand-off (under its lock), leaving it empty (its finished list was taken before)
    /// for the next `takeNews`.
    func moveOutbox(into h: inout Handoff) {
        h.counters.add(news.counters)
        news.counters = ClientCounters()
        h.outcomeCounts.drain(&news.outcomeCounts)
        if news.latencies.total > 0 {
            h.latencies.merge(news.latencies)
            news.latencies = LatencyHistogram()
        }
        if let error = news.connectionError {
            h.lastConnectionError = error
            news.connectionError = nil
        }
        h.openConnections += news.openConnectionsChange
        news.openConnectionsChange = 0
        news.stateChanged = false
        if !news.started.isEmpty {
            if h.started.isEmpty { swap(&h.started, &news.started) } else { h.started += news.started }
            news.started.removeAll(keepingCapacity: true)
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
