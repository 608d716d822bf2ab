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
        for index in queue.delayed.removeAll() { queue.pending.append(index, in: slots) }
        while true {
            let index = queue.pending.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: .cancelled, text: "the client was closed before it was sent")
        }
        for conn in pool.connections.compactMap({ $0 }) + pool.retiring {
            var index = conn.inFlightSlots.head
            while index >= 0 {
                let slot = slots[index]
                let next = slot.pointee.links.next
                conn.inFlightSlots.unlink(index, slot, in: slots)
                queue.inFlightTotal -= 1
                complete(index, outcome: .failed, status: 0, reason: .cancelledInFlight,
                         text: "the client was closed while it was in flight")
                index = next
            }
            conn.sendGoaway()
            conn.flush()
            conn.close(nil)
        }
        pool.connections = pool.connections.map { _ in nil }
        pool.retiring = []
        if let callback = configuration.callbacks.result { deliver(&outbox.finished, to: callback, buffer: outbox.callbackBuffer) }
        var late = handoff.withLock { h in
            h.completions.splice(&outbox.finished, in: slots)
            h.counters.add(outbox.counters)
            h.outcomeCounts.drain(&outbox.outcomeCounts)
            // Nothing else will ever be queued: anything a racing sender slipped in is cancelled too.
            let late = h.submissions
            h.submissions = SlotList()
            h.lifecycle = .cancelling
            return late
        }
        outbox.counters = ClientCounters()
        while true {
            let index = late.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: .cancelled, text: "the client was closed before it was sent")
        }
        if let callback = configuration.callbacks.result { deliver(&outbox.finished, to: callback, buffer: outbox.callbackBuffer) }
        handoff.withLockNotifying { h, waiters in
            h.completions.splice(&outbox.finished, in: slots)
            h.counters.add(outbox.counters)
            h.outcomeCounts.drain(&outbox.outcomeCounts)
            h.lifecycle = .finished
            waiters.broadcast()
        }
        resultSignal?.notify() // a group's pollers learn that this thread is done
        readiness.signal()      // and so do event loops waiting on the descriptor
    }
}
