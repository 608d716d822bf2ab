#if canImport(Glibc)
import Glibc
#endif
import PushCore
import CPushSystem

/// Something that owns a file descriptor registered with an `EventLoop`.
public protocol EventHandler: AnyObject {
    /// Called on the loop's thread with the epoll event bits for the handler's descriptor.
    func handleEvents(_ events: UInt32)
}

/// An epoll loop with an eventfd for cross-thread wake-ups. One per I/O thread; every method but
/// `wake()` must be called on that thread.
///
/// Handlers are looked up by descriptor (epoll's data field carries the fd), so registering
/// allocates only when the table grows.
public final class EventLoop: @unchecked Sendable {
    private let epfd: Int32
    private let wakeFD: Int32
    private var handlers: [EventHandler?] = []
    private var events: UnsafeMutableRawPointer
    private let maxEvents = 256

    /// Readable and writable interest bits, for `register`/`modify`.
    public static let readable = EPOLLIN.rawValue
    public static let writable = EPOLLOUT.rawValue
    /// Error and hang-up bits (always reported by epoll).
    public static let errorOrHangup = EPOLLERR.rawValue | EPOLLHUP.rawValue

    public init() throws(TransportError) {
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        if epfd < 0 { throw TransportError.system("epoll_create1", errno) }
        wakeFD = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
        if wakeFD < 0 { close(epfd); throw TransportError.system("eventfd", errno) }
        events = .allocate(byteCount: maxEvents * Int(swiftpush_epoll_event_size()), alignment: 16)
        swiftpush_epoll_ctl(epfd, EPOLL_CTL_ADD, wakeFD, EPOLLIN.rawValue)
    }

    deinit {
        close(wakeFD)
        close(epfd)
        events.deallocate()
    }

    /// Watches `fd` for `interest` (EPOLLIN/EPOLLOUT bits) on behalf of `handler`.
    public func register(fd: Int32, interest: UInt32, handler: EventHandler) {
        if Int(fd) >= handlers.count { handlers.append(contentsOf: repeatElement(nil, count: Int(fd) + 64 - handlers.count)) }
        handlers[Int(fd)] = handler
        swiftpush_epoll_ctl(epfd, EPOLL_CTL_ADD, fd, interest)
    }

    /// Changes the interest set of a registered descriptor.
    public func modify(fd: Int32, interest: UInt32) {
        swiftpush_epoll_ctl(epfd, EPOLL_CTL_MOD, fd, interest)
    }

    /// Stops watching `fd` (call before closing it).
    public func unregister(fd: Int32) {
        swiftpush_epoll_ctl(epfd, EPOLL_CTL_DEL, fd, 0)
        if Int(fd) < handlers.count { handlers[Int(fd)] = nil }
    }

    /// Wakes a thread blocked in `runOnce`. Safe from any thread; cheap enough to call per batch.
    public func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Waits up to `timeoutMillis` (-1: no limit) for events and dispatches them. Returns
    /// whether a cross-thread wake-up was among them.
    @discardableResult
    public func runOnce(timeoutMillis: Int32) -> Bool {
        let list = events.assumingMemoryBound(to: epoll_event.self)
        let n = epoll_wait(epfd, list, Int32(maxEvents), timeoutMillis)
        var woken = false
        if n <= 0 { return false }
        for i in 0..<Int(n) {
            let fd = swiftpush_epoll_event_fd(list, Int32(i))
            let bits = swiftpush_epoll_event_bits(list, Int32(i))
            if fd == wakeFD {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
                woken = true
                continue
            }
            if Int(fd) < handlers.count, let h = handlers[Int(fd)] { h.handleEvents(bits) }
        }
        return woken
    }
}

