#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushCrypto
import PushTransport

/// The byte pump of one client connection: the TLS socket, the nghttp2 server session, and
/// the bytes between them. What the requests mean is its `connection`'s (`MockConnection`),
/// made when TLS is up.
///
/// Lives on the server's I/O thread only. Input (`+Input`): SSL_read → `FrameScanner` →
/// `nghttp2_session_mem_recv`. Output (`+Output`): frames gathered with
/// `nghttp2_session_mem_send` into `OutputFrames`, one `SSL_write` per batch (or per delayed
/// answer), TLS records into `MockSocketWriter`, one `write` per flush. Submissions
/// (`+Session`): the few nghttp2 calls its connection asks for.
///
/// Implementation: the mock has its own pump rather than `PushTransport.TLSH2Socket` because it
/// must act where nghttp2 offers no hook. APNs answers a client that opens more streams than
/// MAX_CONCURRENT_STREAMS allows with `GOAWAY(REFUSED_STREAM, "Maximum active streams violated
/// for this endpoint.")` and closes; nghttp2 would instead reset the stream or send its own
/// PROTOCOL_ERROR GOAWAY. So the pump scans frame headers as bytes arrive, asks its connection
/// before feeding nghttp2 a HEADERS frame that could break the limit, and writes that GOAWAY
/// itself when told to (`finish(with:)`).
///
/// Ownership: the server core holds its pumps, the event loop the registered ones, and the
/// timers those with answers scheduled; the pump owns its connection, which refers back to it
/// unowned. So whatever runs a connection's code (the loop's event, an nghttp2 callback inside
/// the pump's `deliver` or `gather`, a timer holding the pump) keeps the connection alive too.
final class MockPump: EventHandler {
    /// Where the socket is in its life.
    enum Phase { case handshaking, open, closed }

    /// Receive window per stream and for the connection: large, so that a client streaming
    /// many payloads never waits for WINDOW_UPDATE frames.
    static let streamWindow: UInt32 = 1 << 20
    static let connectionWindow: Int32 = 64 << 20
    /// Input buffer size (after the scanner's headroom).
    static let inCap = 64 * 1024
    /// Bytes gathered from nghttp2 before they are written (one SSL_write per batch).
    static let batchBytes = 256 * 1024
    /// The size of the buffer between TLS and the socket (see `bufferWrites`).
    static let socketWriteBuffer = 64 * 1024

    /// The server, to report the close to and to make the connection from. `unowned(unsafe)`:
    /// the core owns its pumps (and stops them before it goes); a checked `unowned` costs a
    /// strong retain and release per access.
    unowned(unsafe) let core: MockServerCore
    let loop: EventLoop
    /// The server's counters, held strongly: `deinit` counts the object's end there, and may
    /// run after the core is gone (the last delayed answer releases it).
    let ledger: MockLedger
    /// Told of each input read (request times are read once per read).
    let clock: MockClock
    let fd: Int32
    let ssl: OpaquePointer
    /// The connection's serial number (1-based, in accept order), as records show it.
    let serial: Int
    /// Which of Apple's hosts this connection plays.
    let role: MockListener.Role
    private(set) var session: OpaquePointer?
    private(set) var phase = Phase.handshaking
    /// What the requests mean, once TLS is up; owned here for the pump's whole life.
    private(set) var connection: MockConnection?
    /// The same, unretained, for the frame scanner's question per new stream.
    private(set) var requests: Unmanaged<MockConnection>?

    var interest: UInt32 = EventLoop.readable
    /// Input: `FrameScanner.headroom` bytes in front of each read.
    let inBuf: UnsafeMutableRawPointer
    // The I/O thread's alone, never accessed overlapping (their methods call out to nothing):
    // no runtime exclusivity checks (a `swift_beginAccess` each, per read and per batch).
    @exclusivity(unchecked) var scanner = FrameScanner()
    @exclusivity(unchecked) var output = OutputFrames(capacity: MockPump.batchBytes + 32 * 1024)
    /// The buffer between TLS and the socket, once the handshake is done.
    var socketWriter: MockSocketWriter?
    /// Set while nghttp2 is on the stack, so that a close waits until it returns.
    var inSessionCall = false
    var closeRequested = false
    /// Write what is queued, then close (a kill, or the violation GOAWAY); no more input.
    var closeAfterFlush = false
    /// nghttp2 has nothing more to say: after the violation GOAWAY, its output is not wanted.
    var sessionFinished = false

