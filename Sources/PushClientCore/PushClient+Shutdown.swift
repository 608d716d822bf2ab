#if canImport(Glibc)
import Glibc
#endif
import PushClientMachine
import PushCore
import PushTransport

/// Shutdown at the end of close's drain. On the I/O thread.
extension PushClient {
    /// Ends everything still held with a FAILED outcome (`ClientCore.shutDown`), closes the
    /// connections, publishes, and cancels what a sender handed over as the client closed.
    func shutDown() {
        resolverThread.stop()
        absorbAllInput()
        let now = configuration.timing.clock.monotonicNanos()
        core.shutDown(now: now, actions: &actions)
        performActions(now: now) // each connection: GOAWAY, write, close (its end goes to the core as any other)
        core.takeNews(into: &news)
        var finished = news.takeFinished()
        if let callback = configuration.callbacks.result { deliver(&finished, to: callback, buffer: callbackBuffer) }
        var late = handoff.withLock { h in
            h.completions.splice(&finished, in: slots)
            moveOutbox(into: &h)
            // Nothing else will ever be queued: anything a racing sender slipped in is cancelled too.
            let late = h.submissions
            h.submissions = SlotList()
            h.lifecycle = .cancelling
            return late
        }
        core.cancel(&late, now: configuration.timing.clock.monotonicNanos()) // (sent after `now`, maybe)
        core.takeNews(into: &news)
        finished = news.takeFinished()
        if let callback = configuration.callbacks.result { deliver(&finished, to: callback, buffer: callbackBuffer) }
        handoff.withLockNotifying { h, waiters in
            h.completions.splice(&finished, in: slots)
            moveOutbox(into: &h)
            h.lifecycle = .finished
            waiters.broadcast()
        }
        resultSignal?.notify() // a group's pollers learn that this thread is done
        readiness.signal()      // and so do event loops waiting on the descriptor
    }
}
