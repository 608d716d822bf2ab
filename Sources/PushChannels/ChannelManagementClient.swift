#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CSwiftPushABI
import PushCore
import PushCrypto
import PushTransport
import PushClientCore
import CPushSystem

/// The channel management API (apns.md, "Broadcast push and channels"): create, read, delete
/// and list the broadcast channels of an app, on Apple's management host — a host of its own
/// (`api-manage-broadcast(.sandbox).push.apple.com`, ports 2196/2195), so a connection of its
/// own, with the device client's TLS, authentication, proxy and reconnect back-off.
///
/// These are rare, administrative calls, so each is a blocking request/response on the calling
/// thread: no I/O thread, no queue. Calls are serialized; the connection stays open between
/// them and is replaced when it goes away. What is retried: a request the server says it never
/// processed (REFUSED_STREAM, above a GOAWAY's last-stream-id), and one refused with
/// ExpiredProviderToken (after re-signing, on a new connection). Nothing else: a create whose
/// answer was lost may have created a channel, and only the caller can decide to list and see.
/// While a call waits, its connection is PINGed as a device connection is
/// (`PUSH_OPT_IDLE_PING_MS`, `PUSH_OPT_PING_TIMEOUT_MS`), so that a call with no time limit
/// still ends, with an error, when the server goes silent.
public final class ChannelManagementClient: @unchecked Sendable {
    /// Apple's management host and port for an APNs host (nil for any other host: a mock, a
    /// test server, where the caller names the management host).
    public static func managementEndpoint(forAPNsHost host: String) -> (host: String, port: Int)? {
        switch host {
        case PUSH_HOST_PRODUCTION: return (PUSH_CHANNELS_HOST_PRODUCTION, 2196)
        case PUSH_HOST_SANDBOX: return (PUSH_CHANNELS_HOST_SANDBOX, 2195)
        default: return nil
        }
    }

    /// What APNs answered.
    public struct Answer: Sendable, Equatable {
        /// The HTTP status.
        public var status: Int32
        /// `.none` on success, else the reason APNs gave (`.unknown` when not in the table).
        public var reason: APNsReason
        /// APNs's reason text ("" on success).
        public var reasonText: String
        /// `apns-request-id` of the answer.
        public var requestId: String
        /// `apns-channel-id` of a create's answer ("" otherwise).
        public var channelId: String
        /// The answer's body (read: the configuration; list: the ids).
        public var body: [UInt8]
        /// Whether the status means success for the request.
        public var succeeded: Bool { reason == .none }
    }

    /// Most resends of one request that the server never processed.
    static let maxResends = 5

    private let configuration: ClientConfiguration
    /// Where the requests go (the proxy's tunnel leads there).
    public let host: String
    public let port: Int
    private let tls: TLSContext
    private let token: ProviderToken?
    private let tunnelRequest: SecretBytes?
    private let loop: EventLoop
    /// The health PINGs' times (and the connect timeout), from the configuration.
    private let timers: ClientTimers
    /// The configuration's clock (`ClientConfiguration.timing.clock`), the token's too: every
    /// time a call reads (its timeout, the connect timeout, the back-off, the health PINGs, the
    /// connection's start) is this clock's, so one time base is compared with itself, and a
    /// `ManualClock` drives the client as it drives the device client (issue 34: these read
    /// CLOCK_MONOTONIC themselves). A call's wait ends by this clock: on a `ManualClock` only
    /// when the test moves it.
    private let clock: any PushClock
    private let lock = PThreadMutex()
    private var connection: ChannelConnection?
    private var backoff: ReconnectBackoff
    private var lastConnectionError: TransportError?
    private var random = SystemRandomNumberGenerator()

    /// Answers are small (a list of 10,000 ids is under 300 KB): kept whole, up to this bound;
    /// a larger one fails the call rather than pass for whole.
    public static let defaultMaxAnswerBytes = 4 << 20
    /// The largest answer body a call accepts (`defaultMaxAnswerBytes`; tests set less).
    let maxAnswerBytes: Int

    /// A client for the management API at `host`:`port`, authenticating as `configuration`
    /// says (token key or client certificate), through its proxy if it names one.
    public convenience init(configuration c: ClientConfiguration, host: String, port: Int) throws(ClientError) {
        try self.init(configuration: c, host: host, port: port, maxAnswerBytes: Self.defaultMaxAnswerBytes)
    }

