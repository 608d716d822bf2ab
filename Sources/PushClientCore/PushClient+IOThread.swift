#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// The I/O thread's loop. Each turn takes what senders queued, keeps the pool filled,
/// releases delayed retries that are due, dispatches, and (every scan interval) enforces
/// deadlines and checks health; then publishes outcomes and sleeps in epoll until there is work. The parts:
/// PushClient+Pool, +Dispatch, +Answers (what connections report), +Outcomes, +Deadlines,
/// +Shutdown. Everything they touch outside `handoff` (`queue`, `pool`, `outbox`, the
/// connections) belongs to this thread alone.
extension PushClient {
    /// The thread's body, until close's drain ends (then `shutDown`).
    func runIOThread() {
        IOThread.blockSIGPIPE()
        var drainDeadline: UInt64?
        while true {
            let (submitted, lifecycle) = handoff.withLock { h in
                let taken = h.submissions
                h.submissions = SlotList()
                h.ioIdle = false
                return (taken, h.lifecycle)
            }
            var taken = submitted
            queue.pending.splice(&taken, in: slots)

            let now = configuration.timing.clock.monotonicNanos()
            let closingNow = !lifecycle.isOpen
            if case .closing(let drain) = lifecycle, drainDeadline == nil { drainDeadline = now + UInt64(drain) * 1_000_000 }
            if !closingNow || !queue.pending.isEmpty || !queue.delayed.isEmpty || queue.inFlightTotal > 0 { maintainPool(now: now) }
            releaseDelayed(now: now)
            dispatch(now: now)
            if ClientTimers.isDue(queue.nextScanNanos, now: now) {
                scanDeadlines(now: now)
                checkHealth(now: now)
                resizePool(now: now)
                refreshPublishedState()
                queue.nextScanNanos = now + ClientTimers.scanIntervalNanos
            }
            if let deadline = drainDeadline, (queue.pending.isEmpty && queue.delayed.isEmpty && queue.inFlightTotal == 0) || ClientTimers.isDue(deadline, now: now) {
                shutDown()
                return
            }
            publish()

            let sleep = handoff.withLock { h in
                if h.submissions.isEmpty && h.lifecycle.isOpen { h.ioIdle = true }
                return h.submissions.isEmpty && h.lifecycle.isOpen != closingNow
            }
            if sleep { loop.runOnce(timeoutMillis: nextTimeoutMillis(now: now)) }
        }
    }

    /// How long epoll may sleep (`ClientTimers.sleepMillis`): until the next scan, the next
    /// delayed retry or the next reconnect attempt.
    private func nextTimeoutMillis(now: UInt64) -> Int32 {
        ClientTimers.sleepMillis(now: now, nextScanNanos: queue.nextScanNanos, nextRetryNanos: queue.delayed.firstDue,
                                 nextReconnectNanos: hasEmptyPosition ? reconnect.nextAttemptNanos : nil)
    }

    /// The time rules, from the configuration.
    var timers: ClientTimers {
        ClientTimers(idlePingMillis: configuration.timing.idlePingMillis, pingTimeoutMillis: configuration.timing.pingTimeoutMillis,
                     connectTimeoutMillis: configuration.timing.connectTimeoutMillis)
    }
}
