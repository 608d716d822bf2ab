import PushCore

/// What one shard's worker does, as a pure machine: it takes events (what its driver did, what
/// the queue and the clients answered, time passing, a stop) and returns actions (connect,
/// send a queue request, give the clients notifications, log, stop). No I/O and no clock of its
/// own: every event comes with the time (`WorkerTime`), so each rule is unit-tested in memory
/// (`InMemoryWorkQueue`, Tests/SwiftPushWorkerTests/ShardMachineTests) and the driver
/// (`WorkerDriver`) only moves bytes. The protocol and its guarantees: docs/worker.md.
///
/// Intake: reads (and re-reads of its own pending entries, and reclaims) are claimed, checked
/// and their notifications sent; in flight: results become outcomes, resends or delays;
/// settling: outcomes go to the queue in chunks, an entry's last one acknowledging and deleting
/// it, checkpoints recording what is done of entries still partly in flight; re-delivered
/// entries go out in paced groups, and past `max_deliveries` become dead letters; a stop
/// drains, settles and ends.
public struct ShardMachine {
    /// The figures it works by.
    public let settings: MachineSettings
    let reader: EntryReader

    /// What it did so far (printed at exit, exported as metrics).
    public struct Counters: Sendable, Equatable {
        public var read = 0, sent = 0, resent = 0, accepted = 0, rejected = 0, failed = 0
        public var duplicates = 0, reclaimed = 0, deadLettered = 0, delayed = 0, promoted = 0
        public var redisReconnects = 0, checkpoints = 0
        /// Entries left pending in the queue at the end (not settled whole).
        public var leftPending = 0
        /// Entries handed back at a stop (`QueueRequest.handBack`): pending, and at once
        /// reclaimable by any worker.
        public var handedBack = 0

        /// No counts yet (the driver adds the shards' up).
        package init() {}
    }
    public internal(set) var counters = Counters()
    /// The group's backlog, read at each maintenance round.
    public internal(set) var backlog: (pending: Int, lag: Int?) = (0, nil)

    // MARK: The queue's connection

    enum Link { case down, connecting, up }
    var link = Link.down
    /// Losing Redis backs off by the rule refused APNs connections follow: [d/2, d), d
    /// doubling from 100 ms to at most 5 s, reset by a successful connect.
    var backoff = ReconnectBackoff(firstDelayMillis: 100, maxDelayMillis: 5000)
    var connectAtNanos: UInt64 = 0
    var random: RandomSource

    /// What each request in flight is for.
    enum Purpose {
        /// A read of up to `asked` entries, sent at `sentNanos`, waiting in Redis up to
        /// `blockMillis` for the first.
        case read(asked: Int, reserved: Int, blockMillis: Int, sentNanos: UInt64)
        /// A read of the fast lane only, on its own connection, waiting in Redis up to
        /// `blockMillis` for the first entry (`readFastNext`).
        case readFast(asked: Int, reserved: Int, blockMillis: Int, sentNanos: UInt64)
        case claim([EntryBox], redelivered: Bool, reserved: Int)
        case settle(count: Int)
        case ownPending
        case takeOwn(redelivered: Bool, page: [String], taking: [String], last: Bool)
        case handBack
        case countDelivery(app: String, serials: [UInt64])
        case markWritten(add: [UInt64], drop: [String])
        case reclaim
        case promote
        case backlog
        case controls
        case park([EntryBox], fromPending: Bool, redelivered: Bool, reserved: Int)
        case budget(String, want: Int)
    }
    var nextRequestID = 1
    var requests: [Int: Purpose] = [:]

    // MARK: What it holds

