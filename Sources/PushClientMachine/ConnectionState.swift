import PushCore

/// The life of one client connection to APNs, as a pure value: events in, actions out. It is
/// the one place that decides a connection's fate (its phase, its stream capacity, when it is
/// retired, PINGed, timed out or closed, and how its end counts for the back-off); the owner
/// (`PushClient`) performs the actions it returns (`perform(_:on:now:)`). No I/O happens here, so
/// every rule is tested without sockets (Tests/PushClientCoreTests/ConnectionState*Tests.swift).
///
/// ```
///   connecting ─TCP─▶ [tunneling] ─proxy 2xx─▶ handshaking ─TLS + h2─▶ awaitingSettings ─SETTINGS─▶ ready
///                                                                                                    │
///                                      GOAWAY, retired (timeouts, 5xx, refusals, pool shrink) ───────┤
///                                                                                                    ▼
///   closed ◀────────────────────── socket gone (any phase: failure, timeout, PING unanswered) ◀── draining ──last stream──▶ close
/// ```
///
/// The socket under it (`TLSH2Socket`) keeps only a mechanical I/O mode for its own event
/// handling (which step to run on a readable/writable event); it reports each step here
/// (`tcpConnected`, `tunnelOpened`, `handshakeCompleted`, `closed`) and nobody checks its mode
/// from outside, so callers look at one phase: this one. Stream capacity is read on the hot path
/// (`availableStreams`): plain stored fields, no allocation.
///
/// Implementation notes (facts from `docs/apns.md`):
/// - A connection is ready only once the server's SETTINGS frame has arrived (APNs sends it at
///   once). With TLS 1.3 the client finishes its handshake before the server has checked the
///   client certificate, so "TLS is up" does not yet mean "the server accepted us".
/// - Stream capacity starts at 1: with token auth APNs allows one stream until a request with a
///   valid token succeeds, then raises MAX_CONCURRENT_STREAMS. Every SETTINGS change is
///   followed, including drops to 1 after rejections; nothing is sent beyond the current limit
///   (exceeding it costs a GOAWAY).
/// - After GOAWAY no new stream starts; streams above its last-stream-id were not processed and
///   may be sent again elsewhere (RFC 9113 §6.8), as may streams reset with REFUSED_STREAM.
/// - A connection whose streams keep timing out, or whose answers keep being 5xx, is retired;
///   so is one whose answer says APNs will not use it (expired token, IdleTimeout...).
public struct ConnectionState: Sendable, Equatable {
    /// Where the connection is.
    public enum Phase: Sendable, Equatable {
        /// TCP connect in progress.
        case connecting
        /// HTTP CONNECT sent to a proxy; waiting for its answer.
        case tunneling
        /// TLS handshake in progress.
        case handshaking
        /// TLS is up with ALPN h2; waiting for the server's first SETTINGS frame.
        case awaitingSettings
        /// The server's SETTINGS arrived: streams may start, up to `availableStreams`.
        case ready
        /// No new streams; waiting for the open ones to finish. `lastStreamID` is the GOAWAY's
        /// (nil when we retired the connection ourselves).
        case draining(lastStreamID: Int32?)
        /// The socket is gone; nothing more happens.
        case closed
    }

    /// What the owner should do after an event.
    public enum Action: Sendable, Equatable {
        /// Nothing to do.
        case none
        /// The connection takes no more streams: open a replacement (move it out of the pool);
        /// it closes once its last stream ends.
        case replace
        /// Close the connection now, orderly (nothing left in flight while draining).
        case close
        /// Send a health PING (its time is noted here).
        case ping
        /// Close the connection now with this failure: its streams end as connection lost.
        case fail(Failure)
    }

    /// Why a connection is given up on by a timer.
    public enum Failure: Sendable, Equatable {
        /// TCP, the proxy tunnel or TLS took longer than the connect timeout.
        case connectTimedOut
        /// TLS came up but the server's SETTINGS did not come within the connect timeout.
        case settingsTimedOut
        /// The health PING went unanswered for longer than the PING timeout.
        case pingUnanswered
    }

    /// How a stream ended, as far as its connection is concerned.
    public enum StreamEnd: Sendable, Equatable {
        /// APNs accepted the notification (200).
        case accepted
        /// An error answer with this reason.
        case rejected(APNsReason)
        /// Ended without an answer: refused (REFUSED_STREAM) or reset by the server.
        case unanswered
    }

