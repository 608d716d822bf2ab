#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore

/// The I/O thread's loop. Each turn takes what senders queued, keeps the pool filled,
/// releases delayed retries that are due, dispatches, and (every scan interval) enforces
/// deadlines and checks health; then publishes outcomes and sleeps in epoll until there is work. The parts:
/// PushClient+Pool, +Dispatch, +Answers (what connections report), +Outcomes, +Deadlines,
/// +Shutdown. Everything they touch outside `lock` belongs to this thread alone.
extension PushClient {
    /// How often deadlines and connect timeouts are checked.
    static let scanIntervalNanos: UInt64 = 50_000_000

    /// The thread's body, until close's drain ends (then `shutDown`).
    func runIOThread() {
        IOThread.blockSIGPIPE()
        var drainDeadline: UInt64?
        while true {
            lock.lock()
            var taken = submissions
            submissions = SlotList()
            let closingNow = closing
            let drain = drainMillis
            ioIdle = false
            lock.unlock()
            pending.splice(&taken, in: slots)

            let now = MonotonicTime.nanos()
            if closingNow && drainDeadline == nil { drainDeadline = now + UInt64(drain) * 1_000_000 }
            if !closingNow || !pending.isEmpty || !delayed.isEmpty || inFlightTotal > 0 { maintainPool(now: now) }
            releaseDelayed(now: now)
            dispatch(now: now)
            if now >= nextScanNanos {
                scanDeadlines(now: now)
                checkHealth(now: now)
                resizePool(now: now)
                refreshPublishedState()
                nextScanNanos = now + Self.scanIntervalNanos
            }
            if let deadline = drainDeadline, (pending.isEmpty && delayed.isEmpty && inFlightTotal == 0) || now >= deadline {
                shutDown()
                return
            }
            publish()

            lock.lock()
            if submissions.isEmpty && !closing { ioIdle = true }
            let sleep = submissions.isEmpty && closing == closingNow
            lock.unlock()
            if sleep { loop.runOnce(timeoutMillis: nextTimeoutMillis(now: now)) }
        }
    }

    /// How long epoll may sleep: until the next scan, the next delayed retry or the next
    /// reconnect attempt, at most 1 s. Rounded up, so a retry is never released early.
    private func nextTimeoutMillis(now: UInt64) -> Int32 {
        var until = nextScanNanos
        if let due = delayed.firstDue, due < until { until = due }
        if hasEmptyPosition {
            let next = reconnect.nextAttemptNanos
            if next > now && next < until { until = next }
        }
        return until <= now ? 0 : Int32(min((until - now + 999_999) / 1_000_000, 1000))
    }
}
