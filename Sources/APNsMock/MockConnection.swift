#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// What the requests on one client connection mean: the driver between the connection's byte
/// pump (`MockPump`) and the parts that decide, none of which does I/O:
///
/// - `limit` (`StreamLimit`): MAX_CONCURRENT_STREAMS, a state machine whose actions
///   (announce a limit, refuse the connection) are executed here (`+StreamLimit`);
/// - `chain` (`MockRequestChain`): the request handlers (faults, validation with the
///   connection's `MockAuthenticator`, registrations) that decide each request (`+Requests`);
/// - `counts` (`ConnectionFaults`): the GOAWAY and kill after N answers;
/// - `streams` (`MockStreamPool`): the pooled per-request storage.
///
/// Made by its pump when TLS is up, as Pushy's mock makes a handler per TLS session: the
/// session tells which authenticator applies. nghttp2's callbacks (`MockCallbacks`) call in
/// with it as their user data. Lives on the server's I/O thread only; owned by its pump.
final class MockConnection {
    /// The pump that owns this connection (so it outlives every call into it). `unowned(unsafe)`:
    /// a checked `unowned` costs a strong retain and release per access; per-request calls go
    /// through `withPump`, which costs neither.
    unowned(unsafe) let pump: MockPump
    let settings: MockSettings
    let faults: FaultState
    let timers: MockTimers
    let ledger: MockLedger
    /// The connection's serial number, as records show it.
    let serial: Int
    /// Which of Apple's hosts the connection plays.
    let role: MockListener.Role
    /// Who may send, and to which topics.
    let authenticator: any MockAuthenticator
    /// The handlers that decide requests.
    let chain: MockRequestChain

    // The per-request state below is the I/O thread's alone, and no access to it overlaps
    // another (the structs' methods call out to nothing): the runtime's exclusivity checks on it
    // (a `swift_beginAccess` per access, more than twenty per request) are switched off.

    /// The stream limit.
    @exclusivity(unchecked) var limit: StreamLimit
    /// The request streams.
    @exclusivity(unchecked) var streams = MockStreamPool()
    /// The faults' per-connection counts.
    @exclusivity(unchecked) var counts: ConnectionFaults
    /// Generates apns-id and apns-unique-id values.
    var uuids = UUIDGenerator()
    /// The highest stream id decided (recorded): a GOAWAY's last-stream-id.
    var highestDecidedStream: Int32 = 0
    /// The last-stream-id of the GOAWAY sent, if any: streams above it are not processed.
    var goawayLastStream: Int32?
    /// The kill is decided: no more requests are processed; the socket closes once the last
    /// answer is written.
    var killPending = false

    /// The connection of `pump`, whose TLS handshake just completed: its authenticator is
    /// picked from the TLS session (a client certificate; else provider tokens when the
    /// server has keys; else none). Throws when the certificate is refused (the fault).
    init(pump: MockPump) throws(TransportError) {
        let core = pump.core
        self.pump = pump
        settings = core.settings
        faults = core.faults
        timers = core.timers
        ledger = core.ledger
        serial = pump.serial
        role = pump.role
        var token = false
        if let certificate = SSL_get1_peer_certificate(pump.ssl) {
            defer { X509_free(certificate) }
            if faults.faults.refuseClientCertificates {
                ledger.certificateRefused()
                throw TransportError(.tls, "client certificate refused (fault)")
            }
            // Only a verified certificate gets here: the handshake fails otherwise.
            authenticator = CertificateAuthenticator(CertificateTopics(certificate: certificate))
        } else if !settings.verifier.isEmpty {
            authenticator = TokenAuthenticator(settings: settings, clock: core.clock, faults: faults)
            token = true
        } else {
            authenticator = OpenAuthenticator(allowedTopics: settings.allowedTopics)
        }
        chain = MockRequestChain(authenticator: authenticator, settings: settings, faults: faults)
        // apns.md, "Streams per connection": token connections get one stream until a request
        // succeeds; others (certificate, accept-all) start at the configured limit.
        limit = StreamLimit(configured: settings.maxConcurrentStreams, token: token, lenient: !settings.strictInitialStreamLimit)
        counts = ConnectionFaults(generation: faults.generation)
    }

    /// Runs `body` with the pump as a guaranteed reference (no retain and release around a call
    /// into it).
    @inline(__always)
    func withPump<R>(_ body: (MockPump) -> R) -> R { Unmanaged.passUnretained(pump)._withUnsafeGuaranteedRef(body) }

    /// The session exists: submit the initial SETTINGS (observed APNs SETTINGS, apns.md:
    /// MAX_HEADER_LIST_SIZE 8000; the stream limit as the machine starts it).
    func start() throws(TransportError) {
        let entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: limit.initial),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: MockPump.streamWindow),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: 8000),
        ]
        guard pump.submitSettings(entries) else {
            throw TransportError(.protocolError, "cannot submit the initial SETTINGS")
        }
        limit.announced(limit.initial)
    }
}