    /// How the end of the connection counts for the reconnect back-off (`ClientCore.backoff`).
    public enum Ending: Sendable, Equatable {
        /// Already accounted for: a notification was accepted on it (the back-off was reset),
        /// or a credential refusal on it was counted as the attempt's failure.
        case counted
        /// A failed connection attempt: it never became ready, or nothing sent on it was answered.
        case failedAttempt
        /// An ordinary end (an idle close, a GOAWAY after answers): not a refusal.
        case ordinary
    }

    /// How far the connection got: milestones only ever advance, while the phase also moves on
    /// to draining and closed, which forget where the connection had been.
    public enum Milestone: Int, Sendable, Comparable {
        /// Created, its TCP connect in progress.
        case started
        /// The TCP connect completed.
        case tcpConnected
        /// TLS came up with ALPN h2.
        case tlsUp
        /// The server's SETTINGS arrived (it was ready).
        case established
        /// Earlier milestones order first.
        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// What the connection's past says about its end (read by `ending` and the owner's log).
    public struct History: Sendable, Equatable {
        /// The furthest milestone reached.
        public internal(set) var furthest = Milestone.started
        /// Some notification was written to it.
        public internal(set) var sentAny = false
        /// Some stream on it got an answer that was not a credential refusal.
        public internal(set) var answered = false
        /// A notification was accepted on it: only then is a lost connection replaced at once;
        /// one that dies before (a refused certificate, a broken proxy) backs off like a failed
        /// attempt, so a misconfiguration never becomes a tight reconnect loop.
        public internal(set) var hadSuccess = false
        /// A credential refusal on it was counted as a failed attempt (once per connection).
        public internal(set) var refusalCounted = false
        /// We retired it while it could still take streams (timeouts, 5xx, a refusal, the pool
        /// shrinking): its end is not a connection error. A connection already draining after
        /// the server's GOAWAY is the server's to end: retiring it later does not set this, so
        /// an abrupt loss of it is still reported (`endIsConnectionError`).
        public internal(set) var retiredByClient = false
    }

    /// Where the connection is: the one phase its owner checks.
    public private(set) var phase: Phase = .connecting
    /// The server's current MAX_CONCURRENT_STREAMS (1 until it says otherwise).
    public private(set) var remoteMaxStreams: Int = 1
    /// Our own cap on concurrent streams per connection.
    public let localMaxStreams: Int
    /// Streams open now.
    public private(set) var inFlight: Int = 0
    /// Timeouts since the last answered stream.
    public private(set) var consecutiveTimeouts: Int = 0
    /// After this many consecutive timeouts the connection is retired.
    public let timeoutsBeforeRetirement: Int
    /// 5xx answers since the last accepted notification.
    public private(set) var consecutiveServerErrors: Int = 0
    /// After this many consecutive 5xx answers the connection is retired (it may be a bad one).
    public let serverErrorsBeforeRetirement: Int
    /// The GOAWAY's debug reason, when one arrived.
    public private(set) var goawayReason: String?
    /// The lowest last-stream-id of the GOAWAYs received (kept after close).
    public private(set) var goawayLastStreamID: Int32?
    /// When the connection was started (the client clock's monotonic ns): the connect timeout
    /// counts from here, and so does a failed attempt's back-off.
    public let startedNanos: UInt64
    /// When the outstanding health PING was sent (0: none outstanding).
    public private(set) var pingSentNanos: UInt64 = 0
    /// What its past says about its end.
    public private(set) var history = History()

    /// A connection whose TCP connect was started at `startedNanos`, taking at most
    /// `localMaxStreams` concurrent streams, retired after `timeoutsBeforeRetirement` timeouts or
    /// `serverErrorsBeforeRetirement` 5xx answers in a row (each at least 1).
    public init(localMaxStreams: Int, timeoutsBeforeRetirement: Int = 3, serverErrorsBeforeRetirement: Int = 3,
                startedNanos: UInt64 = 0) {
        self.localMaxStreams = max(1, localMaxStreams)
        self.timeoutsBeforeRetirement = max(1, timeoutsBeforeRetirement)
        self.serverErrorsBeforeRetirement = max(1, serverErrorsBeforeRetirement)
        self.startedNanos = startedNanos
    }

    // MARK: - Capacity

    /// Streams that may be opened now.
    public var availableStreams: Int {
        guard phase == .ready else { return 0 }
        return max(0, min(remoteMaxStreams, localMaxStreams) - inFlight)
    }

    /// The current effective limit (for stats).
    public var streamLimit: Int { min(remoteMaxStreams, localMaxStreams) }