    /// As above, with another bound on answers (tests).
    init(configuration c: ClientConfiguration, host: String, port: Int, maxAnswerBytes: Int) throws(ClientError) {
        self.maxAnswerBytes = maxAnswerBytes
        guard !host.isEmpty, port > 0, port <= 65535 else {
            throw ClientError(.badOption, "the channel management host must be named, with a port in 1...65535")
        }
        // The same check and the same words as the notification client's.
        token = try c.credentials.providerToken(clock: c.timing.clock)
        do throws(TransportError) {
            tls = try TLSContext.client(caFile: c.endpoint.caFile, certificate: c.credentials.clientCertificate)
            loop = try EventLoop()
        } catch {
            throw ClientError(error.kind == .tls ? .tls : .internalError, error.description)
        }
        configuration = c
        clock = c.timing.clock
        timers = ClientTimers(idlePingMillis: c.timing.idlePingMillis, pingTimeoutMillis: c.timing.pingTimeoutMillis,
                              connectTimeoutMillis: c.timing.connectTimeoutMillis)
        self.host = host
        self.port = port
        tunnelRequest = c.endpoint.proxy == nil ? nil : PushClient.connectRequest(host: host, port: port, credentials: c.endpoint.proxyCredentials)
        backoff = ReconnectBackoff(firstDelayMillis: c.recovery.reconnectFirstDelayMillis, maxDelayMillis: c.recovery.reconnectMaxDelayMillis)
    }

    deinit { close() }

    /// Closes the connection (the next call opens a new one).
    public func close() {
        lock.withLock {
            connection?.finish()
            connection = nil
        }
    }

    /// Sends `request` and waits up to `timeoutMillis` (negative: no limit; on the
    /// configuration's clock) for the answer.
    /// Errors: `.timeout`, `.connect`, `.tls` (with the reason); APNs's refusals are answers.
    public func send(_ request: ChannelRequest, timeoutMillis: Int32) -> Result<Answer, ClientError> {
        lock.lock()
        defer { lock.unlock() }
        let deadline: UInt64? = timeoutMillis < 0 ? nil : clock.monotonicNanos() + UInt64(timeoutMillis) * 1_000_000
        var resignedOnce = false
        var resends = 0
        while true {
            // Resends of requests never processed are safe, but a server that refuses every
            // stream must not keep a call (with no time limit) going round for ever.
            if resends > Self.maxResends {
                return .failure(ClientError(.connect, "\(host):\(port) refused the \(request.method) \(request.path) \(resends) times without processing it"))
            }
            let conn: ChannelConnection
            switch connect(deadline: deadline) {
            case .success(let c): conn = c
            case .failure(let e): return .failure(e)
            }
            let (authorization, generation) = token.map { t in t.currentWithGeneration() } ?? ([], 0)
            let exchange: ChannelConnection.Exchange
            switch conn.start(request, authority: host, authorization: token == nil ? nil : authorization, answerLimit: maxAnswerBytes) {
            case .success(let e):
                exchange = e
            case .failure(.unavailable):
                drop(conn) // GOAWAY'd or broken between calls: a new connection takes the request
                resends += 1
                continue
            case .failure(.refused(let why)):
                // Nothing was sent: not a reason to try other connections.
                return .failure(ClientError(.internalError, "the \(request.method) \(request.path) could not be sent: \(why)"))
            }
            conn.tokenGeneration = generation
            guard run(until: { exchange.finished }, deadline: deadline) else {
                // The answer may still come; the stream's memory goes with this connection.
                drop(conn)
                return .failure(ClientError(.timeout, "no answer from \(host):\(port) within \(timeoutMillis) ms; "
                    + "APNs may or may not have processed the \(request.method) \(request.path)"))
            }
            if exchange.unprocessed {
                // Never processed: safe to send again, on this connection unless it is going
                // away (`connect` replaces it then), as the device client resends refused streams.
                resends += 1
                continue
            }
            if exchange.status == 0 {
                drop(conn)
                let detail = conn.closedError?.description ?? "HTTP/2 error code \(exchange.resetCode)"
                return .failure(ClientError(.connect, "the connection to \(host):\(port) failed before the answer (\(detail)); "
                    + "APNs may or may not have processed the \(request.method) \(request.path)"))
            }
            if exchange.truncated {
                return .failure(ClientError(.internalError, "the answer from \(host):\(port) to \(request.method) \(request.path) "
                    + "is larger than \(maxAnswerBytes) bytes; it was not read"))
            }
            var answer = Self.answer(exchange, request: request)
            switch answer.reason.retryClass {
            case .refused:
                // Credentials refused: later calls back off, as the device client's connections do.
                _ = backoff.failed(now: clock.monotonicNanos(), attemptStartedNanos: conn.state.startedNanos, unit: unit())
                lastConnectionError = TransportError(.closed, "APNs refused the credentials: \(answer.reasonText)")
                drop(conn)
            case .token:
                break
            default:
                // Any other answer means the credentials were accepted: the back-off is over.
                backoff.succeeded()
                token?.accepted(generation: generation)
            }
            if answer.reason == .expiredProviderToken, let token, !resignedOnce {
                switch token.expiredRejection(generation: generation) {
                case .resigned, .alreadyReplaced:
                    // Once, with a fresh token, on a new connection (as the device client does).
                    resignedOnce = true
                    drop(conn)
                    continue
                case .clockSuspect(let iat, let localTime):
                    answer.reasonText = ProviderToken.clockSuspectText(iat: iat, localTime: localTime)
                }
            }
            return .success(answer)
        }
    }

