/// Where one notification of a held entry stands.
struct NoteTrack {
    enum Phase: UInt8 {
        /// Not sent yet (a re-delivered entry waiting its turn, or not taken by a full client).
        case waiting
        /// Sent: its result is awaited.
        case inFlight
        /// Waiting to be sent again (`resendAtNanos`).
        case resend
        /// Its outcome is decided (or it is parked, or an earlier holder's settle recorded it).
        case decided
        /// Left pending: the worker is stopping and it was not sent or was cancelled; its entry
        /// is not settled whole, so the next holder sends it.
        case left
    }
    var phase = Phase.waiting
    /// Sends in this delivery, and requests written to APNs for it.
    var sends: UInt8 = 0
    var attempts: UInt16 = 0
    var firstSendNanos: UInt64 = 0
    var resendAtNanos: UInt64 = 0
}

/// An entry the machine holds, from its claim until its last outcome is settled: per
/// notification where it stands, and the outcomes decided and not yet queued for settling.
final class HeldEntry {
    let box: EntryBox
    /// Its number in this machine (tags are `serial << 10 | index`).
    let serial: UInt64
    /// The queue's delivery count (raised when a re-delivered entry is sent: `countDelivery`).
    var deliveries: Int
    /// A re-delivered entry waiting for its paced group (`SuspectPacer`).
    var suspect: Bool
    var tracks: [NoteTrack]
    /// Notifications without a decided outcome.
    var open: Int
    /// Notifications whose outcomes are not settled yet (they count against max_in_flight).
    var unsettled: Int
    /// Notifications sent and not answered.
    var inFlight = 0
    /// Outcomes decided, not yet queued for settling.
    var accepted: [(index: Int, id: String)] = []
    /// The accepted ones' latencies (first send to outcome, µs), in the same order.
    var acceptedLatency: [Int64] = []
    var others: [EntrySettlement.Other] = []
    /// An outcome every open notification shares, and how many it covers.
    var rest: OutcomeRecord?
    var restCount = 0
    var delayed: DelayedPart?
    /// When the oldest of them was decided (a checkpoint is due `checkpoint_ms` later).
    var decidedSinceNanos: UInt64?
    /// Its final settlement has been queued.
    var finalQueued = false
    /// A 410 is among its outcomes not yet queued: they are settled at once, not at the next
    /// checkpoint (issue 31: a 410 that arrived must be recorded even if the worker dies soon
    /// after, or the dead token is kept for ever).
    var urgent = false
    /// Deliveries before this one that ended without an outcome (a previous holder died or
    /// stopped after its delivery was counted): each may have written a request to APNs, so
    /// its records say `maybe_delivered` and count them in `attempts` (`ShardMachine.outcome`).
    var earlierDeliveries = 0
    /// A re-delivered entry sent on its last chance (its count now at `max_deliveries`): its
    /// outcomes are settled at once, and its paced group ends only when they are (issue 31: a
    /// poison entry sent next, killing the worker, took the unsettled acceptance of the one
    /// before it along, and that one, APNs-accepted, came back to be dead-lettered).
    var lastChance = false
    /// Earlier deliveries whose holder recorded a written request (`QueueEntry.written`): with
    /// `deliveries`, what counts toward `max_deliveries` (`DeliveryCharge`).
    var writtenBefore = 0
    /// A request of it was written in this life (the client said so: `WorkerEvent.written`).
    var writtenHere = false
    /// This life's written delivery is recorded in the queue (or its record is on its way).
    var markSent = false
    /// Taken in as a re-delivered entry (its holder ended without its outcome): only such an
    /// entry's written delivery is recorded (`ShardMachine.written`).
    var redelivered: Bool

    init(box: EntryBox, serial: UInt64, deliveries: Int, suspect: Bool) {
        self.box = box
        self.serial = serial
        self.deliveries = deliveries
        self.suspect = suspect
        redelivered = suspect
        let n = max(box.entry.count, 1)
        tracks = [NoteTrack](repeating: NoteTrack(), count: n)
        open = n
        unsettled = n
    }

    var entry: WorkEntry { box.entry }
    var entryID: String { box.entry.entryID }
    var app: String { box.entry.app }

    /// Whether it has outcomes not yet queued.
    var hasUnqueued: Bool { !accepted.isEmpty || !others.isEmpty || rest != nil || delayed != nil }

    /// The tag of notification `index`.
    func tag(_ index: Int) -> UInt64 { serial << 10 | UInt64(index) }
}
