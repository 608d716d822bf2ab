/// MAX_CONCURRENT_STREAMS as APNs handles it on one connection (apns.md, "Transport",
/// "Streams per connection" and "Lessons" 1, 2, 5): a pure state machine. It takes the
/// connection's events and returns what to do; `MockConnection` executes it (submits SETTINGS,
/// writes the violation GOAWAY). Tested in memory (Tests/APNsMockTests/StreamLimitMachineTests.swift).
///
/// ```
///   token connection:  1 ──first 200's HEADERS sent──▶ configured ──rejection (fault)──▶ 1 (once acknowledged)
///                                                          ▲                               │
///                                                          └──next 200's HEADERS sent──────┘
///   other connections: configured from the start (a rejection may still drop it, as above)
/// ```
///
/// - Token connections start at 1 and are raised to the configured limit by a SETTINGS frame
///   announced once the first 200's HEADERS are sent (so the client sees them in that order).
/// - With `MockFaults.dropLimitToOneAfterRejection`, a non-200 answer drops the limit to 1 and
///   the next 200 raises it again.
/// - A client that opens a stream beyond the limit is refused: GOAWAY(REFUSED_STREAM,
///   `violationText`) and the connection closes.
///
/// Implementation: which limit a new stream is held to depends on what the client can know
/// (RFC 9113 §6.5.3: SETTINGS are acknowledged in order). A raise counts at once (the client
/// may use it as soon as it sees it); a drop counts only once acknowledged (until then nghttp2
/// resets streams over the new limit with RST_STREAM(REFUSED_STREAM), lesson 1's "reset
/// in-flight streams"). The initial limit counts as acknowledged from the first byte, as APNs
/// holds clients to it (it punishes those assuming nghttp2's default of 100 before its SETTINGS
/// arrive); with `lenient` (`--lenient-initial-limit`) it counts only once acknowledged.
/// Open streams are counted by the connection and passed in (`admits`).
struct StreamLimit: Equatable {
    /// What the connection is to do.
    enum Action: Equatable {
        /// Nothing.
        case none
        /// Send SETTINGS with MAX_CONCURRENT_STREAMS = the value, and report it with
        /// `announced(_:)` once submitted.
        case announce(UInt32)
        /// The client opened a stream beyond the limit: send GOAWAY(REFUSED_STREAM,
        /// `violationText`) after what is queued, and close.
        case refuseConnection
    }

    /// APNs's debug text for a stream-limit violation (apns.md, "Transport").
    static let violationText = "Maximum active streams violated for this endpoint."

    /// What the limit is raised to (`Configuration.maxConcurrentStreams`).
    let configured: UInt32
    /// The limit announced in the connection's first SETTINGS.
    let initial: UInt32
    /// Values announced and not yet acknowledged, oldest first.
    private var inFlight: [UInt32] = []
    /// The value last acknowledged (the initial one counts from the start unless lenient).
    private var acknowledged: UInt32
    /// The limit a new stream is held to: the largest of the acknowledged value and those in
    /// flight (a raise counts at once, a drop once acknowledged).
    private(set) var enforced: UInt32
    /// Raised after the first 200 (token connections start unraised).
    private var raised: Bool
    /// Dropped to 1 after a rejection and not raised again since.
    private var dropped = false
    /// The stream whose 200 raises the limit once its HEADERS are sent (0: none).
    private(set) var raiseAfterStream: Int32 = 0
    /// The connection is being refused: nothing more is announced.
    private var ended = false

    /// The machine of a new connection. `token`: the connection authenticates with provider
    /// tokens (it starts at one stream); `lenient`: the initial limit holds only once
    /// acknowledged.
    init(configured: UInt32, token: Bool, lenient: Bool) {
        self.configured = configured
        initial = token ? 1 : configured
        raised = !token
        acknowledged = lenient ? .max : initial
        enforced = acknowledged
    }

    /// A SETTINGS frame carrying `limit` was submitted (the initial one included).
    mutating func announced(_ limit: UInt32) {
        inFlight.append(limit)
        enforced = max(enforced, limit)
    }

    /// The client acknowledged the oldest SETTINGS frame in flight.
    mutating func acknowledgedSettings() {
        guard !inFlight.isEmpty else { return }
        acknowledged = inFlight.removeFirst()
        enforced = inFlight.reduce(acknowledged) { max($0, $1) }
    }

    /// Whether `streams` open request streams are within the limit.
    @inline(__always)
    func admits(_ streams: Int) -> Bool { streams <= Int(enforced) }

    /// The client opens a stream while `openStreams` are open.
    mutating func streamOpening(openStreams: Int) -> Action {
        guard !admits(openStreams + 1) else { return .none }
        // No raise on the way out: the connection is over.
        ended = true
        raiseAfterStream = 0
        return .refuseConnection
    }

    /// An answer was submitted on `stream`: `accepted` for a 200. A 200 arms the raise (the
    /// first one, or the first after a drop); a rejection drops the limit to 1 when
    /// `dropAfterRejection` (the fault) and the limit is up.
    @inline(__always)
    mutating func answered(stream: Int32, accepted: Bool, dropAfterRejection: Bool) -> Action {
        if accepted {
            if !raised || dropped {
                raised = true
                dropped = false
                raiseAfterStream = stream
            }
            return .none
        }
        guard raised, !dropped, dropAfterRejection, !ended else { return .none }
        dropped = true
        raiseAfterStream = 0
        return .announce(1)
    }

    /// The HEADERS frame of `stream`'s answer went out: the armed raise is announced.
    @inline(__always)
    mutating func headersSent(stream: Int32) -> Action {
        guard raiseAfterStream != 0, stream == raiseAfterStream else { return .none }
        raiseAfterStream = 0
        return ended ? .none : .announce(configured)
    }
}
