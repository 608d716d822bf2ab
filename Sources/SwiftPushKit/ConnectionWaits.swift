import PushCore
import PushClientCore

/// Every `APNsClient.waitUntilConnected` of one client, however many wait at once, on one
/// long-lived library thread: it waits on the client's own condition for all of them together,
/// in turns of at most `turn` (so that a waiter who came later with an earlier deadline is
/// answered near it), and answers each when the client connects, fails for good (`.tls`,
/// `.closed`) or its own deadline passes. Started by the first wait, it sleeps while nobody
/// waits and ends with `stop` (the client's end).
final class ConnectionWaits: @unchecked Sendable {
    /// The longest the thread waits on the client before looking at its waiters again.
    static let turn: Duration = .milliseconds(20)

    private struct Waiter {
        let deadline: ContinuousClock.Instant
        let timeoutMillis: Int32
        let waiter: OneWaiter<PushError?>
    }

    private let group: PushClientGroup
    private let mutex = PThreadMutex()
    /// Guarded by `mutex`.
    private var waiters: [Waiter] = []
    private var started = false
    private var stopped = false

    init(group: PushClientGroup) {
        self.group = group
    }

    /// Waits until every I/O thread has a connection, for up to `timeout`: nil when it has,
    /// the error otherwise (`.tls` at once, `.timeout` naming the last connection error);
    /// `.none` when the task was cancelled (at once).
    func wait(timeout: Duration) async -> PushError?? {
        let waiter = OneWaiter<PushError?>()
        let entry = Waiter(deadline: .now + max(timeout, .zero), timeoutMillis: APNsEngine.millis(timeout), waiter: waiter)
        return await withTaskCancellationHandler {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<PushError??, Never>) in
                guard waiter.wait(continuation) else { return }
                let start = mutex.withLock { () -> Bool in
                    waiters.append(entry)
                    mutex.broadcast()
                    defer { started = true }
                    return !started && !stopped
                }
                if start { LibraryThread.start { [self] in loop() } }
            }
        } onCancel: {
            waiter.resume(nil)
        }
    }

    /// Ends the thread (nobody can be waiting: a waiter holds the client).
    func stop() {
        mutex.withLock {
            stopped = true
            mutex.broadcast()
        }
    }

    /// The thread: waits a turn on the client for everyone waiting, answers whoever it can.
    private func loop() {
        while true {
            let earliest = mutex.withLock { () -> ContinuousClock.Instant? in
                while true {
                    waiters.removeAll { !$0.waiter.isWaiting } // cancelled
                    if stopped { return nil }
                    if let first = waiters.map(\.deadline).min() { return first }
                    _ = mutex.wait(untilMonotonicNanos: nil)
                }
            }
            guard let earliest else { return }
            let error = group.waitUntilConnected(timeoutMillis: APNsEngine.millis(min(earliest - .now, Self.turn)))
            let now = ContinuousClock.now
            let answered = mutex.withLock { () -> [Waiter] in
                // Connected, or failed for good: everyone; timed out: those whose time is up.
                let all = error.map { $0.status != .timeout } ?? true
                var answered: [Waiter] = []
                waiters.removeAll { w in
                    guard all || w.deadline <= now else { return false }
                    answered.append(w)
                    return true
                }
                return answered
            }
            for w in answered {
                var e = error
                if e?.status == .timeout {
                    // Asked again, so that the error names this waiter's timeout, not the turn's.
                    e = group.waitUntilConnected(timeoutMillis: 0, reportingMillis: w.timeoutMillis)
                }
                w.waiter.resume(.some(e.map(PushError.init)))
            }
        }
    }
}
