import Foundation
import Synchronization

/// Holds `threads` threads of Swift's cooperative pool (a detached task each, blocked on a
/// condition) until `release()`, and sends one more task after them: the probe, which can run
/// only if a pool thread is still free. What a program whose pool is busy (blocking calls made
/// by other code) looks like to a server running there.
final class PoolBlocker: Sendable {
    private let state = Mutex<(held: Int, released: Bool)>((0, false))
    private let condition = NSCondition()
    private let probe = Atomic<Bool>(false)
    private let threads: Int

    /// Starts the holding tasks (from a thread outside the pool: see `onOwnThread`).
    init(threads: Int) {
        self.threads = threads
        for _ in 0..<threads {
            Task.detached { [self] in self.hold() }
        }
    }

    /// Waits (blocking) until every holding task runs, then sends the probe; false when that
    /// did not happen within `seconds`.
    func waitUntilBlocked(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while state.withLock({ $0.held }) < threads {
            guard condition.wait(until: deadline) else { return false }
        }
        Task.detached { [self] in self.probe.store(true, ordering: .sequentiallyConsistent) }
        return true
    }

    /// Whether the probe task has run.
    var probeRan: Bool { probe.load(ordering: .sequentiallyConsistent) }

    /// Lets every holding task end.
    func release() {
        condition.lock()
        state.withLock { $0.released = true }
        condition.broadcast()
        condition.unlock()
    }

    private func hold() {
        condition.lock()
        state.withLock { $0.held += 1 }
        condition.broadcast()
        while !state.withLock({ $0.released }) { condition.wait() }
        condition.unlock()
    }
}