    var held: [UInt64: HeldEntry] = [:]
    /// The serial of every entry held, by stream id (a reclaim must not take one of ours that is
    /// slow; a settle finds its entry).
    var heldByID: [String: UInt64] = [:]
    var nextSerial: UInt64 = 1
    /// Notifications held and not settled, and those reserved by reads and claims in flight:
    /// together bounded by `max_in_flight`.
    var heldNotes = 0
    var reservedNotes = 0
    /// Of `heldNotes`, the fast lane's (the bulk lane may hold at most max_in_flight less
    /// `fast_reserve`: ShardMachine+Lanes.swift).
    var fastHeldNotes = 0
    /// The most notifications a fast-lane entry of the last read carried (single entries: 1).
    var fastNotesPerEntry = 1
    /// Of `reservedNotes`, what the fast lane's read in flight reserved (out of
    /// `fast_reserve`: the bulk lane's room does not count it).
    var fastReservedNotes = 0
    /// No fast-lane read before this time (after one that came back empty without waiting).
    var nextFastReadNanos: UInt64 = 0
    /// When entries this machine scheduled (`send_at`) fall due: a promotion then
    /// (ShardMachine+Schedule.swift), in order.
    var scheduledWakes: [UInt64] = []
    /// The most notifications an entry of the last read carried (a read asks for as many
    /// entries as fit at that size; until the first read, the largest an entry may carry).
    var notesPerEntry = EntryKind.maxNotifications
    /// No read before this time (after one that came back short without waiting in Redis).
    var nextReadNanos: UInt64 = 0
    /// The last read came back full: the stream holds more than the worker takes in, so
    /// latency is the queue's and settles gather (`settleNext`). A short read means the worker
    /// keeps up: what it reads, and what it decides, goes at once.
    var behind = false
    /// Entries with outcomes decided and not yet queued for settling (`noteDecided`).
    var decidedUnqueued = Set<UInt64>()
    /// Tags waiting to be sent again.
    var waitingResend: [UInt64] = []
    /// Where each entry's settlement not yet sent is in `unsettled` (it merges there), as a
    /// position counted from the first settlement ever queued; `unsettledBase` is the position
    /// of `unsettled[0]`.
    var mergeable: [String: Int] = [:]
    var unsettledBase = 0
    /// Settlements queued, the first `settling` of them in the settle in flight.
    var unsettled: [QueuedSettlement] = []
    var settling = 0
    /// The position (as `mergeable`'s) of the last settlement queued with a 410 in it: while it
    /// is unsettled (at or past `unsettledBase`), the next settle goes without waiting, even
    /// when settles gather (`behind`).
    var urgentPosition = -1
    /// Notifications in `unsettled` (what a settle of all of it would carry).
    var unsettledNotes = 0
    /// Since when a read has been waiting for room to fill up (`readNext`), if one is.
    var readWaitSinceNanos: UInt64?
    /// After a failed settle, the next one waits until then.
    var settleRetryNanos: UInt64 = 0
    var settleFailures = 0

    // MARK: Re-delivery, maintenance, stop

    /// The re-read of this consumer's own pending entries under way, if any.
    var ownPass: OwnPendingPass? = OwnPendingPass(suspects: true)
    /// Another re-read is wanted once the one under way ends (it may have listed past an entry
    /// that has become ours to take back since).
    var ownPassAgain = false
    /// Re-delivered entries held until their turn (docs/worker.md, "Dead letters").
    var suspects: SuspectPacer
    /// Apps (and topics) whose credentials APNs refuses.
    var refusals: [String: [[UInt8]: CredentialRefusal]] = [:]
    var reclaimCursor = "-"
    var nextMaintenanceNanos: UInt64 = 0
    /// Where the machine is in its life (`Lifecycle`): one value, where four variables
    /// (`stopping`, `clientsClosed`, `finished` and the hand-back's step) could once be set in
    /// combinations no life has (issue 34).
    var lifecycle = Lifecycle.running
    /// Entries written in this life whose record is not sent yet, keys of entries settled whole
    /// to drop, and since when the oldest waits (`ShardMachine+Written`).
    var marksToAdd: [UInt64] = []
    var marksToDrop: [String] = []
    var marksSinceNanos: UInt64 = 0
    /// How idle a handed-back entry looks: about three years, past any `min_idle_ms`.
    static let handBackIdleMillis: Int64 = 3 * 365 * 86_400_000
    /// How long past `drain_ms` a stop waits for the hand-back's reply.
    static let handBackWaitNanos: UInt64 = 2_000_000_000
    /// The shard's campaign controls as last read (`ShardMachine+Campaigns`).
    var campaigns = CampaignBoard()

    /// A machine for one shard, with `apps`' policies, naming notifications by `namer`, not
    /// connected yet: give it `tick` to start. `seed` drives the back-off's jitter.
    public init(settings: MachineSettings, apps: [String: AppPolicy], namer: APNsIDNamer, seed: UInt64 = 0x5eed) {
        self.settings = settings
        reader = EntryReader(apps: apps, namer: namer)
        suspects = SuspectPacer(maxGroup: settings.batch, lastChance: settings.maxDeliveries - 1)
        random = RandomSource(seed: seed)
    }

    // MARK: - Events

