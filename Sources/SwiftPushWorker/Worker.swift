#if canImport(Glibc)
import Glibc
#endif
import CSwiftPushABI
import PushCore
import PushTransport

/// The queue-fed sender: reads notifications from a `WorkQueue`, sends them through one
/// PushClient per app, and settles each entry exactly once (outcome recorded and acknowledged
/// atomically). See docs/worker.md for the protocol and its guarantees.
///
/// Threads: `run` owns everything on the calling thread; the clients' I/O threads only append
/// to the inbox; `requestStop` may be called from any thread (the signal thread).
public final class Worker {
    /// Counters of what the worker did (printed at exit, exported as metrics later).
    public struct Counters: Sendable, Equatable {
        public var read = 0, sent = 0, resent = 0, accepted = 0, rejected = 0, failed = 0
        public var acknowledgedOnly = 0, duplicates = 0, reclaimed = 0, deadLettered = 0, delayed = 0, promoted = 0
        public var redisReconnects = 0
        /// Entries left pending in the queue at exit (cancelled by the stop, or unsettled).
        public var leftPending = 0
    }

    /// One entry held in memory: sent and waiting for a result, or waiting to be resent. A
    /// class, so that looking one up by tag does not copy its arrays (it did, in the profile).
    final class Held {
        /// The entry (its delivery count raised when a re-delivered one is sent: `sendSuspects`).
        var entry: QueueEntry
        let note: QueuedNotification
        var sends = 0
        var attempts = 0
        var firstSendNanos: UInt64
        var resendAtNanos: UInt64 = 0

        init(entry: QueueEntry, note: QueuedNotification, firstSendNanos: UInt64) {
            self.entry = entry
            self.note = note
            self.firstSendNanos = firstSendNanos
        }
    }

    let configuration: WorkerConfiguration
    let queue: WorkQueue
    let inbox = ResultInbox()
    let clients: AppClients
    let parser: EntryParser
    var policy = ResultPolicy()
    let log: WorkerLog

    /// Sent or waiting to be resent, by tag.
    var held: [UInt64: Held] = [:]
    /// Stream ids of every entry held or waiting to be settled (a reclaim must not take one
    /// of ours that is merely slow).
    var heldEntries = Set<String>()
    var waitingResend: [UInt64] = []
    var unsettled: [Settlement] = []
    /// How many of `unsettled` (its first) are being settled by the settle in flight.
    var settling = 0
    var nextTag: UInt64 = 1
    /// Entries asked for by a read begun ahead (`WorkQueue.beginReadNew`) and not yet taken in:
    /// they count against the in-flight bound as if held. 0 when no read is outstanding.
    var readAheadCount = 0
    /// The re-read of our own pending entries under way (one at start; another after each lost
    /// Redis connection), or nil.
    var ownPendingPass: OwnPendingPass? = OwnPendingPass(suspects: true)
    /// Re-delivered entries held until their turn to be sent (docs/worker.md, "Dead letters").
    var suspects: SuspectPacer
    /// Apps, and their topics, whose credentials APNs refuses: per topic, as one of the reasons
    /// (UnrelatedKeyIdInToken) is. Looked up by app first, so that other apps' results pay one
    /// lookup while one app is refused.
    var refusals: [String: [[UInt8]: CredentialRefusal]] = [:]
    /// Trouble with APNs, logged as it happens and counted for /metrics.
    let events: APNsEventLog
    /// Each app's client's GOAWAY count when last looked at (`noteClientEvents`).
    var goawaysSeen: [String: UInt64] = [:]
    var stopping = false
    var drainDeadline: UInt64 = 0
    var nextReclaimNanos: UInt64 = 0
    /// Losing Redis backs off by the same rule as refused APNs connections (`ReconnectBackoff`):
    /// [d/2, d), d doubling from 100 ms to at most 5 s, reset by a successful connect.
    var redisBackoff = ReconnectBackoff(firstDelayMillis: 100, maxDelayMillis: 5000)
    /// What happened so far.
    public internal(set) var counters = Counters()
    /// What `/metrics` shows (published by the loop a few times a second).
    public let metrics = WorkerMetrics()
    var nextPublishNanos: UInt64 = 0
    var backlog: (pending: Int, lag: Int?) = (0, nil)

