import CSwiftPushABI
import PushCore

/// Where the clients' I/O threads leave results for the worker's loop, and where a stop
/// request wakes it. Every app's client delivers here through its result callback, so the loop
/// waits on one condition instead of polling each client.
final class ResultInbox: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var results: [push_result] = []
    private var stopRequested = false
    /// The loop has seen the stop request: waits no longer end early because of it.
    private var stopSeen = false

    /// The callback every client is given; `userData` is this inbox (kept alive by the worker
    /// until every client is closed).
    static let callback: push_result_callback = { userData, records, count in
        guard let userData, let records, count > 0 else { return }
        Unmanaged<ResultInbox>.fromOpaque(userData).takeUnretainedValue().add(records, count: count)
    }

    private func add(_ records: UnsafePointer<push_result>, count: Int) {
        lock.lock()
        results.append(contentsOf: UnsafeBufferPointer(start: records, count: count))
        lock.broadcast()
        lock.unlock()
    }

    /// Asks the loop to stop (from the signal thread); wakes it.
    func requestStop() {
        lock.lock()
        stopRequested = true
        lock.broadcast()
        lock.unlock()
    }

    /// Whether a stop was requested.
    var isStopRequested: Bool { lock.withLock { stopRequested } }

    /// The loop has acted on the stop request (later waits run their full time).
    func noteStopSeen() { lock.withLock { stopSeen = true } }

    /// Every result so far, waiting up to `waitMillis` for the first (returns early on a stop
    /// request).
    func take(waitMillis: Int) -> [push_result] {
        let until = MonotonicTime.nanos() + UInt64(max(0, waitMillis)) * 1_000_000
        lock.lock()
        defer { lock.unlock() }
        while results.isEmpty && !(stopRequested && !stopSeen) && waitMillis > 0 && MonotonicTime.nanos() < until {
            _ = lock.wait(untilMonotonicNanos: until)
        }
        let taken = results
        results.removeAll(keepingCapacity: true)
        return taken
    }
}
