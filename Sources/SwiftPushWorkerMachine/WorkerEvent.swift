/// What happens to a shard's machine: what its driver did for it, what the queue and the
/// clients answered, time passing, a stop.
public enum WorkerEvent: Sendable {
    /// The queue's connections are up (group and scripts set up).
    case connected
    /// Connecting failed.
    case connectFailed(QueueError)
    /// The queue answered request `id`.
    case replied(id: Int, QueueReply)
    /// Request `id` failed with an error reply (the connection is still up).
    case failed(id: Int, QueueError)
    /// The queue's connection was lost: every request not answered is lost with it.
    case connectionLost(QueueError)
    /// What the client took of a `send` action.
    case submitted(app: String, SubmitReport)
    /// Results from the clients.
    case results([NoteResult])
    /// The clients started a request of these notifications (the first of each entry's, per
    /// send: `ClientConfiguration.startedTagShift`): their entries were written in this life.
    case written([UInt64])
    /// Time passed (the driver's wait ended).
    case tick
    /// SIGTERM or SIGINT: stop reading, drain, settle, stop.
    case stop
}

/// What a shard's machine asks its driver to do.
public enum WorkerAction: Sendable {
    /// Connect the queue (the back-off before it is over): then `connected` or `connectFailed`.
    case connect
    /// Send `request` on `lane` (its replies come back in order per lane): then `replied` or
    /// `failed` with the same `id`, or `connectionLost`.
    case request(id: Int, QueueRequest, lane: Lane)
    /// Give the client of `app` these notifications (`SendItem`): then `submitted`.
    case send(app: String, [SendItem])
    /// Close every client now: what is in flight ends (Cancelled) and comes back as results.
    case closeClients
    /// A log line.
    case log(WorkerLogLine)
    /// Trouble with APNs to log (rate-limited) and count (`APNsEventLog`).
    case apnsEvent(APNsEventKind, app: String, detail: String)
    /// A settle succeeded: the outcomes it recorded, for `/metrics`.
    case recorded([OutcomeTally])
    /// The machine is done: it stopped with this many entries left pending (0: every entry it
    /// took was settled).
    case stopped(leftPending: Int)
    /// A failure retrying cannot fix (a wrong password, an untrusted certificate): stop now.
    case fatal(String)

    /// The queue's three connections: one for reads, claims and the rest; one for settles, so
    /// that Redis records a chunk of outcomes while the other reads and claims; one where a read
    /// of the fast lane waits for its next entry and that entry is claimed (`readFastNext`), so
    /// that a transactional notification is read the moment it is added, whatever the bulk
    /// lane's reads, claims and scripts keep the main connection busy with (issue 32).
    public enum Lane: Sendable, Equatable { case main, settle, fast }
}

/// One notification to send: its tag (returned with its result) and what it is.
public struct SendItem: Sendable {
    public var tag: UInt64
    package var note: WorkNote
    /// The entry it belongs to (its storage holds the note's bytes).
    public var entry: EntryBox
}

/// A read entry, shared (not copied) by everything that refers to it while it is held. A
/// multicast's payload is a range of its storage (`WorkEntry.sharedPayload`), which the send
/// path borrows for every token (`SendBatch`).
public final class EntryBox: Sendable {
    public let entry: WorkEntry

    init(_ entry: WorkEntry) {
        self.entry = entry
    }
}

/// A log line the machine asks for.
public struct WorkerLogLine: Sendable, Equatable {
    public enum Level: Sendable, Equatable { case info, warning, error }
    public var level: Level
    public var message: String
    public var fields: [String: String]

    public init(_ level: Level, _ message: String, _ fields: [String: String] = [:]) {
        self.level = level
        self.message = message
        self.fields = fields
    }
}
