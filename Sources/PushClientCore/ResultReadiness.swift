#if canImport(Glibc)
import Glibc
#endif
import PushClientMachine
import PushCore
import CPushSystem
import Synchronization

/// A file descriptor that is readable while results are waiting to be polled, for event loops
/// (asyncio's `add_reader`, Go's poller, libuv, epoll) that wait on descriptors rather than in
/// `poll`: an eventfd, made on first request (clients that never ask have none).
///
/// Protocol: the I/O threads `signal()` after publishing results (and when the client has
/// finished). A poller, after taking results, calls `reset()` and then signals again if results
/// are still waiting: a result published in between signals after the reset, one published
/// before is seen by the check. So the descriptor is never quiet while results wait; it may be
/// readable with none (a poll then returns nothing), as with any level-triggered source.
/// One per client, shared by a PushClientGroup's threads.
final class ResultReadiness: Sendable {
    /// The eventfd (-1: none handed out yet). Atomic rather than under a lock: the I/O threads
    /// read it at every publish and pollers at every poll, and it changes once.
    private let fd = Atomic<Int32>(-1)

    /// Whether a descriptor was handed out (otherwise signalling costs nothing).
    var inUse: Bool { fd.load(ordering: .acquiring) >= 0 }

    /// The descriptor, made on first call (two first calls at once make one; the loser's goes).
    func descriptor() throws(ClientError) -> Int32 {
        let current = fd.load(ordering: .acquiring)
        if current >= 0 { return current }
        let made = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        if made < 0 { throw ClientError(.internalError, "eventfd: \(String(cString: strerror(errno)))") }
        let (won, original) = fd.compareExchange(expected: -1, desired: made, ordering: .acquiringAndReleasing)
        if won { return made }
        close(made)
        return original
    }

    /// Results are waiting (or the client finished): make the descriptor readable.
    func signal() {
        let f = fd.load(ordering: .acquiring)
        guard f >= 0 else { return }
        var one: UInt64 = 1
        _ = write(f, &one, 8)
    }

    /// Makes the descriptor quiet (the caller then re-checks for waiting results).
    func reset() {
        let f = fd.load(ordering: .acquiring)
        guard f >= 0 else { return }
        var value: UInt64 = 0
        _ = read(f, &value, 8)
    }

    deinit {
        let f = fd.load(ordering: .acquiring)
        if f >= 0 { close(f) }
    }
}