    /// A worker on `queue` with the clients of `configuration`'s apps (opened here).
    public init(configuration: WorkerConfiguration, queue: WorkQueue, log: WorkerLog = WorkerLog()) throws(ConfigurationError) {
        self.configuration = configuration
        self.queue = queue
        self.log = log
        events = APNsEventLog(log: log)
        suspects = SuspectPacer(maxGroup: configuration.batch)
        clients = try AppClients(configuration: configuration, inbox: inbox, events: events)
        metrics.showClients(clients.clients)
        metrics.showEvents(events)
        parser = EntryParser(apps: clients.policies)
        policy.unknownResults = ResultPolicy.UnknownResults(rawValue: configuration.unknownResults) ?? .resend
        policy.maxSends = configuration.maxSends
        policy.maxDelayedRetries = configuration.maxDelayedRetries
        policy.delayedRetryMillis = configuration.delayedRetryMillis
    }

    /// Asks `run` to stop reading, finish what is in flight (up to `drain_ms`), settle and
    /// return. Safe from any thread.
    public func requestStop() { inbox.requestStop() }

    /// Runs until a stop is requested and everything in flight is settled (or the drain time is
    /// over). Returns true when nothing it took was left pending (every entry it read was settled).
    public func run() -> Bool {
        // hiredis writes on this thread: a Redis that vanishes must give EPIPE (a lost
        // connection, reconnected), not SIGPIPE's default action of killing the process.
        IOThread.blockSIGPIPE()
        withExtendedLifetime(inbox) {
            connectQueue()
            while true {
                beginStopIfRequested()
                handle(inbox.take(waitMillis: 0))
                resendDue()
                sendSuspects()
                // A settle in flight is collected by the next intake, so that Redis runs it while
                // this thread sends and handles results; or below, when there is nothing to read.
                beginSettling()
                publishMetrics()
                // Done when everything is settled; or, past the drain time, whatever is left
                // stays pending in the queue (never acknowledged without its outcome).
                if stopping && ((held.isEmpty && unsettled.isEmpty && readAheadCount == 0) || MonotonicTime.nanos() >= drainDeadline) { break }
                if !stopping { maintain() }
                // A read begun ahead delivered its entries to this consumer already: they are
                // taken in even when stopping (left unread, they would stay pending).
                let took = stopping && readAheadCount == 0 ? 0 : readBatch()
                if took == 0 {
                    finishSettling()
                    // Nothing new to read or no room: wait for results (or the next resend).
                    if !held.isEmpty { handle(inbox.take(waitMillis: 20)) }
                }
            }
            finish()
        }
        return counters.leftPending == 0 && unsettled.isEmpty
    }

    /// Acts on a stop request once: no more reads, and the drain time starts. Also called while
    /// waiting for Redis, so that SIGTERM during an outage still ends the worker in `drain_ms`.
    func beginStopIfRequested() {
        guard inbox.isStopRequested, !stopping else { return }
        stopping = true
        inbox.noteStopSeen()
        drainDeadline = MonotonicTime.nanos() + UInt64(configuration.drainMillis) * 1_000_000
        // Re-delivered entries not sent yet stay pending, for the next life or a reclaim.
        for tag in suspects.takeAllWaiting() {
            guard let h = held.removeValue(forKey: tag) else { continue }
            heldEntries.remove(h.entry.entryID)
            counters.leftPending += 1
        }
        log.info("stopping: no more reads, draining", ["in_flight": String(held.count)])
    }

    /// Closes the clients: anything still in flight is cancelled and stays pending in the
    /// queue (never acknowledged without an outcome), for this consumer's next life or a reclaim.
    private func finish() {
        clients.close(drainMillis: 0)
        handle(inbox.take(waitMillis: 0))
        settleAll()
        // Whatever is still held (not settled, not already counted as left) stays pending too,
        // and so does what a read begun ahead delivered (out of drain time before its intake).
        counters.leftPending += heldEntries.count
        if readAheadCount > 0 {
            readAheadCount = 0
            do throws(QueueError) {
                // Only what was read ahead: never a new read, which would take more entries
                // into this stopping consumer's pending list.
                counters.leftPending += try queue.takeReadAhead().count
            } catch {
                log.error("the read begun ahead was lost; its entries stay pending", ["error": error.description])
                // How many is unknown: counted as one, so that the exit status still says so.
                counters.leftPending += 1
            }
        }
        nextPublishNanos = 0
        publishMetrics()
        log.info("stopped", counterFields())
    }

