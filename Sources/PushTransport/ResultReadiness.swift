#if canImport(Glibc)
import Glibc
#endif
import PushCore
import CPushSystem

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
final class ResultReadiness: @unchecked Sendable {
    private let lock = PThreadMutex()
    private var fd: Int32 = -1

    /// Whether a descriptor was handed out (otherwise signalling costs nothing).
    var inUse: Bool { lock.withLock { fd >= 0 } }

    /// The descriptor, made on first call.
    func descriptor() throws(ClientError) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if fd < 0 {
            fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
            if fd < 0 { throw ClientError(.internalError, "eventfd: \(String(cString: strerror(errno)))") }
        }
        return fd
    }

    /// Results are waiting (or the client finished): make the descriptor readable.
    func signal() {
        lock.withLock {
            guard fd >= 0 else { return }
            var one: UInt64 = 1
            _ = write(fd, &one, 8)
        }
    }

    /// Makes the descriptor quiet (the caller then re-checks for waiting results).
    func reset() {
        lock.withLock {
            guard fd >= 0 else { return }
            var value: UInt64 = 0
            _ = read(fd, &value, 8)
        }
    }

    deinit {
        if fd >= 0 { close(fd) }
    }
}
