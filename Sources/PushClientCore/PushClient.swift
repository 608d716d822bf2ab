#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import PushClientMachine
import PushCore
import PushCrypto
import PushTransport
import CSwiftPushABI

/// Everything a client needs to know, with the defaults users get.
/// Options are set with `set(_:int:)` and `set(_:string:)` (ClientOptions.swift), which check
/// them against `PushOption` (Tables/options.tsv, where the defaults below come from too).
///
/// The settings are grouped by what they are about (where to connect, who we are, how big the
/// pool is, how long things may take, how failures are handled, where results go), each group a
/// stored struct. A client copies its configuration when it opens and only reads it after, from
/// any thread; nothing in it changes under a running client.
public struct ClientConfiguration: Sendable {
    /// Where to connect and whom to trust.
    public var endpoint = Endpoint()
    /// How the client authenticates: a token key or a client certificate.
    public var credentials = Credentials()
    /// Topic for notifications that name none.
    public var defaultTopic: [UInt8] = []
    /// Connections, I/O threads, streams and slots.
    public var pool = Pool()
    /// Deadlines, timeouts, health PINGs, and the clock they are measured by.
    public var timing = Timing()
    /// Retries of answered notifications, reconnects after refusals, retiring bad connections.
    public var recovery = Recovery()
    /// Where results and log events go.
    public var callbacks = Callbacks()
    /// nghttp2's allocator for the connections' sessions instead of each connection's own pool:
    /// tests set one that fails on demand. Not an option: no host sets it.
    var sessionMemory: SessionMemory?
    /// When set, the client reports the first start of each notification's request on a
    /// connection (submitted to nghttp2, whose frames go to the socket in the same loop turn),
    /// one tag per run of started tags equal above this many low bits (`takeStarted`): the
    /// worker (tags `serial << 10 | index`, shift 10) learns which entries had a request
    /// written in this life, one report per entry rather than per token. Not an option: only
    /// the worker sets it; nil (everyone else) costs nothing.
    package var startedTagShift: Int?

    /// The defaults: production APNs on 443, no credentials yet (`set` or the groups add them).
    public init() {}

    /// Where to connect and whom to trust.
    public struct Endpoint: Sendable {
        /// APNs host name, also the TLS server name that is verified.
        public var host = "api.push.apple.com"
        /// TCP port (443, or 2197).
        public var port = PushOption.port.defaultInt
        /// CA certificates (PEM) to trust instead of the system store.
        public var caFile: String?
        /// HTTP CONNECT proxy ("host", port).
        public var proxy: (host: String, port: Int)?
        /// "user:password" for the proxy (Basic), a secret cleared when freed.
        public var proxyCredentials: SecretBytes?
        /// Resolves the host (or the proxy's) on the client's resolver thread; tests substitute one.
        public var resolver: any AddressResolver = SystemResolver()

        /// Production APNs (`api.push.apple.com:443`), the system trust store, no proxy.
        public init() {}
    }

    /// How the client authenticates: a token key (`tokenKey`, `keyID`, `teamID`) or a client
    /// certificate (`clientCertificate`, or the files it is made from when the client opens).
    /// The secrets are in `SecretBytes`, cleared when the last reference goes; a client keeps
    /// none of them past its initializer (they end up inside OpenSSL's objects).
    public struct Credentials: Sendable {
        /// The token key as PEM text (from a .p8 file), in a buffer that is cleared when the last
        /// reference goes. The client parses it when it opens and keeps only OpenSSL's key.
        public var tokenKey: SecretBytes?
        /// `tokenKey` as an array, for callers that have one (the caller's array is not cleared:
        /// prefer `tokenKey` with `FileBytes.readSecret`).
        public var tokenKeyPEM: [UInt8]? {
            get { tokenKey?.arrayCopy }
            set { tokenKey = newValue.map { SecretBytes(copying: $0) } }
        }
        /// The token key's id (`kid`).
        public var keyID = ""
        /// The team id (`iss`).
        public var teamID = ""
        /// Certificate authentication (instead of a token key).
        public var clientCertificate: ClientCertificate?
        /// PEM certificate chain file (`PUSH_OPT_CERT_FILE`), made into `clientCertificate` with
        /// `certificateKeyFile` when the client opens (`resolvingCredentials`).
        public var certificateFile: String?
        /// PEM private key of `certificateFile` (`PUSH_OPT_CERT_KEY_FILE`; nil: the same file).
        public var certificateKeyFile: String?
        /// A .p12's path and bytes (`PUSH_OPT_P12_FILE`; the bytes are cleared when freed), opened
        /// with `p12Password` when the client opens, whichever of the two was set first.
        public var p12File: (path: String, bytes: SecretBytes)?
        /// The password of `p12File` (`PUSH_OPT_P12_PASSWORD`; nil: none), cleared when freed.
        public var p12Password: SecretBytes?

