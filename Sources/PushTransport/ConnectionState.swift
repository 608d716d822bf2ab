/// The life of one client connection to APNs, as a pure value: events in, decisions out. No I/O
/// happens here, so every rule is tested without sockets (Tests/PushTransportTests).
///
/// ```
///   connecting ──TLS + h2──▶ awaitingSettings ──server SETTINGS──▶ ready ──GOAWAY / retire──▶ draining ──last stream──▶ closed
///        │                        │                                  │                          │
///        └─────── failure ────────┴──────────── failure ─────────────┴──────── failure ─────────┴─────────────────▶ closed
/// ```
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
/// - A connection whose streams keep timing out is retired.
public struct ConnectionState: Sendable, Equatable {
    /// Where the connection is.
    public enum Phase: Sendable, Equatable {
        case connecting
        /// TLS is up with ALPN h2; waiting for the server's first SETTINGS frame.
        case awaitingSettings
        case ready
        /// No new streams; waiting for the open ones to finish. `lastStreamID` is the GOAWAY's
        /// (nil when we retired the connection ourselves).
        case draining(lastStreamID: Int32?)
        case closed
    }

    /// What the owner should do after an event.
    public enum Action: Sendable, Equatable {
        case none
        /// Open a replacement connection (this one takes no more streams).
        case replace
        /// Close the connection now (nothing left in flight while draining).
        case close
    }

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
    /// The GOAWAY's debug reason, when one arrived.
    public private(set) var goawayReason: String?
    /// The lowest last-stream-id of the GOAWAYs received (kept after close).
    public private(set) var goawayLastStreamID: Int32?

    public init(localMaxStreams: Int, timeoutsBeforeRetirement: Int = 3) {
        self.localMaxStreams = max(1, localMaxStreams)
        self.timeoutsBeforeRetirement = max(1, timeoutsBeforeRetirement)
    }

    /// Streams that may be opened now.
    public var availableStreams: Int {
        guard phase == .ready else { return 0 }
        return max(0, min(remoteMaxStreams, localMaxStreams) - inFlight)
    }

    /// The current effective limit (for stats).
    public var streamLimit: Int { min(remoteMaxStreams, localMaxStreams) }

    /// TLS is up with ALPN h2 and the session exists: wait for the server's SETTINGS.
    public mutating func handshakeCompleted() {
        if phase == .connecting { phase = .awaitingSettings }
    }

    /// The server has accepted the connection (its SETTINGS arrived): streams may start.
    public mutating func established() {
        if phase == .connecting || phase == .awaitingSettings { phase = .ready }
    }

    /// A SETTINGS frame arrived; `maxConcurrentStreams` is the server's value now in force
    /// (nghttp2 reports 2^31-1 when the server never set one). Returns true when this made the
    /// connection ready (the first SETTINGS).
    @discardableResult
    public mutating func settingsReceived(maxConcurrentStreams: UInt32) -> Bool {
        remoteMaxStreams = Int(min(maxConcurrentStreams, UInt32(Int32.max)))
        guard phase == .awaitingSettings else { return false }
        phase = .ready
        return true
    }

    /// A stream was opened for a notification.
    public mutating func streamOpened() {
        inFlight += 1
    }

    /// A stream ended. `answered` is true when the server sent a response (any status).
    public mutating func streamClosed(answered: Bool) -> Action {
        inFlight = max(0, inFlight - 1)
        if answered { consecutiveTimeouts = 0 }
        if case .draining = phase, inFlight == 0 { return .close }
        return .none
    }

    /// A stream got no answer before its deadline and was reset.
    public mutating func streamTimedOut() -> Action {
        inFlight = max(0, inFlight - 1)
        consecutiveTimeouts += 1
        if consecutiveTimeouts >= timeoutsBeforeRetirement, phase == .ready {
            phase = .draining(lastStreamID: nil)
            return inFlight == 0 ? .close : .replace
        }
        if case .draining = phase, inFlight == 0 { return .close }
        return .none
    }

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
        case .connecting, .awaitingSettings, .ready:
            phase = .draining(lastStreamID: lastStreamID)
            return inFlight == 0 ? .close : .replace
        }
    }

    /// We decided to stop using the connection (e.g. the token it is bound to was replaced).
    public mutating func retire() -> Action {
        guard phase == .ready || phase == .connecting || phase == .awaitingSettings else { return .none }
        phase = .draining(lastStreamID: nil)
        return inFlight == 0 ? .close : .replace
    }

    /// The socket is gone.
    public mutating func closed() {
        phase = .closed
    }

    /// Whether a stream that was still open when the connection ended may be sent again: only
    /// when a GOAWAY said it was never processed (its id is above the last-stream-id).
    public func wasUnprocessed(streamID: Int32) -> Bool {
        guard let last = goawayLastStreamID else { return false }
        return streamID > last
    }

    /// True while the connection can still be used or is on its way to being usable.
    public var isActive: Bool {
        phase == .connecting || phase == .awaitingSettings || phase == .ready
    }
}