    func counterFields() -> [String: String] {
        let c = counters
        return ["read": String(c.read), "sent": String(c.sent), "resent": String(c.resent), "accepted": String(c.accepted),
                "rejected": String(c.rejected), "failed": String(c.failed), "ack_only": String(c.acknowledgedOnly),
                "duplicates": String(c.duplicates), "reclaimed": String(c.reclaimed), "dead_lettered": String(c.deadLettered),
                "delayed": String(c.delayed), "promoted": String(c.promoted), "redis_reconnects": String(c.redisReconnects),
                "left_pending": String(c.leftPending)]
    }

    /// Room for more entries: the back-pressure bound minus what is held, asked for ahead, and
    /// `taking` (a batch about to be held).
    func room(taking: Int = 0) -> Int {
        max(0, min(configuration.batch, configuration.maxInFlight - heldEntries.count - readAheadCount - taking))
    }

    /// Reclaims idle entries of dead consumers and promotes due delayed entries, every
    /// `reclaim_interval_ms`.
    private func maintain() {
        let now = MonotonicTime.nanos()
        guard now >= nextReclaimNanos else { return }
        nextReclaimNanos = now + UInt64(configuration.reclaimIntervalMillis) * 1_000_000
        do throws(QueueError) {
            backlog = try queue.backlog()
            let moved = try queue.promoteDue(nowMillis: wallMillis(), max: 1000)
            counters.promoted += moved
            guard room() > 0 else { return }
            let taken = try queue.reclaim(max: room())
            if !taken.isEmpty {
                counters.reclaimed += taken.count
                log.info("reclaimed idle entries", ["count": String(taken.count)])
                try intake(taken, redelivered: true)
            }
        } catch {
            queueFailed(error)
        }
    }

    /// Reads one batch (own pending entries first, then new ones) and takes it in.
    ///
    /// A full batch of new entries begins the read of the next one (`WorkQueue.beginReadNew`)
    /// as soon as its claim is sent, so Redis fetches batch k+1 while this thread parses and
    /// sends batch k: the loop waits for Redis less, and Redis waits for the loop less.
    private func readBatch() -> Int {
        let n = readAheadCount > 0 ? readAheadCount : room()
        guard n > 0 else { return 0 }
        do throws(QueueError) {
            if readAheadCount == 0, ownPendingPass != nil { return try reReadOwnPending(max: n) }
            readAheadCount = 0
            let entries = try queue.readNew(max: n, blockMillis: held.isEmpty && unsettled.isEmpty ? 500 : 0)
            try intake(entries, thenReadAhead: entries.count == n && !stopping)
            return entries.count
        } catch {
            queueFailed(error)
            return 0
        }
    }

    /// Records outcomes and acknowledgements: every one held, waiting for each chunk (at exit).
    func settleAll() {
        finishSettling()
        while !unsettled.isEmpty {
            beginSettling()
            finishSettling()
            if !unsettled.isEmpty && stopping && MonotonicTime.nanos() >= drainDeadline { return }
        }
    }

    /// The most settlements one script call carries.
    static let settleChunk = 500

    /// Sends the next chunk of `unsettled` to be recorded and acknowledged (one atomic script
    /// call) without waiting, so that Redis runs it while this loop reads, claims and sends on
    /// the other connection; nothing happens while a settle is in flight.
    func beginSettling() {
        guard settling == 0, !unsettled.isEmpty else { return }
        let chunk = Array(unsettled.prefix(Self.settleChunk))
        do throws(QueueError) {
            try queue.beginSettle(chunk)
            settling = chunk.count
        } catch {
            queueFailed(error)
        }
    }