    /// Handles `event` at time `t`; returns what to do now.
    public mutating func handle(_ event: WorkerEvent, at t: WorkerTime) -> [WorkerAction] {
        var out: [WorkerAction] = []
        if finished { return out }
        switch event {
        case .connected:
            connected(t, &out)
        case .connectFailed(let e):
            connectFailed(e, t, &out)
        case .replied(let id, let reply):
            if let purpose = requests.removeValue(forKey: id) { replied(purpose, reply, t, &out) }
        case .failed(let id, let e):
            if let purpose = requests.removeValue(forKey: id) { failed(purpose, e, t, &out) }
        case .connectionLost(let e):
            connectionLost(e, t, &out)
        case .submitted(let app, let report):
            submitted(app: app, report, t, &out)
        case .results(let results):
            handle(results, t, &out)
        case .written(let tags):
            written(tags, t)
        case .tick:
            break
        case .stop:
            beginStop(t, &out)
        }
        advance(t, &out)
        return out
    }

    /// When the machine next needs a `tick` (monotonic ns), if it waits for nothing else.
    public func nextWakeNanos() -> UInt64? {
        var next: UInt64?
        func consider(_ n: UInt64?) { if let n, n > 0 { next = min(next ?? n, n) } }
        if link == .down { consider(connectAtNanos) }
        if link == .up {
            if !stopping {
                consider(nextMaintenanceNanos)
                consider(nextReadNanos)
                consider(readWaitSinceNanos.map { $0 + coalesceNanos })
                consider(fastReadWakeNanos)
                consider(scheduledWakes.first)
            }
            if !unsettled.isEmpty && settling == 0 {
                consider(max(settleRetryNanos, settleGathers ? unsettled[0].queuedNanos + coalesceNanos : 1))
            }
            consider(suspects.nextGroupNanos)
            consider(marksDueNanos)
            consider(campaigns.nextReadNanos)
            // Not while its ask is in flight: its time has passed then, and the driver would
            // spin (poll without waiting) until the answer came.
            for c in campaigns.waiting.keys where !has({ if case .budget(c, _) = $0 { return true }; return false }) {
                consider(campaigns.nextAskNanos[c])
            }
        }
        for tag in waitingResend { consider(held[tag >> 10]?.tracks[Int(tag & 1023)].resendAtNanos) }
        for serial in decidedUnqueued {
            if let h = held[serial], let d = h.decidedSinceNanos { consider(h.urgent ? 1 : d + UInt64(settings.checkpointMillis) * 1_000_000) }
        }
        if stopping {
            consider(drainDeadlineNanos)
            if ownPass != nil && link == .up { consider(nextReadNanos) }
            if handBack == .asked { consider(drainDeadlineNanos + Self.handBackWaitNanos) }
        }
        return next
    }

    /// Whether it has stopped.
    public var isFinished: Bool { finished }
    /// Whether a stop is under way (no more reads).
    public var isStopping: Bool { stopping }
    /// Notifications in flight (sent, no result) and entries held.
    public var inFlightCount: Int { held.values.reduce(0) { $0 + $1.inFlight } }
    public var heldEntryCount: Int { held.count }
    public var unsettledCount: Int { unsettled.count }

    // MARK: - Requests

    /// Sends `request` on `lane` for `purpose`.
    mutating func request(_ request: QueueRequest, _ purpose: Purpose, lane: WorkerAction.Lane = .main, _ out: inout [WorkerAction]) {
        let id = nextRequestID
        nextRequestID += 1
        requests[id] = purpose
        out.append(.request(id: id, request, lane: lane))
    }

    /// Whether a request of this kind is in flight.
    func has(_ match: (Purpose) -> Bool) -> Bool { requests.values.contains(where: match) }

    // MARK: - What to do next

    /// Everything the machine may start now: connecting, settling, reading, sending what waited,
    /// maintenance, checkpoints, the end of a stop.
    mutating func advance(_ t: WorkerTime, _ out: inout [WorkerAction]) {
        if link == .down {
            if t.nanos >= connectAtNanos && !(stopping && t.nanos >= drainDeadlineNanos) {
                link = .connecting
                out.append(.connect)
            }
        }
        checkpoints(t, &out)
        if link == .up {
            refreshCampaigns(t, &out)
            askBudgets(t, &out)
            settleNext(t, &out)
            sendSuspects(t, &out)
            sendMarks(t, &out)
            if !stopping { maintain(t, &out) }
            if !stopping { promoteScheduled(t, &out) }
            // The pause after a short read is over: forgotten, or `nextWakeNanos` would keep
            // giving its time, passed, and the driver poll without waiting (a read that may not
            // wait in Redis comes back short whenever an entry set aside is due soon).
            if nextReadNanos <= t.nanos { nextReadNanos = 0 }
            readNext(t, &out)
            readFastNext(t, &out)
        }
        resendDue(t, &out)
        if stopping { stopIfDone(t, &out) }
    }
}

/// A small deterministic random source (SplitMix64) for the back-off's jitter: seeded, so that
/// a test sees the same delays every run.
struct RandomSource {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A number in [0, 1).
    mutating func unit() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
