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
/// +Shutdown; what becomes of notifications is `core`'s (ClientCore). Everything they touch
/// outside `handoff` (`core`, `pool`, the connections) belongs to this thread alone.
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
            core.queue.pending.splice(&taken, in: slots)
            // What connections recorded outside their reads (closes reported while writing).
            absorbAllInput()

            let now = configuration.timing.clock.monotonicNanos()
            let closingNow = !lifecycle.isOpen
            if case .closing(let drain) = lifecycle, drainDeadline == nil { drainDeadline = now + UInt64(drain) * 1_000_000 }
            if !closingNow || !core.queue.isIdle { maintainPool(now: now) }
            core.releaseDelayed(now: now)
            dispatch(now: now)
            if ClientTimers.isDue(core.nextScanNanos, now: now) {
                scanDeadlines(now: now)
                checkHealth(now: now)
                resizePool(now: now)
                refreshPublishedState()
                core.nextScanNanos = now + ClientTimers.scanIntervalNanos
            }
            if let deadline = drainDeadline, core.queue.isIdle || ClientTimers.isDue(deadline, now: now) {
                shutDown()
                return
            }
            publish()

            let sleep = handoff.withLock { h in
                if h.submissions.isEmpty && h.lifecycle.isOpen { h.ioIdle = true }
                return h.submissions.isEmpty && h.lifecycle.isOpen != closingNow
            } && !hasUntakenInput
            if sleep { loop.runOnce(timeoutMillis: nextTimeoutMillis(now: now)) }
        }
    }

    /// Takes what every connection recorded and was not taken yet: facts nghttp2 reported
    /// while the client wrote (a stream refused as its HEADERS went out), not during a read.
    func absorbAllInput() {
        for case let conn? in pool.connections where !conn.input.isEmpty { absorbInput(of: conn) }
        for conn in pool.retiring where !conn.input.isEmpty { absorbInput(of: conn) }
    }

    /// Some connection recorded facts not taken yet: the loop must not sleep on them.
    private var hasUntakenInput: Bool {
        pool.connections.contains { $0.map { !$0.input.isEmpty } ?? false } || pool.retiring.contains { !$0.input.isEmpty }
    }

    /// How long epoll may sleep (`ClientTimers.sleepMillis`): until the next scan, the next
    /// delayed retry or the next reconnect attempt.
    private func nextTimeoutMillis(now: UInt64) -> Int32 {
        ClientTimers.sleepMillis(now: now, nextScanNanos: core.nextScanNanos, nextRetryNanos: core.queue.delayed.firstDue,
                                 nextReconnectNanos: hasEmptyPosition ? reconnect.nextAttemptNanos : nil)
    }

    /// The time rules, from the configuration.
    var timers: ClientTimers {
        ClientTimers(idlePingMillis: configuration.timing.idlePingMillis, pingTimeoutMillis: configuration.timing.pingTimeoutMillis,
                     connectTimeoutMillis: configuration.timing.connectTimeoutMillis)
    }
}