        /// No credentials: a client needs a token key or a certificate before it opens.
        public init() {}
    }

    /// Connections, I/O threads, streams and slots: how much the client carries at once.
    public struct Pool: Sendable {
        /// Connections in the pool. Two by default: measured against one mock server, two
        /// connections carry ~1.5x what one does (the server works on both at once), more add
        /// little; APNs itself recommends several.
        public var connections = PushOption.connections.defaultInt
        /// With a value from 1 to `connections - 1`, the pool sizes itself (`PoolSizing`): it
        /// starts with this many connections and opens more, up to `connections`, while every
        /// stream is in use and notifications wait; extra connections go again when demand stays
        /// low for `shrinkWindowMillis`. 0 (the default) or `connections`: a fixed pool.
        public var minConnections = PushOption.minConnections.defaultInt
        /// How long demand must stay low before a self-sized pool closes one connection.
        public var shrinkWindowMillis = PushOption.poolShrinkMs.defaultInt
        /// I/O threads (PushClientGroup), 1...16; the connections are divided between them. One
        /// by default: on two cores the server is the limit long before one thread is.
        public var ioThreads = PushOption.ioThreads.defaultInt
        /// Our cap on concurrent streams per connection (the server's limit also applies).
        public var maxStreamsPerConnection = PushOption.maxStreams.defaultInt
        /// Slots: queued + in flight + results not yet polled.
        public var queueCapacity = PushOption.queueCapacity.defaultInt

        /// The defaults; those of options come from `PushOption` (Tables/options.tsv).
        public init() {}
    }

    /// Deadlines, timeouts, health PINGs, and the clock they are measured by.
    public struct Timing: Sendable {
        /// How long a notification may wait for its outcome, from send.
        public var deadlineMillis = PushOption.deadlineMs.defaultInt
        /// How long a connection attempt may take.
        public var connectTimeoutMillis = PushOption.connectTimeoutMs.defaultInt
        /// A connection idle this long gets a PING (0: never).
        public var idlePingMillis = PushOption.idlePingMs.defaultInt
        /// A PING unanswered this long retires its connection.
        public var pingTimeoutMillis = PushOption.pingTimeoutMs.defaultInt
        /// The time every decision of the client reads: notification deadlines and latencies,
        /// retry delays, the reconnect back-off, PINGs, connect timeouts, the provider token's `iat`
        /// (`ClientTimers`, `RetryPolicy`, `ReconnectBackoff`, `ProviderToken`). Tests substitute a
        /// `ManualClock` to move time instead of waiting. (A caller's own blocking waits are real
        /// time: `CallerDeadline`.)
        public var clock: any PushClock = SystemClock.shared

        /// The defaults; those of options come from `PushOption` (Tables/options.tsv).
        public init() {}
    }

    /// Retries of answered notifications, reconnects after refusals, retiring bad connections.
    public struct Recovery: Sendable {
        /// The most answered attempts of a notification (429/5xx retries, within the deadline);
        /// resends of unprocessed writes are bounded by the deadline only. 1 turns retries off.
        /// Ten absorbs a brown-out of several seconds at the default retry delay.
        public var maxAttempts = PushOption.maxAttempts.defaultInt
        /// First delay before a 429/5xx answer is retried; doubled for each further attempt.
        public var retryDelayMillis = PushOption.retryDelayMs.defaultInt
        /// First reconnect delay after a refusal (see `ReconnectBackoff`), doubled per failure.
        public var reconnectFirstDelayMillis = ReconnectBackoff.defaultFirstDelayMillis
        /// Largest reconnect delay after refusals (`PUSH_OPT_RECONNECT_MAX_MS`).
        public var reconnectMaxDelayMillis = PushOption.reconnectMaxMs.defaultInt
        /// Consecutive stream timeouts that retire a connection.
        public var retireAfterTimeouts = PushOption.retireAfterTimeouts.defaultInt
        /// Consecutive 5xx answers that make a connection suspect enough to retire.
        public var retireAfterServerErrors = 3
        /// How long no connection may be made (every attempt failing) before queued and new
        /// notifications end at once FAILED Unreachable (`PUSH_OPT_UNREACHABLE_AFTER_MS`); 0: never.
        public var unreachableAfterMillis = PushOption.unreachableAfterMs.defaultInt

        /// The defaults; those of options come from `PushOption` (Tables/options.tsv).
        public init() {}
    }

