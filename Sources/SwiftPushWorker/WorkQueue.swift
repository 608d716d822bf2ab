/// Why a queue operation failed.
public struct QueueError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let description: String
    /// True when the queue's connection is gone: reconnect (with back-off) and try again. The
    /// operations are idempotent, so retrying one whose reply was lost is safe.
    public let connectionLost: Bool

    /// An error with `description`.
    public init(_ description: String, connectionLost: Bool) {
        self.description = description
        self.connectionLost = connectionLost
    }
}

/// Where a read entry stands, decided atomically by the queue when the worker takes it.
public enum ClaimState: Sendable, Equatable {
    /// Nobody recorded an outcome for its id: send it.
    case send
    /// Its outcome is already recorded (the acknowledgement was lost, e.g. a crash between the
    /// two): acknowledge without sending or recording again.
    case recorded
    /// Another entry (this stream id) owns the same notification id: this one is a duplicate.
    case duplicate(of: String)
}

/// What to do with one entry once its fate is known. Each is applied atomically with the
/// acknowledgement of the entry (never an acknowledgement without it).
public enum Settlement: Sendable {
    /// Record this outcome (unless one is recorded for its id already) and acknowledge.
    case record(OutcomeRecord)
    /// Acknowledge only (its outcome was recorded earlier).
    case acknowledge(entryID: String)
    /// Park the entry's fields in the delayed-retry set until `dueMillis` (UNIX ms) and
    /// acknowledge; it comes back as a new entry with the same `id` and `retries` + 1.
    case delay(entry: QueueEntry, id: String, dueMillis: Int64)

    /// The stream entry this settles.
    public var entryID: String {
        switch self {
        case .record(let o): return o.entryID
        case .acknowledge(let e): return e
        case .delay(let e, _, _): return e.entryID
        }
    }
}

/// The queue a worker consumes: read a batch, claim it, settle outcomes with their
/// acknowledgements, reclaim what dead consumers left. Redis Streams implements it
/// (`RedisStreamQueue`); NATS JetStream or Kafka could later.
public protocol WorkQueue: AnyObject {
    /// (Re)connects and makes sure the stream and the consumer group exist.
    func open() throws(QueueError)
    /// Up to `max` entries pending with this consumer (delivered to it and not acknowledged: a
    /// previous life's, or read just before a lost connection), in stream order after `cursor`
    /// (nil: from the start), with their delivery counts; empty when there are no more. Reads
    /// only: nothing is counted or changed.
    func ownPending(after cursor: String?, max: Int) throws(QueueError) -> [PendingEntry]
    /// Takes back these entries pending with this consumer (from `ownPending`), with their
    /// fields, without counting a delivery; entries no longer this consumer's are left out.
    func takeOwn(_ entryIDs: [String]) throws(QueueError) -> [QueueEntry]
    /// Counts one more delivery of each entry, just before a re-delivered entry is sent again
    /// (see docs/worker.md, "Dead letters"): the new counts in order, nil for an entry that is no
    /// longer this consumer's (another worker took it over: it must not be sent here).
    func countDelivery(_ entryIDs: [String]) throws(QueueError) -> [Int?]
    /// Up to `max` new entries, waiting up to `blockMillis` for the first (0: no wait). When a
    /// read begun by `beginReadNew` is outstanding, its entries are returned instead (the
    /// arguments are ignored): they are already this consumer's.
    func readNew(max: Int, blockMillis: Int) throws(QueueError) -> [QueueEntry]
    /// Starts reading up to `max` new entries without waiting for them (no blocking), so that
    /// the queue fetches the next batch while the caller sends this one; the next `readNew`
    /// returns them. Other operations may run meanwhile. At most one read is outstanding; if
    /// the connection is lost before `readNew`, the entries stay pending with this consumer
    /// (found by `ownPending`).
    func beginReadNew(max: Int) throws(QueueError)
    /// The entries of a read begun by `beginReadNew` ([] when none was begun), without ever
    /// starting a new read: for a stopping consumer.
    func takeReadAhead() throws(QueueError) -> [QueueEntry]
    /// Starts taking ownership of the notification ids of `entries` (pairs of id, stream id; an
    /// entry without a valid id passes nil), atomically, without waiting: the caller prepares
    /// the entries meanwhile. At most one claim is in flight.
    func beginClaim(_ entries: [(id: String?, entryID: String)]) throws(QueueError)
    /// The claim begun last: one state per entry, in order (empty when none is in flight).
    func finishClaim() throws(QueueError) -> [ClaimState]
    /// Starts applying the settlements atomically, in one step for the batch, without waiting:
    /// the caller reads and sends meanwhile. At most one settle is in flight; a failure
    /// (thrown by `finishSettle`) leaves it unknown whether it was applied, and applying it
    /// again is harmless.
    func beginSettle(_ settlements: [Settlement]) throws(QueueError)
    /// Waits for the settle begun last (returns at once when none is in flight).
    func finishSettle() throws(QueueError)
    /// Entries of other consumers idle longer than the queue's minimum idle time, now this
    /// consumer's, with their delivery counts (not raised: `countDelivery` does, when they are
    /// sent). Never this consumer's own entries.
    func reclaim(max: Int) throws(QueueError) -> [QueueEntry]
    /// Moves delayed entries due by `nowMillis` back into the stream; returns how many.
    func promoteDue(nowMillis: Int64, max: Int) throws(QueueError) -> Int
    /// Entries delivered and not yet acknowledged (every consumer), and entries not yet
    /// delivered (nil when the queue cannot tell): for metrics.
    func backlog() throws(QueueError) -> (pending: Int, lag: Int?)
}

extension WorkQueue {
    /// Claims `entries`' notification ids and waits for their states (`beginClaim` + `finishClaim`).
    public func claim(_ entries: [(id: String?, entryID: String)]) throws(QueueError) -> [ClaimState] {
        try beginClaim(entries)
        return try finishClaim()
    }

    /// Applies the settlements and waits (`beginSettle` + `finishSettle`).
    public func settle(_ settlements: [Settlement]) throws(QueueError) {
        try beginSettle(settlements)
        try finishSettle()
    }
}