    /// True while the connection can still be used or is on its way to being usable.
    public var isActive: Bool {
        switch phase {
        case .connecting, .tunneling, .handshaking, .awaitingSettings, .ready: return true
        case .draining, .closed: return false
        }
    }

    /// Still on its way: TCP, a proxy tunnel, TLS, or waiting for the server's SETTINGS.
    public var isOpening: Bool {
        switch phase {
        case .connecting, .tunneling, .handshaking, .awaitingSettings: return true
        case .ready, .draining, .closed: return false
        }
    }

    // MARK: - Transport

    /// The TCP connect completed: a proxy tunnel or the TLS handshake follows.
    public mutating func tcpConnected(throughProxy: Bool) {
        guard phase == .connecting else { return }
        phase = throughProxy ? .tunneling : .handshaking
        history.furthest = max(history.furthest, .tcpConnected)
    }

    /// The proxy opened the tunnel: the TLS handshake starts inside it.
    public mutating func tunnelOpened() {
        if phase == .tunneling { phase = .handshaking }
    }

    /// TLS is up with ALPN h2 and the session exists: wait for the server's SETTINGS.
    public mutating func handshakeCompleted() {
        switch phase {
        case .connecting, .tunneling, .handshaking: phase = .awaitingSettings
        default: break
        }
        history.furthest = max(history.furthest, .tlsUp)
    }

    /// The server has accepted the connection (its SETTINGS arrived): streams may start.
    public mutating func established() {
        guard isOpening else { return }
        phase = .ready
        history.furthest = .established
    }

    /// A SETTINGS frame arrived; `maxConcurrentStreams` is the server's value now in force
    /// (nghttp2 reports 2^31-1 when the server never set one). Returns true when this made the
    /// connection ready (the first SETTINGS).
    @discardableResult
    public mutating func settingsReceived(maxConcurrentStreams: UInt32) -> Bool {
        remoteMaxStreams = Int(min(maxConcurrentStreams, UInt32(Int32.max)))
        guard phase == .awaitingSettings else { return false }
        phase = .ready
        history.furthest = .established
        return true
    }

    /// The socket is gone.
    public mutating func closed() {
        phase = .closed
    }

    /// The TCP connect had completed before the end (a failure earlier is the address's: the
    /// next address of the same resolution may be tried).
    public var reachedTCP: Bool { history.furthest >= .tcpConnected }

    /// TLS and HTTP/2 came up and the server's SETTINGS arrived (a failure before that is a
    /// failed connection attempt).
    public var everEstablished: Bool { history.furthest >= .established }

    // MARK: - Streams

    /// A stream was opened for a notification.
    public mutating func streamOpened() {
        inFlight += 1
        history.sentAny = true
    }

    /// A stream ended. `answered` is true when the server sent a response (any status).
    public mutating func streamClosed(answered: Bool) -> Action {
        inFlight = max(0, inFlight - 1)
        if answered { consecutiveTimeouts = 0 }
        if case .draining = phase, inFlight == 0 { return .close }
        return .none
    }

    /// A stream ended: as `streamClosed(answered:)`, and what its answer says about the
    /// connection: an accepted one shows it works (the 5xx run ends); a run of 5xx answers
    /// retires it, as does an answer saying APNs will not use it any more (an expired token,
    /// TooManyProviderTokenUpdates, IdleTimeout).
    public mutating func streamEnded(_ end: StreamEnd) -> Action {
        switch end {
        case .accepted:
            history.answered = true
            history.hadSuccess = true
            consecutiveServerErrors = 0
            return streamClosed(answered: true)
        case .unanswered:
            return streamClosed(answered: false)
        case .rejected(let reason):
            if !reason.isConnectionRefusal { history.answered = true }
            let closing = streamClosed(answered: true)
            switch reason.retryClass {
            case .backoff:
                consecutiveServerErrors += 1
                if consecutiveServerErrors >= serverErrorsBeforeRetirement { return merge(closing, retire()) }
            case .token, .connection:
                return merge(closing, retire())
            case .later, .never, .refused, .unknown, .local:
                break
            }
            return closing
        }
    }