    /// Where results and log events go: to the caller's C functions, called on the I/O thread,
    /// which waits for them (a slow result callback is logged).
    public struct Callbacks: Sendable {
        /// Results go to this callback (on the I/O thread) instead of to `poll`.
        public var result: ResultCallback?
        /// Log events go to this callback (on the I/O thread); silent without one.
        public var log: LogCallback?

        /// No callbacks: results wait for `poll`, log events go nowhere.
        public init() {}
    }
}

/// An APNs client: a pool of TLS + HTTP/2 connections driven by one I/O thread of its own, a
/// bounded set of notification slots, and the hand-off between the caller's threads and the
/// I/O thread.
///
/// Threads: `send`, `poll`, `waitUntilConnected` and `close` may be called from any thread.
/// Everything else runs on the I/O thread. Caller threads and the I/O thread meet only in
/// `handoff` (reachable only under its lock), and only to move chains of slot indices between
/// lists, so one lock operation covers a whole batch. What the I/O thread owns alone is `core`
/// (every decision and its bookkeeping, ClientCore.swift) and the connections' I/O; see
/// docs/architecture.md, "Threads and ownership".
public final class PushClient: @unchecked Sendable {
    // MARK: Set by init, read by any thread
    let configuration: ClientConfiguration
    let slots: SlotTable
    let loop: EventLoop
    let tls: TLSContext
    let token: ProviderToken?
    /// Request bytes and rules that never change (authority, default topic, deadline, retries).
    let constants: RequestConstants
    /// When connections may be opened (back-off after refusals), shared by a group's threads
    /// behind its own lock.
    let reconnect: ReconnectSchedule
    /// `reconnect` is a group's, shared with other I/O threads: each turn starts from its value.
    let sharesBackoff: Bool
    /// Told of results published (when this client is one I/O thread of a PushClientGroup).
    let resultSignal: ResultSignal?
    /// The pollable descriptor for event loops (shared by a group's threads).
    let readiness: ResultReadiness
    /// Where log events go.
    let log: ClientLog
    var thread = pthread_t()

    // MARK: Shared by callers and the I/O thread
    /// The only state caller threads and the I/O thread share, reachable only under its lock.
    let handoff = LockedHandoff()

    // MARK: I/O thread only
    /// Every decision of the I/O thread (dispatch, answers, the pool, deadlines, outcomes) and its
    /// bookkeeping, as a value (ClientCore.swift): this client feeds it events and carries out its
    /// actions. Touched by the I/O thread alone and never across a call out of it (the core
    /// calls nothing back), so without runtime exclusivity checks (a `swift_beginAccess` per use
    /// otherwise, several per notification).
    @exclusivity(unchecked) var core: ClientCore
    /// The core's outbox being published (`ClientCore.takeNews`), empty between publishes: the
    /// two swap, so neither allocates.
    @exclusivity(unchecked) var news = ResultOutbox()
    /// What the events reported to the core returned (their `actions:` form), carried out in
    /// order by `performActions` up to `actionsDone`; emptied (its capacity kept) when all are.
    /// Lent to the core for each event (the core keeps no buffer of its own), so nothing allocates.
    @exclusivity(unchecked) var actions: [ClientCore.Action] = []
    /// How many of `actions` are carried out (a nested `performActions` goes on from here).
    var actionsDone = 0
    /// The connections' sockets, TLS and nghttp2 sessions, by `ConnectionID.index` (what the core
    /// knows of each is its entry at the same index).
    var connections: [APNsConnection?] = []
    /// Resolves names off the I/O thread (asked by the core's `.resolve`).
    let resolverThread: ResolverThread
    /// The CONNECT request for the proxy, made once.
    let tunnelRequest: SecretBytes?
    /// The `authorization` header sent.
    var authorization = AuthorizationHeader()
    /// Results handed to the result callback are assembled here. Allocated at the end of `init`,
    /// after its last early `throw` (so that a throwing `init` leaks nothing).
    let callbackBuffer: UnsafeMutablePointer<push_result>
    /// Results per call of the result callback.
    static let callbackBatch = 256

    /// Creates the client and starts its I/O thread, which starts connecting at once.
    public convenience init(configuration: ClientConfiguration) throws(ClientError) {
        try self.init(configuration: configuration, sharedToken: nil, sharedSchedule: nil, resultSignal: nil, readiness: nil)
    }

