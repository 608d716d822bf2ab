import PushClientMachine
import PushCore
import PushTransport

/// Where a client's caller threads (`send`, `poll`, `waitUntilConnected`, `close`, `stats`)
/// and its I/O thread meet: the only state of a `PushClient` that more than one thread touches.
/// It lives inside a `LockedHandoff` and is reachable only through `withLock`, so whatever
/// has the type `Handoff` is touched with the lock held (and nothing else of the client is).
///
/// Every operation moves a whole chain of slot indices between lists, so one lock covers a
/// batch of notifications.
struct Handoff {
    /// Slots that hold nothing (a sender takes them, `poll` and the callback give them back).
    var freeSlots = SlotList()
    /// Filled by senders, taken by the I/O thread at the start of each loop turn.
    var submissions = SlotList()
    /// Tag ranges whose notifications not yet written are to end Cancelled (a caller stopped
    /// waiting: `PushClient.cancelUnsent`), taken with the submissions (one lock for both, so
    /// a cancel asked for after a submission always finds it).
    var cancelledTags: [ClosedRange<UInt64>] = []
    /// Results published by the I/O thread, taken by `poll`.
    var completions = SlotList()
    /// The I/O thread is (about to be) asleep in epoll: a sender must wake it.
    var ioIdle = false
    /// Where the client is in its life (see `Lifecycle`).
    var lifecycle = Lifecycle.open
    /// A close was begun without joining the I/O thread (`PushClient.beginClose`): the next
    /// `close` joins it.
    var joinOwed = false
    /// Callers asleep on the condition (senders waiting for room, pollers, waitUntilConnected):
    /// whoever changes what they wait for broadcasts only when there are some.
    var waiters = 0
    /// Pool connections that are ready (what `waitUntilConnected` waits for).
    var openConnections = 0
    /// The last connection failure (`last_connection_error`, waitUntilConnected's detail).
    var lastConnectionError: TransportError?
    /// Counters published by the I/O thread.
    var counters = ClientCounters()
    /// Answer latencies (merged from the I/O thread at each publish).
    var latencies = LatencyHistogram()
    /// What the stats show of the I/O thread's state, refreshed at each publish.
    var published = PublishedState()
    /// Notifications ended, by (outcome, reason) (`OutcomeCounts`), merged at each publish.
    var outcomeCounts = OutcomeCounts()
    /// Tags of notifications whose request started (`ClientConfiguration.startedTagShift`),
    /// taken by `PushClient.takeStarted`.
    var started: [UInt64] = []
}

/// A client's life, one way: `open → closing → cancelling → finished`.
enum Lifecycle: Equatable {
    /// Sends are accepted.
    case open
    /// `close` was called (once: later calls wait for it): no more sends; the I/O thread sends
    /// what it holds for up to `drainMillis` (counted from the loop turn that sees this).
    case closing(drainMillis: Int32)
    /// The drain is over and the I/O thread has taken its last look at `submissions`: what a
    /// racing sender hands over now is cancelled by the sender itself.
    case cancelling
    /// The I/O thread has ended; every notification has its outcome.
    case finished

    /// Sends are accepted (no close has started).
    var isOpen: Bool { self == .open }
}

/// The lock and the `Handoff` it guards. The state cannot be reached without the lock: a
/// caller gets it `inout` inside `withLock` (`withLockNotifying` adds the condition's
/// broadcast), or waits for it with `withLock(waitingUntil:)`.
///
/// No `inout` access to the state ever spans a wait: inside an access the compiler may keep
/// the state's fields in registers (nobody else may touch it, by Swift's exclusivity rule),
/// so a loop that waited inside one could miss what other threads changed meanwhile. Waiting
/// happens between accesses, in `withLock(waitingUntil:)`, which reads the state afresh each time.
final class LockedHandoff: @unchecked Sendable {
    private let mutex = PThreadMutex()
    private var state = Handoff()

    /// Runs `body` on the state with the lock held.
    @inline(__always)
    func withLock<R>(_ body: (inout Handoff) throws -> R) rethrows -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&state)
    }

    /// As `withLock`, with the condition callers sleep on, to wake them.
    @inline(__always)
    func withLockNotifying<R>(_ body: (inout Handoff, Waiters) throws -> R) rethrows -> R {
        mutex.lock()
        defer { mutex.unlock() }
        return try body(&state, Waiters(mutex: mutex))
    }

    /// Runs `attempt` with the lock held until it returns a value; while it returns nil, sleeps
    /// on the lock's condition (counted in `Handoff.waiters`) until woken or until the monotonic
    /// time `deadline` (nil: no limit), then tries again. `attempt` decides when time is up (it
    /// returns a value then): a wake-up may be spurious or late.
    func withLock<R>(waitingUntil deadline: UInt64?, _ attempt: (inout Handoff, Waiters) throws -> R?) rethrows -> R {
        mutex.lock()
        defer { mutex.unlock() }
        while true {
            if let result = try attempt(&state, Waiters(mutex: mutex)) { return result }
            state.waiters += 1
            _ = mutex.wait(untilMonotonicNanos: deadline)
            state.waiters -= 1
        }
    }

    /// The lock's condition, handed out only inside the lock's methods (the lock is held).
    struct Waiters {
        fileprivate let mutex: PThreadMutex

        /// Wakes every caller waiting in `withLock(waitingUntil:)`.
        func broadcast() { mutex.broadcast() }
    }
}