    /// A stream got no answer before its deadline and was reset. Enough of them in a row
    /// retire a ready connection (by our decision); a draining one closes with its last stream,
    /// and stays retired by whoever retired it (us, or the server's GOAWAY).
    public mutating func streamTimedOut() -> Action {
        inFlight = max(0, inFlight - 1)
        consecutiveTimeouts += 1
        if consecutiveTimeouts >= timeoutsBeforeRetirement, phase == .ready {
            phase = .draining(lastStreamID: nil)
            history.retiredByClient = true
            return inFlight == 0 ? .close : .replace
        }
        if case .draining = phase, inFlight == 0 { return .close }
        return .none
    }

    /// Whether a stream that was still open when the connection ended may be sent again: only
    /// when a GOAWAY said it was never processed (its id is above the last-stream-id).
    public func wasUnprocessed(streamID: Int32) -> Bool {
        guard let last = goawayLastStreamID else { return false }
        return streamID > last
    }

    // MARK: - Ending

    /// GOAWAY arrived: stop taking streams at once and get a replacement.
    public mutating func goawayReceived(lastStreamID: Int32, reason: String?) -> Action {
        goawayReason = reason ?? goawayReason
        goawayLastStreamID = min(goawayLastStreamID ?? lastStreamID, lastStreamID)
        switch phase {
        case .closed:
            return .none
        case .draining(let previous):
            // A second GOAWAY may only lower the last-stream-id (RFC 9113 §6.8).
            phase = .draining(lastStreamID: min(previous ?? lastStreamID, lastStreamID))
            return inFlight == 0 ? .close : .none
        case .connecting, .tunneling, .handshaking, .awaitingSettings, .ready:
            phase = .draining(lastStreamID: lastStreamID)
            return inFlight == 0 ? .close : .replace
        }
    }

    /// We decided to stop using the connection (the pool shrinks, its stream ids ran out, an
    /// answer retired it): its end is not a connection error. One that already drains (after a
    /// GOAWAY, or retired before) or is closed is left as it is: the decision was made before,
    /// and not by this call.
    public mutating func retire() -> Action {
        guard isActive else { return .none }
        history.retiredByClient = true
        phase = .draining(lastStreamID: nil)
        return inFlight == 0 ? .close : .replace
    }

    /// A credential refusal was answered on it: returns true the first time (only that one
    /// counts as a failed attempt for the back-off).
    public mutating func countRefusal() -> Bool {
        if history.refusalCounted { return false }
        history.refusalCounted = true
        return true
    }

    /// How its end counts for the reconnect back-off.
    public var ending: Ending {
        if history.hadSuccess || history.refusalCounted { return .counted }
        // Refused before it could be used: no SETTINGS, or no answer to what it was sent.
        if !everEstablished || (history.sentAny && !history.answered) { return .failedAttempt }
        return .ordinary
    }

    /// Whether its end is reported as the last connection error (an abrupt loss is; our own
    /// retirement and an end already counted as a refusal are not).
    public var endIsConnectionError: Bool { !history.retiredByClient && !history.refusalCounted }

    // MARK: - Timers

    /// The connect timeout: a connection still opening after `timers.connectTimeoutNanos` is
    /// given up on (`.fail`); one whose TLS is up but whose server sent no SETTINGS says so.
    public func checkConnectTimeout(now: UInt64, timers: ClientTimers) -> Action {
        guard isOpening, timers.connectTimedOut(now: now, startedNanos: startedNanos) else { return .none }
        return phase == .awaitingSettings ? .fail(.settingsTimedOut) : .fail(.connectTimedOut)
    }

    /// Health, for a connection whose TLS is up: idle longer than the idle time, it gets a
    /// PING (`.ping`, noted as sent at `now`); a PING unanswered longer than the PING timeout
    /// gives it up (`.fail(.pingUnanswered)`). `lastInputNanos` is when bytes last arrived.
    public mutating func checkHealth(now: UInt64, lastInputNanos: UInt64, timers: ClientTimers) -> Action {
        guard history.furthest >= .tlsUp, phase != .closed else { return .none }
        switch timers.health(now: now, lastInputNanos: lastInputNanos, pingSentNanos: pingSentNanos) {
        case .fine: return .none
        case .sendPing:
            pingSentNanos = now
            return .ping
        case .pingUnanswered: return .fail(.pingUnanswered)
        }
    }

    /// The PING's acknowledgement arrived.
    public mutating func pingAcknowledged() {
        pingSentNanos = 0
    }

    /// Two actions from one event: closing wins over replacing (both move the connection out
    /// of the pool), either over nothing.
    private func merge(_ a: Action, _ b: Action) -> Action {
        if a == .close || b == .close { return .close }
        if a == .replace || b == .replace { return .replace }
        return a
    }
}
