#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// One client connection of the mock: a TLS socket, the byte pump between it and an nghttp2
/// server session, and the APNs behaviour of the requests on it.
///
/// Lives on the server's I/O thread only. The pieces are in extensions: the byte pump and the
/// frame scanner (`+Wire`), the requests (`+Requests`), authentication (`+Auth`) and the
/// stream limit with the GOAWAYs (`+StreamLimit`); nghttp2 calls in through `MockCallbacks`.
///
/// Implementation: the mock has its own pump rather than `PushTransport.TLSH2Socket` because it
/// must act where nghttp2 offers no hook. APNs answers a client that opens more streams than
/// MAX_CONCURRENT_STREAMS allows with `GOAWAY(REFUSED_STREAM, "Maximum active streams violated
/// for this endpoint.")` and closes; nghttp2 would instead reset the stream or send its own
/// PROTOCOL_ERROR GOAWAY. So the pump scans frame headers as bytes arrive, stops feeding
/// nghttp2 at the offending HEADERS frame, and writes that GOAWAY itself.
final class MockConnection: EventHandler {
    /// Where the socket is in its life.
    enum Phase { case handshaking, open, closed }
    /// How requests on this connection are authenticated.
    enum Authentication {
        /// Not at all (no token keys, no client CA): an accept-all server.
        case none
        /// Provider tokens (`authorization: bearer <JWT>`).
        case token
        /// The TLS client certificate: the topics it allows (empty: any) and the topic of
        /// requests without `apns-topic`.
        case certificate(allowed: Set<String>, defaultTopic: String?)
    }

    /// Receive window per stream and for the connection: large, so that a client streaming
    /// many payloads never waits for WINDOW_UPDATE frames.
    static let streamWindow: UInt32 = 1 << 20
    static let connectionWindow: Int32 = 64 << 20
    /// APNs's debug text for a stream-limit violation (apns.md, "Transport").
    static let violationText = "Maximum active streams violated for this endpoint."

    /// The server this connection belongs to. `unowned(unsafe)`: the core owns its connections
    /// (and stops them before it goes), so it outlives each one, and a checked `unowned` costs
    /// a strong retain and release per access (about ten per request).
    unowned(unsafe) let core: MockServerCore
    let loop: EventLoop
    /// The core's timers, kept here so that scheduling an answer does not go through the
    /// unowned `core` reference (a strong retain and release of the core per answer).
    let timers: MockTimers
    /// The server's counters, held strongly: `deinit` counts the object's end there, and
    /// may run after the core is gone (the last delayed answer releases it).
    let ledger: MockLedger
    let fd: Int32
    let ssl: OpaquePointer
    /// The connection's serial number (1-based, in accept order), as records show it.
    let serial: Int
    /// Which of Apple's hosts this connection plays: APNs (device notifications and
    /// broadcasts) or the channel management host (apns.md: they are different hosts).
    let role: MockListener.Role
    var session: OpaquePointer?
    var phase = Phase.handshaking
    var authentication = Authentication.none

    // MARK: Wire state (see MockConnection+Wire.swift)

    var interest: UInt32 = EventLoop.readable
    var outBuf: UnsafeMutableRawPointer
    var outCap: Int
    var outStart = 0
    var outEnd = 0
    /// Input: `inHeadroom` bytes in front of each read leave room to put back the start of a
    /// frame header that the previous read cut off.
    let inBuf: UnsafeMutableRawPointer
    static let inHeadroom = 16
    static let inCap = 64 * 1024
    /// Bytes gathered from nghttp2 before they are written (one SSL_write per batch).
    static let batchBytes = 256 * 1024
    /// Set while nghttp2 is on the stack, so that a close waits until it returns.
    var inSessionCall = false
    var closeRequested = false
    /// Write what is queued, then close (a kill, or the violation GOAWAY).
    var closeAfterFlush = false
    /// nghttp2 has nothing more to say: after the violation GOAWAY, its output is not wanted.
    var sessionFinished = false
    /// Delayed answers were submitted and wait to be written: the timers flush this connection
    /// once the tick's batch is submitted (`MockTimers.fireDue`).
    var flushPending = false
    /// Answers of this connection waiting in `MockTimers` (which holds a reference to the
    /// connection while this is above 0).
    var scheduledAnswers = 0
    /// While answers are written one TLS record each: where the record being written ends in
    /// `outBuf` (a partial `SSL_write` leaves the rest of it for the next call). Also where a
    /// write that had to wait ends, in either mode: its retry must not be shorter.
    var recordEnd = 0
    /// The size of the buffer between TLS and the socket (see `bufferWrites`).
    static let socketWriteBuffer = 64 * 1024
    /// That buffer, once the handshake is done (TLS writes into it through its BIO).
    var socketWriter: MockSocketWriter?