    /// The full initializer, for PushClientGroup: its I/O threads share one provider token
    /// (one JWT per team and key) and one reconnect schedule (the back-off bound is per client),
    /// and `resultSignal` hears of every result published.
    init(configuration: ClientConfiguration, sharedToken: ProviderToken?, sharedSchedule: ReconnectSchedule?,
         resultSignal: ResultSignal?, readiness: ResultReadiness?) throws(ClientError) {
        self.resultSignal = resultSignal
        self.readiness = readiness ?? ResultReadiness()
        // Properties assigned directly (not through `set`) are moved into their options' ranges.
        var c = try configuration.resolvingCredentials()
        c.pool.connections = PushOption.connections.clamped(c.pool.connections)
        c.pool.maxStreamsPerConnection = PushOption.maxStreams.clamped(c.pool.maxStreamsPerConnection)
        c.pool.queueCapacity = PushOption.queueCapacity.clamped(c.pool.queueCapacity)
        c.recovery.maxAttempts = PushOption.maxAttempts.clamped(c.recovery.maxAttempts)
        // Credentials are used here and not kept: the key PEM and the certificate (a .p12's
        // bytes and password) end up inside OpenSSL's objects, which clear them when freed.
        var kept = c
        kept.credentials.tokenKey = nil
        kept.credentials.clientCertificate = nil
        kept.endpoint.proxyCredentials = nil // kept only inside tunnelRequest
        self.configuration = kept
        log = ClientLog(callback: c.callbacks.log)
        guard !c.endpoint.host.isEmpty else { throw ClientError(.invalidArgument, "host is empty") }
        guard (1...65535).contains(c.endpoint.port) else { throw ClientError(.badOption, "port \(c.endpoint.port) is out of range") }

        if let sharedToken, c.credentials.clientCertificate == nil {
            token = sharedToken
        } else {
            token = try c.credentials.providerToken(clock: c.timing.clock)
        }

        do {
            tls = try TLSContext.client(caFile: c.endpoint.caFile, certificate: c.credentials.clientCertificate)
            loop = try EventLoop()
        } catch {
            throw ClientError(error.kind == .tls ? .tls : .internalError, error.description)
        }
        let hostBytes = Array(c.endpoint.host.utf8)
        let a = UnsafeMutableRawBufferPointer.allocate(byteCount: hostBytes.count, alignment: 1)
        a.copyBytes(from: hostBytes)
        let t = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, c.defaultTopic.count), alignment: 1)
        t.copyBytes(from: c.defaultTopic)
        constants = RequestConstants(
            authority: UnsafeRawBufferPointer(a),
            defaultTopic: UnsafeRawBufferPointer(start: t.baseAddress, count: c.defaultTopic.count),
            deadlineNanos: UInt64(max(c.timing.deadlineMillis, 1)) * 1_000_000,
            retryPolicy: RetryPolicy(maxAnsweredAttempts: c.recovery.maxAttempts, baseDelayMillis: c.recovery.retryDelayMillis))
        tunnelRequest = c.endpoint.proxy == nil ? nil : Self.connectRequest(host: c.endpoint.host, port: c.endpoint.port, credentials: c.endpoint.proxyCredentials)
        let wakeLoop = loop
        resolverThread = ResolverThread(resolver: c.endpoint.resolver, onAnswer: { wakeLoop.wake() })
        slots = SlotTable(capacity: c.pool.queueCapacity)
        sharesBackoff = sharedSchedule != nil
        reconnect = sharedSchedule ?? ReconnectSchedule(firstDelayMillis: c.recovery.reconnectFirstDelayMillis,
                                                        maxDelayMillis: c.recovery.reconnectMaxDelayMillis)
        core = ClientCore(configuration: kept, slots: slots, retryPolicy: constants.retryPolicy, reconnect: reconnect, token: token, log: log)
        callbackBuffer = .allocate(capacity: Self.callbackBatch)

        let context = Unmanaged.passRetained(self).toOpaque()
        let rc = pthread_create(&thread, nil, { arg in
            let client = Unmanaged<PushClient>.fromOpaque(arg!).takeRetainedValue()
            client.runIOThread()
            return nil
        }, context)
        if rc != 0 {
            Unmanaged<PushClient>.fromOpaque(context).release()
            throw ClientError(.internalError, "cannot start the I/O thread: \(String(cString: strerror(rc)))")
        }
    }

    deinit {
        constants.deallocate()
        if let b = authorization.buffer {
            // The provider token is a bearer credential for up to an hour: clear it.
            OPENSSL_cleanse(b.baseAddress, b.count)
            b.deallocate()
        }
        callbackBuffer.deallocate()
    }
}

/// A C function that receives results, with the caller's pointer.
public struct ResultCallback: @unchecked Sendable {
    /// The function (`push_result_callback`).
    public let function: push_result_callback
    /// Passed back as the first argument; the caller keeps whatever it points to alive.
    public let userData: UnsafeMutableRawPointer?

    public init(function: push_result_callback, userData: UnsafeMutableRawPointer?) {
        self.function = function
        self.userData = userData
    }
}

/// An error from the client API: a status code and a message naming what was wrong (the one
/// `StatusError` of PushCore).
public typealias ClientError = StatusError