    /// The timers' bookkeeping: answers of this connection waiting in `MockTimers` (which holds
    /// a reference to the pump while this is above 0), and whether the pump waits for the
    /// tick's flush (`MockTimers.fireDue`).
    var scheduledAnswers = 0
    var flushPending = false

    init(core: MockServerCore, fd: Int32, ssl: OpaquePointer, serial: Int, role: MockListener.Role) {
        self.core = core
        ledger = core.ledger
        ledger.connectionObjectCreated()
        clock = core.clock
        loop = core.loop
        self.fd = fd
        self.ssl = ssl
        self.serial = serial
        self.role = role
        inBuf = .allocate(byteCount: FrameScanner.headroom + Self.inCap, alignment: 16)
        loop.register(fd: fd, interest: interest, handler: self)
    }

    deinit {
        ledger.connectionObjectFreed()
        output.deallocate()
        inBuf.deallocate()
    }

    func handleEvents(_ events: UInt32) {
        switch phase {
        case .handshaking:
            stepHandshake()
        case .open:
            if !closeAfterFlush, events & (EventLoop.readable | EventLoop.errorOrHangup) != 0 {
                readAvailable()
            }
            if phase == .open { flush() }
        case .closed:
            break
        }
    }

    func setInterest(_ bits: UInt32) {
        if bits != interest {
            interest = bits
            loop.modify(fd: fd, interest: bits)
        }
    }

    private func stepHandshake() {
        OpenSSLError.clear()
        let r = SSL_do_handshake(ssl)
        if r == 1 {
            phase = .open
            guard bufferWrites() else {
                close()
                return
            }
            setInterest(EventLoop.readable)
            do throws(TransportError) {
                try startSession()
            } catch {
                close()
                return
            }
            flush()
            return
        }
        switch SSL_get_error(ssl, r) {
        case SSL_ERROR_WANT_READ: setInterest(EventLoop.readable)
        case SSL_ERROR_WANT_WRITE: setInterest(EventLoop.readable | EventLoop.writable)
        default:
            // A client without an acceptable certificate, or not speaking TLS: nothing to say.
            OpenSSLError.clear()
            close()
        }
    }

    /// TLS is up: check ALPN, make the connection (which picks the authentication from the
    /// TLS session), create the nghttp2 session with the connection as its user data, let the
    /// connection submit its first SETTINGS, and open the connection's receive window.
    private func startSession() throws(TransportError) {
        var proto: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &proto, &length)
        guard length == 2, let proto, proto[0] == UInt8(ascii: "h"), proto[1] == UInt8(ascii: "2") else {
            throw TransportError(.protocolError, "the client did not negotiate h2 (ALPN)")
        }
        let connection = try MockConnection(pump: self)
        self.connection = connection
        requests = .passUnretained(connection)

        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw TransportError(.protocolError, "nghttp2_session_callbacks_new failed")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        MockCallbacks.install(on: callbacks)
        var newSession: OpaquePointer?
        guard nghttp2_session_server_new(&newSession, callbacks, Unmanaged.passUnretained(connection).toOpaque()) == 0,
              let newSession else {
            throw TransportError(.protocolError, "nghttp2_session_server_new failed")
        }
        session = newSession
        try connection.start()
        guard nghttp2_session_set_local_window_size(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Self.connectionWindow) == 0 else {
            throw TransportError(.protocolError, "cannot submit the initial SETTINGS")
        }
    }

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
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        SSL_free(ssl)
        Glibc.close(fd)
        core.connectionClosed(self)
    }
}
