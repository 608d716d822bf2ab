import PushCore

/// The client's I/O-thread logic as a value: events in, actions out. It decides what goes on
/// which connection (dispatch), what an answer, a reset or a lost connection means (answers),
/// when to open, retire and resize connections and how to back off (pool), what is past its
/// deadline and which connection needs a PING (deadlines), and gives every notification its one
/// outcome (outcomes). It owns the bookkeeping of all that as values: the queue (`SendQueue`),
/// the connections (`ConnectionPool` of `ConnectionEntry`s, each with its `ConnectionState`) and
/// the results not yet published (`ResultOutbox`).
///
/// It does no I/O and reads no clock: every event brings its `now`, and what needs a socket, a
/// thread or nghttp2 comes out as an `Action`, returned by the event (its `actions:` form,
/// ClientCore+Events.swift, appends them to the caller's buffer: the only way an action leaves
/// the core, which keeps none between events) and carried out by
/// `PushClient`, the driver, which owns the I/O thread, the sockets, TLS and the nghttp2 sessions,
/// and reports back what happened (a stream's id, a connection that started or failed to). So
/// every rule is tested in memory with made-up times (Tests/PushClientCoreTests/ClientCore*Tests.swift).
///
/// ```
///   driver                                   ClientCore
///   handoff's submissions ────── take ─────▶ queue.pending
///   loop turn (now, closing) ─── turn ─────▶ maintainPool, releaseDelayed, scan ──▶ .resolve, .connect,
///                                                                                  .startStreams, .cancelStream,
///   a read's facts ──────────── absorb ────▶ streamClosed → settle → complete       .flush, .ping, .close, .fail
///   a stream's id ───── streamsStarted ────▶ in flight on its connection
///   a socket's end ── connectionClosed ────▶ resend / fail its streams, reconnect ──▶ .connect
///                                            outbox ──────────────────────────────▶ publish (driver, under the lock)
/// ```
///
/// Slots are the storage: the core moves slot indices between its lists and writes a slot's
/// bookkeeping (attempts, its outcome); it never copies a notification. The driver writes the
/// facts it gets from nghttp2 into the slot (the stream id, the answer's headers and body).
///
/// Implementation notes:
/// - What becomes of one attempt is `RetryPolicy`'s decision (`settle`); what becomes of one
///   connection is its `ConnectionState`'s (`perform` carries out its actions); when connections
///   may be opened is its `backoff`'s (a `ReconnectBackoff` value), the pool's size `PoolSizing`'s.
/// - It calls nothing outside itself and takes no lock: the back-off's changes go out as
///   actions (`.backoff`) for the client's schedule, which a group's threads share (the driver
///   hands the shared value back with `adoptBackoff`, and a probe another thread holds with
///   `probeRefused`); the provider token is told and asked through actions (`.tokenAccepted`,
///   `.tokenExpired`, answered with `tokenVerdict`); log lines are actions (`.log`), which the
///   driver hands to the log callback; every random draw (jitter, apns-ids) comes from the
///   `random` source the driver seeds. It never calls back into the driver, so the driver keeps
///   it without runtime exclusivity checks (I/O thread only).
/// - The hot path is three calls per notification and allocates nothing: `takeStreams` and
///   `streamsStarted` around the driver's submits, and the stream's end in `absorb`.
package struct ClientCore {
    /// The notifications' slots (the client's table).
    package let slots: SlotTable
    /// What it reads of the client's configuration (the host and port the log names, the
    /// pool's, timing's and recovery's settings).
    package let configuration: Settings
    /// What becomes of an attempt (from maxAttempts and retryDelayMillis).
    package let retryPolicy: RetryPolicy
    /// PINGs and connect timeouts (from the timing options).
    package let timers: ClientTimers
    /// When connections may be opened (the back-off after refusals). The core decides with this
    /// value and reports each change (`.backoff`); in a group the driver replaces it with the
    /// threads' shared one between turns (`adoptBackoff`).
    package internal(set) var backoff: ReconnectBackoff
    /// The client signs provider tokens (token authentication): answers tell the token about
    /// itself through actions (`.tokenAccepted`, `.tokenExpired`), and the driver reports what
    /// the token made of an expiry (`tokenVerdict`). The core never calls the token.
    package let tokenAuthentication: Bool
    /// The lowest level the client's log callback wants (nil: there is none): a line below it
    /// is not even built. The callback itself stays with the driver, which runs it for each
    /// `.log` action.
    package let logMinLevel: Int32?
    /// Every random draw of the core: retry and reconnect jitter, apns-ids (seeded by the driver,
    /// or by a test).
    package var random: CoreRandom

    /// Notifications waiting for a stream or a retry delay, and how many are in flight (the
    /// driver hands submissions over with `take`, reads the gauges `queuedCount`, `inFlightCount`).
    package internal(set) var queue = SendQueue()
    /// The connections, and opening them.
    package var pool: ConnectionPool
    /// Outcomes and news not yet published (the driver takes them with `takeNews`).
    package internal(set) var outbox = ResultOutbox()
    /// When deadlines, health and the pool's size are next looked at.
    package var nextScanNanos: UInt64 = 0
    /// When a closing client stops, whatever is left (set by the first turn that sees the close).
    package var drainDeadline: UInt64?
    /// The reason of the last GOAWAY (for the stats).
    package var lastGoawayReason = ""
    /// Set while APNs refuses freshly signed tokens as expired (`TokenExpiryVerdict`):
    /// the text results name instead of the answer's.
    package var clockSuspectText: String?
    /// The last connection failure (published as `last_connection_error`): a notification that
    /// was never sent names it when its deadline passes.
    package var lastConnectionError: TransportError?
    /// Whether APNs could not be reached for `recovery.unreachableAfterMillis` (fail-fast).
    package var reachability = Reachability()
    /// The buffer of the event being reported: the caller's own, lent to the core for the
    /// event's length (`lend`, `takeBack`), so that what the event decides is appended straight
    /// to it; empty between events. There is no queue of actions in the core: an action leaves it
    /// only as what the event that decided it returns.
    private var decided: [Action] = []

    /// What the driver is asked to do. Each names its connection by `ConnectionID`; one for a
    /// connection that is gone by the time it is carried out is skipped.
    package enum Action {
        /// Resolve `host` on the resolver thread, then report `resolutionStarted(ticket:)` (and
        /// later its answer, `resolutionAnswered`).
        case resolve(host: String, port: Int)
        /// Start connection `id` to the first of `addresses` whose TCP connect starts, then report
        /// `connectStarted` with the addresses left, or `connectFailed`.
        case connect(ConnectionID, addresses: [SocketAddress])
        /// Start streams on `id`: `takeStreams`, submit each, `streamsStarted` (and
        /// `streamsNotStarted` for what nghttp2 refused), write them.
        case startStreams(ConnectionID)
        /// Reset stream `streamID` on `id` (its deadline passed; the notification is settled).
        case cancelStream(ConnectionID, streamID: Int32)
        /// Write what waits on `id` (the resets just asked for).
        case flush(ConnectionID)
        /// Send a health PING on `id`.
        case ping(ConnectionID)
        /// Close `id` in order: nothing is in flight on it.
        case close(ConnectionID)
        /// Close `id` now with `error` (a timer gave up on it); its end is then reported.
        case fail(ConnectionID, TransportError)
        /// The client is shutting down: send GOAWAY on `id`, write, close.
        case terminate(ConnectionID)
        /// A request carrying the provider token of `generation` was accepted: tell the token
        /// (`ProviderToken.accepted`), so that a later expiry may re-sign.
        case tokenAccepted(generation: Int)
        /// APNs called the provider token of `generation` expired on `id` (its answer's text
        /// `text`): ask the token what that means (`ProviderToken.expiredRejection`, which may
        /// sign a new one and reads the wall clock) and report it with `tokenVerdict`.
        case tokenExpired(ConnectionID, generation: Int, text: String)
        /// Report a log line to the client's log callback (only lines it wants are asked for).
        case log(LogLevel, ClientLog.Event, String)
        /// The core changed its back-off: make the change to the client's schedule too (for a
        /// probe the schedule refuses, report `probeRefused` before carrying out its `.connect`).
        case backoff(BackoffStep)
    }

    /// A core for `configuration`'s client; `backoff` is the client's back-off as it stands (a
    /// fresh one, or a group's shared one), `random` its one random source.
    package init(configuration: Settings, slots: SlotTable, retryPolicy: RetryPolicy, backoff: ReconnectBackoff,
         random: CoreRandom, tokenAuthentication: Bool, log: ClientLog) {
        self.configuration = configuration
        self.slots = slots
        self.retryPolicy = retryPolicy
        self.backoff = backoff
        self.random = random
        self.tokenAuthentication = tokenAuthentication
        logMinLevel = log.callback?.minLevel
        timers = ClientTimers(idlePingMillis: configuration.timing.idlePingMillis, pingTimeoutMillis: configuration.timing.pingTimeoutMillis,
                              connectTimeoutMillis: configuration.timing.connectTimeoutMillis)
        var sizing: PoolSizing?
        let c = configuration.pool
        if c.minConnections > 0 && c.minConnections < c.connections {
            sizing = PoolSizing(minimum: c.minConnections, maximum: c.connections,
                                shrinkWindowNanos: UInt64(max(c.shrinkWindowMillis, 1)) * 1_000_000)
        }
        pool = ConnectionPool(positions: c.connections, sizing: sizing)
    }

    // MARK: - Actions

    /// Lends the core `out`, the caller's buffer, at the start of an event: what the event
    /// decides is appended to it, after what it holds (a driver carrying out earlier actions
    /// still holds the rest). No copy and no allocation: the two arrays trade places.
    @inline(__always)
    mutating func lend(_ out: inout [Action]) {
        assert(decided.isEmpty, "an action was decided outside an event: it would never leave the core")
        swap(&decided, &out)
    }

    /// Gives the caller its buffer back at the end of an event, with what the event decided.
    @inline(__always)
    mutating func takeBack(_ out: inout [Action]) {
        swap(&decided, &out)
    }

    /// Runs `step`, an event or a part of one, with `out` lent as the buffer its actions go to
    /// (the in-memory tests drive parts such as `maintainPool` alone this way).
    mutating func deciding(into out: inout [Action], _ step: (inout ClientCore) -> Void) {
        lend(&out)
        step(&self)
        takeBack(&out)
    }

    /// Whether the core holds an action between events (never: each event's actions leave with
    /// it; the tests check it).
    var holdsActions: Bool { !decided.isEmpty }

    /// Asks the driver to do `action` (appended to the buffer of the event being reported).
    mutating func act(_ action: Action) { decided.append(action) }

    /// Asks the driver to report a log line if the log callback wants its level. The message
    /// is a plain `String`, built by the caller (an autoclosure reading the core would overlap
    /// the mutation): every line is about a connection or the pool, none is per notification.
    mutating func log(_ level: LogLevel, _ event: ClientLog.Event, _ message: String) {
        guard let minLevel = logMinLevel, level.rawValue >= minLevel else { return }
        act(.log(level, event, message))
    }

    /// The host and port connections go to, as the log names them.
    package var endpointText: String { "\(configuration.endpoint.host):\(configuration.endpoint.port)" }
}
