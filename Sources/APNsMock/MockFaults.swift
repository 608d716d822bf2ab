/// Faults the mock injects: set at start (`MockServer.Configuration.faults`) or at any time with
/// `MockServer.setFaults(_:)` (or `POST /faults` on the control interface).
///
/// Each models something APNs does that a provider must survive (apns.md, "Lessons"): GOAWAY
/// with a JSON reason, refused streams, the stream limit falling to 1 after rejections, 410 /
/// 429 / 500 / 503 answers, streams never answered, slow answers, connections that die, a
/// server that turns connections away for a while.
///
/// A request that has arrived in full is decided in this order: a stall (every Nth, or its
/// token), a 500 or 503 (every Nth, then the random rates), APNs's own validation (4xx) and the
/// server's device registrations, then 410 Unregistered and 429 TooManyRequests for the listed
/// tokens, else 200 (the handlers of `MockRequestChain`, in that order). `refuseEveryNthStream`
/// acts earlier, when a stream opens. Setting new faults restarts every counter: the
/// server-wide every-Nth counts, the random sequence (from `seed`) and the per-connection
/// request counts. Tokens are compared without regard to case.
public struct MockFaults: Sendable, Equatable {
    /// No faults: every valid request is answered 200 at once.
    public init() {}

    /// Per connection: after this many answered requests send GOAWAY(NO_ERROR, last-stream-id =
    /// the highest stream processed, debug data `{"reason": goawayReason}`). Requests on streams
    /// above it are not processed (not recorded); the connection closes once its open streams
    /// finish.
    public var goawayAfterRequests: Int? = nil
    /// The reason in the GOAWAY of `goawayAfterRequests` (apns.md: e.g. "Shutdown").
    public var goawayReason: String = "Shutdown"
    /// Every Nth request stream (counted server-wide) is reset with RST_STREAM(REFUSED_STREAM)
    /// as it opens, before processing (not recorded).
    public var refuseEveryNthStream: Int? = nil
    /// After a non-200 answer on a connection, send SETTINGS MAX_CONCURRENT_STREAMS=1; raise the
    /// limit again after the next 200 (apns.md, "Lessons" 1).
    public var dropLimitToOneAfterRejection: Bool = false
    /// Device token → timestamp (ms since the epoch): answered 410 Unregistered with that
    /// timestamp.
    public var unregisteredTokens: [String: Int64] = [:]
    /// Device tokens answered 429 TooManyRequests.
    public var tooManyRequestsTokens: Set<String> = []
    /// Every Nth request (server-wide) is answered 500 InternalServerError.
    public var status500EveryNth: Int? = nil
    /// Every Nth request (server-wide) is answered 503 ServiceUnavailable.
    public var status503EveryNth: Int? = nil
    /// The probability (0...1) that a request is answered 500, drawn from a generator seeded
    /// with `seed`.
    public var status500Rate: Double = 0
    /// The probability (0...1) that a request is answered 503 (after the 500 draw).
    public var status503Rate: Double = 0
    /// Every Nth request (server-wide) is never answered: its stream stays open and it is
    /// recorded with status 0 and reason "stalled" (apns.md, "Lessons" 4).
    public var stallEveryNth: Int? = nil
    /// Requests for these device tokens are never answered (recorded as stalled).
    public var stallTokens: Set<String> = []
    /// Answers are sent this many milliseconds (on the server's clock) after the input read that
    /// completed the request (a timer on the server's loop: nothing blocks).
    public var responseDelayMillis: Int = 0
    /// Per connection: after this many answered requests (the last answer written) close the
    /// TCP socket abruptly: no GOAWAY, and streams still open get nothing.
    public var killConnectionAfterRequests: Int? = nil
    /// A monotonic time on the server's clock (`Configuration.clock.monotonicNanos()`; the
    /// default system clock's is `MonotonicTime.nanos()`): until then every accepted socket is
    /// closed at once.
    public var refuseConnectionsUntil: UInt64? = nil
    /// A monotonic time on the server's clock (as `refuseConnectionsUntil`): until then every
    /// token-authenticated request
    /// is answered 403 ExpiredProviderToken, however fresh its token (what APNs does when the
    /// provider's clock is off: it judges the JWT's `iat` by its own clock).
    public var expireTokensUntil: UInt64? = nil
    /// Every connection that authenticates with a client certificate is closed right after the
    /// TLS handshake, before the server's SETTINGS, without a TLS alert: how a TLS 1.3 server
    /// refusing the certificate looks to the client (its own handshake had already completed).
    public var refuseClientCertificates: Bool = false
    /// Seeds the generator behind `status500Rate` and `status503Rate`, so a run can be repeated.
    public var seed: UInt64 = 1

    /// True when some fault must be checked per request: the I/O thread skips every
    /// per-request fault check otherwise, which keeps the accept-all path as fast as it was.
    /// The response delay is not one of them: it is a number read once per answer
    /// (`FaultState.delayMillis`), so a delay alone (the latency benchmark's mock) pays for no
    /// fault checks, counters or copies of the faults.
    var affectsRequests: Bool {
        goawayAfterRequests != nil || refuseEveryNthStream != nil || dropLimitToOneAfterRejection
            || !unregisteredTokens.isEmpty || !tooManyRequestsTokens.isEmpty
            || status500EveryNth != nil || status503EveryNth != nil || status500Rate > 0 || status503Rate > 0
            || stallEveryNth != nil || !stallTokens.isEmpty || killConnectionAfterRequests != nil
    }
}
