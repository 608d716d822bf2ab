import PushCore
import PushTransport

/// The I/O thread's decisions about notifications, as a value: what is queued, waiting out a
/// retry delay, in flight and finished, and what becomes of each one when an attempt ends. It
/// does no I/O and reads no clock (every event brings its `now`), so its rules are tested in
/// memory (Tests/PushClientCoreTests/ClientCore*Tests.swift); `PushClient`, which owns the
/// thread, the sockets and the nghttp2 sessions, feeds it events and carries out what it says.
///
/// Slots are the storage: the core moves slot indices between its lists and writes the
/// bookkeeping fields of a slot (attempts, the outcome); it never copies a notification.
///
/// Implementation notes:
/// - What becomes of one attempt is `RetryPolicy`'s decision (`settle`); what becomes of one
///   connection is its `ConnectionState`'s. The core carries out both.
/// - It belongs to the I/O thread alone: `PushClient` keeps it without runtime exclusivity
///   checks, so none of its methods may call back into the client (none does: the only calls
///   out are the rules' pure functions).
struct ClientCore {
    /// The notifications' slots (the client's table).
    let slots: SlotTable
    /// What becomes of an attempt (from maxAttempts and retryDelayMillis).
    let retryPolicy: RetryPolicy
    /// Draws the jitter of retry delays, in [0, 1) (tests substitute a fixed draw).
    var unitRandom: () -> Double = { Double.random(in: 0..<1) }

    /// Notifications waiting for a stream or a retry delay, and how many are in flight.
    var queue = SendQueue()
    /// Outcomes not yet published, with their counters.
    var outbox = ResultOutbox()
    /// apns-id generator for notifications that bring none.
    var uuid = UUIDGenerator()
    /// When deadlines, health and the pool's size are next looked at.
    var nextScanNanos: UInt64 = 0
    /// The reason of the last GOAWAY (for the stats).
    var lastGoawayReason = ""
    /// Set while APNs refuses freshly signed tokens as expired (`ProviderToken.ExpiryVerdict`):
    /// the text results name instead of the answer's.
    var clockSuspectText: String?
    /// The last connection failure, as published (`Handoff.lastConnectionError`): a notification
    /// that was never sent names it when its deadline passes.
    var lastConnectionError: TransportError?

    init(slots: SlotTable, retryPolicy: RetryPolicy) {
        self.slots = slots
        self.retryPolicy = retryPolicy
    }
}