    /// The frame scanner: what remains of the client preface, of the current frame's payload,
    /// and of a frame header cut off by the end of a read (kept in `heldHeader`).
    var prefaceLeft = 24
    var payloadLeft = 0
    var heldHeader: (UInt64, UInt64) = (0, 0)
    var heldCount = 0
    /// The highest client stream id seen by the scanner, and how many new streams it has seen
    /// in bytes not yet given to nghttp2.
    var highestScannedStream: Int32 = 0
    var unfedNewStreams = 0

    // MARK: Streams (see MockConnection+Requests.swift)

    /// Every stream object this connection made (owning), and the ones free for reuse.
    var allStreams: [MockStream] = []
    var freeStreams: [MockStream] = []
    var nextStreamSerial: UInt64 = 0
    /// The stream whose header block is arriving (header blocks are never interleaved,
    /// RFC 9113 §4.3), so `on_header` needs no stream lookup. Unmanaged: the stream is in
    /// `allStreams` for the connection's whole life, and a strong reference here cost a retain
    /// and release at every header of every request.
    var receivingHeaders: Unmanaged<MockStream>?
    var openStreams = 0
    var peakStreams = 0
    /// The highest stream id processed (recorded): a GOAWAY's last-stream-id.
    var highestDecidedStream: Int32 = 0
    /// Generates apns-id and apns-unique-id values.
    var uuids = UUIDGenerator()

    // MARK: Faults

    /// The fault generation this connection's counts belong to; a new one restarts them.
    var faultGeneration: UInt64
    /// Requests answered since the faults were set (GOAWAY and kill after N).
    var answeredSinceFaults = 0
    /// The last-stream-id of the GOAWAY sent, if any: streams above it are not processed.
    var goawayLastStream: Int32?
    /// The kill is decided: no more requests are processed; the socket closes once the last
    /// answer is written.
    var killPending = false

    // MARK: Stream limit (see MockConnection+StreamLimit.swift)

    /// MAX_CONCURRENT_STREAMS values sent in SETTINGS frames not yet acknowledged, oldest
    /// first, and the value last acknowledged (the initial value counts as acknowledged from
    /// the start, as APNs holds clients to it, unless `strictInitialStreamLimit` is off).
    var settingsInFlight: [UInt32] = []
    var acknowledgedLimit: UInt32 = 0
    /// The limit a new stream is held to: a raise counts at once, a drop once acknowledged.
    var enforcedLimit: UInt32 = 0
    /// Whether the limit has been raised after the first 200 (token connections start at 1).
    var limitRaised = false
    /// Whether the limit was dropped to 1 after a rejection and not raised again since.
    var limitDropped = false
    /// The stream whose 200 raises the limit once its HEADERS frame is sent (0: none).
    var raiseLimitAfterStream: Int32 = 0

    // MARK: Token authentication (see MockConnection+Auth.swift)

    /// The last `authorization` value that verified on this connection, and what it said:
    /// requests repeating it byte for byte skip the signature check (APNs expects one token
    /// per connection for up to an hour, so nearly every request takes this path).
    var verifiedAuthorization: [UInt8] = []
    var verifiedIssuedAt: Int64 = 0
    var verifiedKeyID: [UInt8] = []
    /// The team the connection is bound to by its first verified token.
    var boundTeam: [UInt8]?
    /// When (server clock, seconds) the connection last adopted a new token.
    var lastTokenChange: Int64 = 0

