#if canImport(Glibc)
import Glibc
#endif
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

    /// Copies what the stats show of the I/O thread's state (every scan interval, so stats
    /// cost nothing per notification).
    func refreshPublishedState() {
        var p = PublishedState()
        p.queued = core.queue.pending.count + core.queue.delayed.count
        p.inFlight = core.queue.inFlightTotal
        p.lastGoawayReason = core.lastGoawayReason
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
        if core.outbox.isEmpty { return }
        var finished = core.outbox.finished
        core.outbox.finished = SlotList()
        if let callback = configuration.callbacks.result {
            deliver(&finished, to: callback, buffer: callbackBuffer)
        }
        let newResults = !finished.isEmpty // (empty after a callback took them)
        let queued = core.queue.pending.count + core.queue.delayed.count, inFlight = core.queue.inFlightTotal
        handoff.withLockNotifying { h, waiters in
            h.completions.splice(&finished, in: slots)
            h.counters.add(core.outbox.counters)
            h.outcomeCounts.drain(&core.outbox.outcomeCounts)
            // The queue gauges ride along (no allocation); the per-connection list is refreshed at
            // each scan and when connections come and go.
            h.published.queued = queued
            h.published.inFlight = inFlight
            if core.outbox.latencies.total > 0 { h.latencies.merge(core.outbox.latencies) }
            if h.waiters > 0 { waiters.broadcast() }
        }
        if newResults {
            resultSignal?.notify()
            readiness.signal()
        }
        core.outbox.counters = ClientCounters()
        if core.outbox.latencies.total > 0 { core.outbox.latencies = LatencyHistogram() }
    }
}
