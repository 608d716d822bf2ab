#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// Shutdown at the end of close's drain. On the I/O thread.
extension PushClient {
    /// Ends everything still held with a FAILED outcome, closes connections, publishes.
    func shutDown() {
        pool.resolverThread.stop()
        absorbAllInput()
        let now = configuration.timing.clock.monotonicNanos()
        for index in core.queue.delayed.removeAll() { core.queue.pending.append(index, in: slots) }
        while true {
            let index = core.queue.pending.popFirst(in: slots)
            if index < 0 { break }
            core.complete(index, outcome: .failed, status: 0, reason: .cancelled, text: "the client was closed before it was sent", now: now)
        }
        for conn in pool.connections.compactMap({ $0 }) + pool.retiring {
            var index = conn.inFlightSlots.head
            while index >= 0 {
                let slot = slots[index]
                let next = slot.pointee.links.next
                conn.inFlightSlots.unlink(index, slot, in: slots)
                slot.pointee.transmission.streamID = 0
                core.queue.inFlightTotal -= 1
                core.complete(index, outcome: .failed, status: 0, reason: .cancelledInFlight,
                              text: "the client was closed while it was in flight", now: now)
                index = next
            }
            conn.sendGoaway()
            conn.flush()
            conn.close(nil)
        }
        pool.connections = pool.connections.map { _ in nil }
        pool.retiring = []
        var finished = core.outbox.finished
        core.outbox.finished = SlotList()
        if let callback = configuration.callbacks.result { deliver(&finished, to: callback, buffer: callbackBuffer) }
        var late = handoff.withLock { h in
            h.completions.splice(&finished, in: slots)
            h.counters.add(core.outbox.counters)
            h.outcomeCounts.drain(&core.outbox.outcomeCounts)
            // Nothing else will ever be queued: anything a racing sender slipped in is cancelled too.
            let late = h.submissions
            h.submissions = SlotList()
            h.lifecycle = .cancelling
            return late
        }
        core.outbox.counters = ClientCounters()
        let lateNow = configuration.timing.clock.monotonicNanos() // (sent after `now`, maybe)
        while true {
            let index = late.popFirst(in: slots)
            if index < 0 { break }
            core.complete(index, outcome: .failed, status: 0, reason: .cancelled, text: "the client was closed before it was sent", now: lateNow)
        }
        finished = core.outbox.finished
        core.outbox.finished = SlotList()
        if let callback = configuration.callbacks.result { deliver(&finished, to: callback, buffer: callbackBuffer) }
        handoff.withLockNotifying { h, waiters in
            h.completions.splice(&finished, in: slots)
            h.counters.add(core.outbox.counters)
            h.outcomeCounts.drain(&core.outbox.outcomeCounts)
            h.lifecycle = .finished
            waiters.broadcast()
        }
        resultSignal?.notify() // a group's pollers learn that this thread is done
        readiness.signal()      // and so do event loops waiting on the descriptor
    }
}
