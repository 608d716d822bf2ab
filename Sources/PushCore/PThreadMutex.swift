#if canImport(Glibc)
import Glibc
#endif

/// A pthread mutex with a condition variable, heap-allocated so its address never moves.
///
/// The library runs its own threads (never Swift concurrency's) and its hand-offs need a
/// condition variable, which `Synchronization.Mutex` does not offer.
public final class PThreadMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>

    public init() {
        mutex = .allocate(capacity: 1)
        cond = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
        var attr = pthread_condattr_t()
        pthread_condattr_init(&attr)
        // Timed waits measure against CLOCK_MONOTONIC so that wall-clock jumps don't matter.
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attr)
        pthread_condattr_destroy(&attr)
    }

    deinit {
        pthread_cond_destroy(cond)
        pthread_mutex_destroy(mutex)
        cond.deallocate()
        mutex.deallocate()
    }

    /// Locks the mutex.
    @inline(__always) public func lock() { pthread_mutex_lock(mutex) }
    /// Unlocks the mutex.
    @inline(__always) public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the mutex held.
    @inline(__always)
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    /// Waits on the condition (mutex held) until signalled or until the monotonic time
    /// `deadlineNanos` (nil: no limit). Returns false on timeout. Spurious wake-ups return true:
    /// callers re-check their predicate.
    public func wait(untilMonotonicNanos deadlineNanos: UInt64?) -> Bool {
        guard let deadline = deadlineNanos else {
            pthread_cond_wait(cond, mutex)
            return true
        }
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        return pthread_cond_timedwait(cond, mutex, &ts) != ETIMEDOUT
    }

    /// Wakes every waiter.
    public func broadcast() { pthread_cond_broadcast(cond) }
}