    /// Waits for the settle in flight: its settlements are done. On a failure they stay in
    /// `unsettled` and go again (the settle script is idempotent).
    func finishSettling() {
        guard settling > 0 else { return }
        let n = settling
        settling = 0
        do throws(QueueError) {
            try queue.finishSettle()
        } catch {
            queueFailed(error)
            return
        }
        for s in unsettled.prefix(n) { heldEntries.remove(s.entryID) }
        metrics.outcomes(in: unsettled.prefix(n))
        unsettled.removeFirst(n)
    }

    /// A failed queue operation: reconnect with bounded, jittered back-off when the connection
    /// is gone (the operations are idempotent, so the caller simply retries); log otherwise.
    func queueFailed(_ error: QueueError) {
        if !error.connectionLost {
            log.error("queue operation failed", ["error": error.description])
            sleepMillis(nextRedisDelayMillis())
            return
        }
        log.error("lost Redis", ["error": error.description])
        // A settle in flight went with the connection: its settlements go again. So did a read
        // begun ahead: its entries are pending with us, found by the re-read below.
        settling = 0
        readAheadCount = 0
        connectQueue()
        // A batch read just before the loss may be pending with us without having been taken in
        // (the claim's reply never came): re-read our own pending entries, as at start, instead
        // of waiting min-idle for a reclaim, skipping what we hold (and counting no delivery).
        // A pass at start cut short by the loss goes on as one (what it finds is re-delivered).
        ownPendingPass = OwnPendingPass(suspects: ownPendingPass?.suspects ?? false)
    }

    /// Connects (again), backing off between attempts; gives up only when stopping and the
    /// drain time is over.
    /// Counts a Redis failure and returns how long to wait before the next attempt (ms).
    func nextRedisDelayMillis() -> Int {
        let now = MonotonicTime.nanos()
        let delay = redisBackoff.failed(now: now, attemptStartedNanos: now, unit: Double.random(in: 0..<1)) ?? redisBackoff.firstDelayNanos
        return Int(delay / 1_000_000)
    }

    func connectQueue() {
        while true {
            do throws(QueueError) {
                try queue.open()
                if redisBackoff.failures > 0 {
                    counters.redisReconnects += 1
                    log.info("connected to Redis again", [:])
                }
                redisBackoff.succeeded()
                return
            } catch {
                let wait = nextRedisDelayMillis()
                log.error("cannot reach Redis; retrying", ["error": error.description, "retry_ms": String(wait)])
                sleepMillis(wait)
                beginStopIfRequested()
                if stopping && MonotonicTime.nanos() >= drainDeadline { return }
            }
        }
    }

    /// Sleeps while still collecting results (the I/O threads keep delivering).
    func sleepMillis(_ ms: Int) {
        let until = MonotonicTime.nanos() + UInt64(ms) * 1_000_000
        while MonotonicTime.nanos() < until {
            let before = MonotonicTime.nanos()
            handle(inbox.take(waitMillis: min(50, ms)))
            events.flush()
            // take returns at once on a stop request the loop has not acted on yet: don't spin.
            if MonotonicTime.nanos() - before < 1_000_000 { usleep(10_000) }
        }
    }

    /// Hands the counters and gauges to the metrics (at most five times a second).
    func publishMetrics() {
        let now = MonotonicTime.nanos()
        guard now >= nextPublishNanos else { return }
        nextPublishNanos = now + 200_000_000
        let c = counters
        var open = 0
        for (app, client) in clients.clients {
            let stats = client.stats()
            open += Int(stats.connections_open)
            noteClientEvents(app: app, stats)
        }
        events.flush()
        var gauges: [String: Double] = ["in_flight": Double(held.count), "held_entries": Double(heldEntries.count),
                                        "unsettled": Double(unsettled.count), "connections_open": Double(open),
                                        "pending": Double(backlog.pending), "stopping": stopping ? 1 : 0]
        if let lag = backlog.lag { gauges["lag"] = Double(lag) }
        metrics.publish(counters: ["read": c.read, "sent": c.sent, "resent": c.resent, "acknowledged_only": c.acknowledgedOnly,
                                   "duplicates": c.duplicates, "reclaimed": c.reclaimed, "dead_lettered": c.deadLettered,
                                   "delayed": c.delayed, "promoted": c.promoted, "redis_reconnects": c.redisReconnects],
                        gauges: gauges)
    }

    func wallMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