    init(core: MockServerCore, fd: Int32, ssl: OpaquePointer, serial: Int, role: MockListener.Role = .apns) {
        self.core = core
        ledger = core.ledger
        ledger.connectionObjectCreated()
        self.role = role
        loop = core.loop
        timers = core.timers
        self.fd = fd
        self.ssl = ssl
        self.serial = serial
        faultGeneration = core.faultState.generation
        outCap = Self.batchBytes + 32 * 1024
        outBuf = .allocate(byteCount: outCap, alignment: 16)
        inBuf = .allocate(byteCount: Self.inHeadroom + Self.inCap, alignment: 16)
        loop.register(fd: fd, interest: interest, handler: self)
    }

    deinit {
        ledger.connectionObjectFreed()
        outBuf.deallocate()
        inBuf.deallocate()
    }

    // MARK: - Session set-up

    /// TLS is up: pick the authentication, create the nghttp2 session and submit the initial
    /// SETTINGS.
    func startSession() throws(TransportError) {
        var proto: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &proto, &length)
        guard length == 2, let proto, proto[0] == UInt8(ascii: "h"), proto[1] == UInt8(ascii: "2") else {
            throw TransportError(.protocolError, "the client did not negotiate h2 (ALPN)")
        }
        if let certificate = SSL_get1_peer_certificate(ssl) {
            if core.faultState.faults.refuseClientCertificates {
                X509_free(certificate)
                core.ledger.certificateRefused()
                throw TransportError(.tls, "client certificate refused (fault)")
            }
            // Only a verified certificate gets here: the handshake fails otherwise.
            let topics = CertificateTopics(certificate: certificate)
            authentication = .certificate(allowed: topics.allowed, defaultTopic: topics.defaultTopic)
            X509_free(certificate)
        } else if !core.verifier.isEmpty {
            authentication = .token
        }

        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw TransportError(.protocolError, "nghttp2_session_callbacks_new failed")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        MockCallbacks.install(on: callbacks)
        var newSession: OpaquePointer?
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new(&newSession, callbacks, me) == 0, let newSession else {
            throw TransportError(.protocolError, "nghttp2_session_server_new failed")
        }
        session = newSession

        // apns.md, "Streams per connection": token connections get one stream until a request
        // succeeds; others (certificate, accept-all) start at the configured limit.
        var isToken = false
        if case .token = authentication { isToken = true }
        let initialLimit = UInt32(isToken ? 1 : core.maxConcurrentStreams)
        limitRaised = !isToken
        // Strict: the initial limit holds before the client could have seen it. Lenient: only
        // once acknowledged (until then nghttp2 refuses excess streams by itself).
        acknowledgedLimit = core.strictInitialStreamLimit ? initialLimit : UInt32.max
        // Observed APNs SETTINGS (apns.md): MAX_HEADER_LIST_SIZE 8000; the stream limit as above.
        let settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: initialLimit),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: Self.streamWindow),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: 8000),
        ]
        guard nghttp2_submit_settings(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), settings, settings.count) == 0,
              nghttp2_session_set_local_window_size(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Self.connectionWindow) == 0 else {
            throw TransportError(.protocolError, "cannot submit the initial SETTINGS")
        }
        limitSent(initialLimit)
    }

    // MARK: - Closing

    /// Closes the socket now (or as soon as nghttp2 is off the stack): no GOAWAY, no TLS
    /// close_notify. This is also how `stop()` and the kill fault end connections.
    func close() {
        if phase == .closed { return }
        if inSessionCall {
            closeRequested = true
            return
        }
        phase = .closed
        loop.unregister(fd: fd)
        receivingHeaders = nil
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        SSL_free(ssl)
        Glibc.close(fd)
        core.connectionClosed(self)
    }
}
