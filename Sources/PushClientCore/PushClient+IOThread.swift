#if canImport(Glibc)
import Glibc
#endif
import PushClientMachine
import PushCore
import PushTransport

/// The I/O thread's loop: the driver of `core`. Each turn takes what senders handed over and what
/// connections recorded, tells the core the time (`ClientCore.turn`), carries out what it asks
/// (PushClient+Actions), publishes outcomes, and sleeps in epoll until there is work; the
/// connections' reads and closes come in between (PushClient+ConnectionEvents). Everything it
/// touches outside `handoff` (`core`, the connections) belongs to this thread alone.
extension PushClient {
    /// The thread's body, until close's drain ends (then `shutDown`).
    func runIOThread() {
        IOThread.blockSIGPIPE()
        while true {
            let (submitted, lifecycle, callersWaiting, cancelled) = handoff.withLock { h in
                let taken = h.submissions
                h.submissions = SlotList()
                h.ioIdle = false
                var cancelled: [ClosedRange<UInt64>] = []
                if !h.cancelledTags.isEmpty { swap(&cancelled, &h.cancelledTags) }
                return (taken, h.lifecycle, h.waiters > 0, cancelled)
            }
            var taken = submitted
            core.take(&taken)
            // A group's threads share one back-off: what the others changed since the last turn.
            if sharesBackoff { core.adoptBackoff(reconnect.value) }
            let now = configuration.timing.clock.monotonicNanos()
            if !cancelled.isEmpty { core.cancelUnsent(tags: cancelled, now: now) }
            // What connections recorded outside their reads (streams refused as they were written).
            absorbAllInput()
            for answer in resolverThread.take() { core.resolutionAnswered(ticket: answer.ticket, answer.result, now: now, actions: &actions) }
            let closingNow = !lifecycle.isOpen
            var drainMillis: Int32 = 0
            if case .closing(let drain) = lifecycle { drainMillis = drain }
            core.turn(now: now, closing: closingNow, drainMillis: drainMillis, callersWaiting: callersWaiting, actions: &actions)
            performActions(now: now)
            if core.drainIsOver(now: now) {
                shutDown()
                return
            }
            publish()

            let sleep = handoff.withLock { h in
                if h.submissions.isEmpty && h.lifecycle.isOpen { h.ioIdle = true }
                return h.submissions.isEmpty && h.lifecycle.isOpen != closingNow
            } && !hasUntakenInput
            if sleep { loop.runOnce(timeoutMillis: core.sleepMillis(now: now)) }
        }
    }

    /// Has the core take what every connection recorded and it has not taken yet: facts nghttp2
    /// reported while the client wrote (a stream refused as its HEADERS went out), not in a read.
    func absorbAllInput() {
        for case let conn? in connections where !conn.input.isEmpty {
            core.absorb(&conn.input, from: conn.id, now: conn.lastInputNanos, actions: &actions)
        }
    }

    /// Some connection recorded facts not taken yet: the loop must not sleep on them.
    private var hasUntakenInput: Bool {
        connections.contains { $0.map { !$0.input.isEmpty } ?? false }
    }
}
