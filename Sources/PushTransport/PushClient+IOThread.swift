#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore

/// The I/O thread's loop. Each turn takes what senders queued, keeps the pool filled,
/// dispatches, and (every scan interval) releases delayed retries, enforces deadlines and
/// checks health; then publishes outcomes and sleeps in epoll until there is work. The parts:
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
            dispatch(now: now)
            if now >= nextScanNanos {
                releaseDelayed(now: now)
                scanDeadlines(now: now)
                checkHealth(now: now)
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

    /// How long epoll may sleep: until the next scan or the next reconnect, at most 1 s.
    private func nextTimeoutMillis(now: UInt64) -> Int32 {
        var until = nextScanNanos
        for (i, c) in pool.enumerated() where c == nil && reconnectAtNanos[i] < until {
            until = reconnectAtNanos[i]
        }
        return until <= now ? 0 : Int32(min((until - now) / 1_000_000 + 1, 1000))
    }
}
