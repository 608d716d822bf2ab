#if canImport(Glibc)
import Glibc
#endif
import PushTransport

/// A listening socket: hands every pending connection to `onAccept` when readable.
final class MockListener: EventHandler {
    /// Which of Apple's hosts a listener plays.
    enum Role {
        /// api(.sandbox).push.apple.com: device notifications and broadcasts.
        case apns
        /// api-manage-broadcast(.sandbox).push.apple.com: the channel management API.
        case channelManagement
    }

    let fd: Int32
    private let onAccept: (Int32) -> Void

    init(fd: Int32, onAccept: @escaping (Int32) -> Void) {
        self.fd = fd
        self.onAccept = onAccept
    }

    func handleEvents(_ events: UInt32) {
        while true {
            // accept4 needs _GNU_SOURCE, which Swift's Glibc module lacks: set the flags after.
            let client = accept(fd, nil, nil)
            if client < 0 {
                // EAGAIN: drained. EMFILE and friends: try again on the next readiness; the
                // pending connection waits in the backlog.
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
            onAccept(client)
        }
    }
}
