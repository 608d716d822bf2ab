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
/// ClientCore+Events.swift, appends them to the caller's buffer) and carried out by
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
    /// Actions decided and not yet taken by the driver, in order (the array is reused).
    private var actions: [Action] = []
    private var actionsTaken = 0

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
        actions.reserveCapacity(64)
    }

    // MARK: - Actions

    /// The next action to carry out, in the order decided (nil: none is left).
    package mutating func nextAction() -> Action? {
        guard actionsTaken < actions.count else {
            if !actions.isEmpty {
                actions.removeAll(keepingCapacity: true)
                actionsTaken = 0
            }
            return nil
        }
        actionsTaken += 1
        return actions[actionsTaken - 1]
    }

    /// Some action waits to be carried out.
    package var hasActions: Bool { actionsTaken < actions.count }

    /// Appends the actions decided and not taken to `out`, in order, and forgets them: how an
    /// event called in its `actions:` form (ClientCore+Events.swift) returns its actions. No
    /// allocation: when `out` is empty the two buffers trade places, so the caller's buffer and
    /// the core's take turns, each keeping its capacity.
    @inline(__always)
    package mutating func moveActions(into out: inout [Action]) {
        if actionsTaken == actions.count {
            if actionsTaken != 0 { dropActions() }
            return
        }
        if out.isEmpty && actionsTaken == 0 {
            swap(&actions, &out)
        } else {
            out.append(contentsOf: actions[actionsTaken...])
            actions.removeAll(keepingCapacity: true)
        }
        actionsTaken = 0
    }

    /// Asks the driver to do `action`.
    package mutating func act(_ action: Action) { actions.append(action) }

    /// Asks the driver to report a log line if the log callback wants its level. The message
    /// is a plain `String`, built by the caller (an autoclosure reading the core would overlap
    /// the mutation): every line is about a connection or the pool, none is per notification.
    package mutating func log(_ level: LogLevel, _ event: ClientLog.Event, _ message: String) {
        guard let minLevel = logMinLevel, level.rawValue >= minLevel else { return }
        act(.log(level, event, message))
    }

    /// Forgets every action not yet taken (shutdown: what they were for is over).
    package mutating func dropActions() {
        actions.removeAll(keepingCapacity: true)
        actionsTaken = 0
    }

    /// The host and port connections go to, as the log names them.
    package var endpointText: String { "\(configuration.endpoint.host):\(configuration.endpoint.port)" }
}