    // MARK: - Connections

    /// The open connection, or a new one once the back-off allows, within `deadline`.
    private func connect(deadline: UInt64?) -> Result<ChannelConnection, ClientError> {
        if let c = connection {
            // Between calls nothing runs the loop: take what arrived meanwhile (a GOAWAY, the
            // server closing an idle connection) so that no request goes out on a dead one.
            _ = loop.runOnce(timeoutMillis: 0)
            if c.state.phase == .ready { return .success(c) }
            drop(c)
        }
        var now = clock.monotonicNanos()
        if !backoff.mayAttempt(now: now) {
            let wait = backoff.nextAttemptNanos
            if let deadline, wait > deadline {
                return .failure(ClientError(.connect, "backing off from \(host):\(port) for \((wait - now) / 1_000_000) ms after refusals"
                    + (lastConnectionError.map { ": \($0.description)" } ?? "")))
            }
            // Only the back-off's own time passes here: the caller asked to wait this long.
            while now < wait {
                _ = loop.runOnce(timeoutMillis: Int32(min((wait - now) / 1_000_000 + 1, 1000)))
                now = clock.monotonicNanos()
            }
        }
        backoff.attemptStarted()
        let started = clock.monotonicNanos()
        let conn: ChannelConnection
        do throws(TransportError) {
            conn = try open()
        } catch {
            return .failure(failedAttempt(error, started: started))
        }
        connection = conn
        guard run(until: { conn.state.everEstablished || conn.state.phase == .closed }, deadline: connectDeadline(deadline, started: started)) else {
            drop(conn)
            return .failure(failedAttempt(TransportError(.connect, "no connection within the connect timeout"), started: started))
        }
        if !conn.state.everEstablished {
            drop(conn)
            return .failure(failedAttempt(conn.closedError ?? TransportError(.connect, "the connection closed"), started: started))
        }
        return .success(conn)
    }

    /// A non-blocking connection attempt to the first address that takes one.
    private func open() throws(TransportError) -> ChannelConnection {
        let target = configuration.endpoint.proxy ?? (host: host, port: port)
        var untried = try configuration.endpoint.resolver.resolve(host: target.host, port: target.port)
        let fd = try SocketConnect.startFirst(of: &untried)
        let ssl = try tls.clientSSL(fd: fd, host: host)
        let conn = ChannelConnection(loop: loop, fd: fd, ssl: ssl, clock: clock)
        conn.tunnel.request = tunnelRequest
        return conn
    }

    private func failedAttempt(_ error: TransportError, started: UInt64) -> ClientError {
        _ = backoff.failed(now: clock.monotonicNanos(), attemptStartedNanos: started, unit: unit())
        lastConnectionError = error
        return ClientError(error.kind == .tls ? .tls : .connect, "cannot connect to \(host):\(port): \(error.description)")
    }

    private func drop(_ conn: ChannelConnection) {
        conn.finish()
        if connection === conn { connection = nil }
    }

    private func connectDeadline(_ deadline: UInt64?, started: UInt64) -> UInt64 {
        let connectBound = started + UInt64(max(configuration.timing.connectTimeoutMillis, 1)) * 1_000_000
        return deadline.map { min($0, connectBound) } ?? connectBound
    }

    /// Runs the event loop on this thread until `done` or `deadline` (nil: no limit), checking
    /// the connection's health every scan interval as the device client's I/O thread does.
    private func run(until done: () -> Bool, deadline: UInt64?) -> Bool {
        while !done() {
            let now = clock.monotonicNanos()
            if let deadline, now >= deadline { return false }
            connection?.checkHealth(now: now, timers: timers)
            if done() { break } // an unanswered PING closed the connection
            var wait = deadline.map { Int32(min(($0 - now) / 1_000_000 + 1, 1000)) } ?? 1000
            if timers.idlePingNanos > 0 { wait = min(wait, Int32(ClientTimers.scanIntervalNanos / 1_000_000)) }
            _ = loop.runOnce(timeoutMillis: wait)
        }
        return true
    }

    private func unit() -> Double { Double(random.next() >> 11) / Double(1 << 53) }

    private static func answer(_ e: ChannelConnection.Exchange, request: ChannelRequest) -> Answer {
        var a = Answer(status: e.status, reason: .none, reasonText: "", requestId: e.requestId, channelId: e.channelId, body: e.body)
        if !request.isSuccess(status: e.status) {
            // A refusal without a body (some proxies, a 405) still says what happened.
            let found = e.body.withUnsafeBytes { APNsResponse.reasonText(in: $0) }
            a.reasonText = found.isEmpty ? "HTTP \(e.status)" : found
            a.reason = APNsReason(text: found)
        }
        return a
    }
}
