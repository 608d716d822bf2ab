#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushCrypto
import CPushSystem

/// A non-blocking TCP socket carrying TLS and, above it, one nghttp2 session: the client
/// connections' byte pump. (The mock server's connections have a pump of their own,
/// `MockConnection+Wire.swift`, tuned for a server: it is a test tool and stays independent.)
///
/// Implementation: nghttp2 never touches the socket. Incoming bytes go SSL_read →
/// `nghttp2_session_mem_recv`; outgoing frames are gathered with `nghttp2_session_mem_send`
/// into one large buffer and written with one `SSL_write` per batch, so many notifications
/// share a TLS record and a syscall. OpenSSL's want-read/want-write are tracked apart from
/// nghttp2's own wants (as in nghttp2's examples/client.c).
///
/// Subclasses learn of each step (`didConnectTCP`, `didOpenTunnel`), create the session in
/// `didCompleteHandshake()` and learn of the end in `didClose(_:)`. Everything runs on the
/// owning `EventLoop`'s thread.
///
/// The socket's `mode` is mechanical: which step an event runs. It is private: a connection's
/// phase, the one its owner checks, is its `ConnectionState`, which the subclass moves along from
/// the hooks above. (The mode stays here rather than being read from the state so that the
/// byte pump's hot checks stay a compare of a private field, and so that `ChannelConnection`,
/// which has no pool state, shares the pump.)
open class TLSH2Socket: EventHandler {
    /// Which step the socket's events run.
    private enum Mode: Equatable {
        /// TCP connect in progress (clients).
        case connecting
        /// HTTP CONNECT request sent to a proxy; waiting for its answer (clients).
        case tunneling
        /// TLS handshake in progress.
        case handshaking
        /// TLS up; the HTTP/2 session runs.
        case open
        /// Closed; nothing more happens.
        case closed
    }

    public let loop: EventLoop
    public let fd: Int32
    public let ssl: OpaquePointer
    /// The nghttp2 session, created by the subclass once TLS is up.
    public var session: OpaquePointer?
    private var mode: Mode
    private var interest: UInt32 = 0

    /// Frames gathered from nghttp2, written from `out.start` to `out.end`.
    private var out: OutputBuffer
    private let inBuf: UnsafeMutableRawPointer
    private static let inCap = 64 * 1024
    /// Bytes gathered from nghttp2 before they are written (one SSL_write per batch).
    private static let batchBytes = 256 * 1024
    /// Whether nghttp2 is on the stack, and a close asked for meanwhile.
    private var sessionCall = SessionCall()
    /// The HTTP CONNECT tunnel through a proxy (its `request` set by the owner before TCP is up).
    public var tunnel = ProxyTunnel()
    /// The client's clock (`ClientConfiguration.timing.clock`): read once per readable event.
    public let clock: any PushClock
    /// When bytes last arrived (the clock's monotonic ns): idle detection for health PINGs, and
    /// "now" for everything the read's answers decide (one clock read per event, not per answer).
    public private(set) var lastInputNanos: UInt64
    /// Whether any bytes arrived since TLS came up (the first ones are checked for HTTP/1.x).
    private var receivedInput = false

    /// Takes ownership of `fd` (non-blocking, its TCP connect in progress) and `ssl`; registers
    /// with `loop`.
    public init(loop: EventLoop, fd: Int32, ssl: OpaquePointer, clock: any PushClock) {
        self.loop = loop
        self.clock = clock
        self.fd = fd
        self.ssl = ssl
        self.mode = .connecting
        out = OutputBuffer(capacity: Self.batchBytes + 32 * 1024)
        inBuf = .allocate(byteCount: Self.inCap, alignment: 16)
        interest = EventLoop.writable
        lastInputNanos = clock.monotonicNanos()
        loop.register(fd: fd, interest: interest, handler: self)
    }

    deinit {
        out.buffer.deallocate()
        inBuf.deallocate()
    }

    // MARK: - Hooks for subclasses

    /// The TCP connect completed; a proxy tunnel (`throughProxy`) or the TLS handshake follows.
    open func didConnectTCP(throughProxy: Bool) {}

    /// The proxy opened the tunnel; the TLS handshake follows inside it.
    open func didOpenTunnel() {}

    /// TLS is up: check ALPN, create `session`, submit SETTINGS. Throwing closes the socket.
    open func didCompleteHandshake() throws(TransportError) {}

    /// The socket closed (`error` nil for an orderly close). Called once.
    open func didClose(_ error: TransportError?) {}

    /// Called after each batch of input has been fed to the session, before flushing.
    open func didProcessInput() {}

    /// Called after each chunk of input (one TLS read) has been fed to the session, outside
    /// nghttp2's callbacks, while more input may be waiting: streams it closed can be reused at
    /// once (a subclass may submit and flush here).
    open func didReceiveChunk() {}

    // MARK: - Event handling

    public func handleEvents(_ events: UInt32) {
        switch mode {
        case .connecting:
            var err: Int32 = 0
            var len = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
            if err != 0 {
                close(TransportError(.connect, "connect: \(String(cString: strerror(err)))"))
                return
            }
            didConnectTCP(throughProxy: tunnel.request != nil)
            if tunnel.request != nil {
                mode = .tunneling
                stepTunnel()
                return
            }
            mode = .handshaking
            stepHandshake()
        case .tunneling:
            stepTunnel()
        case .handshaking:
            stepHandshake()
        case .open:
            if events & (EPOLLIN.rawValue | EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0 { readAvailable() }
            if mode == .open { flush() }
        case .closed:
            break
        }
    }

    private func setInterest(_ bits: UInt32) {
        if bits != interest {
            interest = bits
            loop.modify(fd: fd, interest: bits)
        }
    }

    /// Sends the CONNECT request and reads the proxy's answer up to the blank line; a 2xx
    /// status opens the tunnel and TLS starts inside it (RFC 9110 §9.3.6).
    private func stepTunnel() {
        guard let request = tunnel.request else { return }
        while tunnel.sent < request.count {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress! + tunnel.sent, request.count - tunnel.sent, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { setInterest(EventLoop.readable | EventLoop.writable); return }
                close(TransportError(.connect, "proxy: \(String(cString: strerror(errno)))"))
                return
            }
            tunnel.sent += n
        }
        setInterest(EventLoop.readable)
        var chunk = [UInt8](repeating: 0, count: 1)
        // Byte by byte: nothing after the proxy's blank line may be consumed, it belongs to TLS.
        while true {
            let n = recv(fd, &chunk, 1, 0)
            if n == 0 { close(TransportError(.connect, "the proxy closed the connection")); return }
            if n < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK { return }
                close(TransportError(.connect, "proxy: \(String(cString: strerror(errno)))"))
                return
            }
            tunnel.answer.append(chunk[0])
            if tunnel.answer.count > 16 * 1024 { close(TransportError(.connect, "the proxy's answer is too long")); return }
            if tunnel.answer.count >= 4 && tunnel.answer.suffix(4).elementsEqual([13, 10, 13, 10]) { break }
        }
        let statusLine = String(decoding: tunnel.answer.prefix { $0 != 13 }, as: UTF8.self)
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let code = Int(parts[1]), (200..<300).contains(code) else {
            close(TransportError(.connect, "the proxy refused the tunnel: \(statusLine)"))
            return
        }
        tunnel = ProxyTunnel()
        mode = .handshaking
        didOpenTunnel()
        stepHandshake()
    }

    private func stepHandshake() {
        OpenSSLError.clear()
        let r = SSL_do_handshake(ssl)
        if r == 1 {
            mode = .open
            setInterest(EventLoop.readable)
            do throws(TransportError) {
                try didCompleteHandshake()
            } catch {
                close(error)
                return
            }
            flush()
            return
        }
        let error = SSL_get_error(ssl, r)
        switch error {
        case SSL_ERROR_WANT_READ: setInterest(EventLoop.readable)
        case SSL_ERROR_WANT_WRITE: setInterest(EventLoop.readable | EventLoop.writable)
        default: close(handshakeFailure(error))
        }
    }

    /// Why a handshake failed, and whether retrying can help: a certificate, host-name,
    /// protocol-version or ALPN problem is `.tls` (it will fail the same way again); the peer
    /// hanging up or resetting mid-handshake is `.connect` (a restarting server, a load
    /// balancer turning connections away) and is retried with back-off.
    private func handshakeFailure(_ sslError: Int32) -> TransportError {
        let verify = SSL_get_verify_result(ssl)
        let savedErrno = errno
        let peerHungUp = swiftpush_err_is_unexpected_eof() != 0
        let queued = OpenSSLError.drain(fallback: "")
        if verify != X509_V_OK {
            return TransportError(.tls, "TLS handshake failed: certificate verify failed: " + String(cString: X509_verify_cert_error_string(verify)))
        }
        if sslError == SSL_ERROR_SSL && !queued.isEmpty && !peerHungUp {
            // OpenSSL's words for bytes that are not a TLS record at all.
            let notTLS = queued.contains("wrong version number") || queued.contains("packet length too long")
                || queued.contains("record layer failure")
            return TransportError(.tls, "TLS handshake failed: " + queued + (notTLS ? " (the server does not speak TLS)" : ""))
        }
        let detail = savedErrno != 0 ? String(cString: strerror(savedErrno)) : "end of stream"
        return TransportError(.connect, "the server closed the connection during the TLS handshake (\(detail))")
    }

    // MARK: - Input

    private func readAvailable() {
        // Once per readable event, not per record: a successful SSL_read leaves the error queue
        // empty, and idle detection needs no finer time (both showed in profiles at one record
        // per answer).
        OpenSSLError.clear()
        lastInputNanos = clock.monotonicNanos()
        while mode == .open {
            let n = SSL_read(ssl, inBuf, Int32(Self.inCap))
            if n > 0 {
                guard let session else { return }
                if !receivedInput {
                    receivedInput = true
                    // A server that agreed to h2 but answers in HTTP/1.x (a misconfigured front
                    // end): nghttp2 would only see a malformed frame, so say what it is.
                    if let statusLine = Self.http1StatusLine(UnsafeRawBufferPointer(start: inBuf, count: Int(n))) {
                        close(TransportError(.protocolError, "the server answered in HTTP/1.x, not HTTP/2: \(statusLine)"))
                        return
                    }
                }
                sessionCall.active = true
                let rv = nghttp2_session_mem_recv(session, inBuf.assumingMemoryBound(to: UInt8.self), Int(n))
                sessionCall.active = false
                if rv < 0 {
                    close(TransportError(.protocolError, "HTTP/2: " + String(cString: nghttp2_strerror(Int32(rv)))))
                    return
                }
                if sessionCall.closeRequested { close(sessionCall.closeError); return }
                didReceiveChunk()
                continue
            }
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_WANT_READ:
                didProcessInput()
                return
            case SSL_ERROR_WANT_WRITE:
                setInterest(EventLoop.readable | EventLoop.writable)
                return
            case SSL_ERROR_ZERO_RETURN:
                close(TransportError(.closed, "the server closed the connection"))
                return
            default:
                let refused = Self.peerRefusedCertificate()
                let detail = OpenSSLError.drain(fallback: errno != 0 ? String(cString: strerror(errno)) : "end of stream")
                if refused {
                    close(TransportError(.tls, "the server refused the client certificate: " + detail))
                    return
                }
                close(TransportError(.closed, "connection lost: " + detail))
                return
            }
        }
    }

    /// Whether the error queue starts with an alert from the peer refusing our certificate.
    /// A TLS 1.3 server checks the client's certificate after the client considers the
    /// handshake done, so the refusal arrives on a read: it is a TLS failure that retrying
    /// cannot fix (`.tls`), not a lost connection.
    private static func peerRefusedCertificate() -> Bool {
        let e = ERR_peek_error()
        guard e != 0, ERR_GET_LIB(e) == ERR_LIB_SSL else { return false }
        // OpenSSL reports a received alert as reason SSL_AD_REASON_OFFSET (1000) + its code:
        // bad_certificate 42, unsupported_certificate 43, certificate_revoked 44,
        // certificate_expired 45, certificate_unknown 46, unknown_ca 48, access_denied 49,
        // certificate_required 116.
        let alert = Int(ERR_GET_REASON(e)) - 1000
        return [42, 43, 44, 45, 46, 48, 49, 116].contains(alert)
    }

    /// The status line when `bytes` start like an HTTP/1.x response ("HTTP/1.1 400 Bad
    /// Request"), cut to 60 bytes; nil otherwise. An HTTP/2 peer's first bytes are a frame
    /// header (a server's) or the preface "PRI * HTTP/2.0" (a client's), never this.
    static func http1StatusLine(_ bytes: UnsafeRawBufferPointer) -> String? {
        let prefix = Array("HTTP/1.".utf8)
        guard bytes.count >= prefix.count, bytes.prefix(prefix.count).elementsEqual(prefix) else { return nil }
        let line = bytes.prefix(60).prefix { $0 != 13 && $0 != 10 }
        return String(decoding: line.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    // MARK: - Output

    /// Gathers frames from nghttp2 and writes them; call after submitting work. Leaves
    /// EPOLLOUT armed only while TLS has bytes it could not write.
    public func flush() {
        guard mode == .open, let session else { return }
        while true {
            if out.start == out.end {
                out.start = 0
                out.end = 0
                sessionCall.active = true
                while out.end < Self.batchBytes {
                    var chunk: UnsafePointer<UInt8>?
                    let n = nghttp2_session_mem_send(session, &chunk)
                    if n < 0 {
                        sessionCall.active = false
                        close(TransportError(.protocolError, "HTTP/2: " + String(cString: nghttp2_strerror(Int32(n)))))
                        return
                    }
                    if n == 0 { break }
                    if out.end + n > out.capacity {
                        // Rare: a chunk larger than the slack; grow so it can be taken whole (the
                        // pointer from mem_send is only valid until the next call).
                        let newCap = out.end + n + 64 * 1024
                        let bigger = UnsafeMutableRawPointer.allocate(byteCount: newCap, alignment: 16)
                        bigger.copyMemory(from: out.buffer, byteCount: out.end)
                        out.buffer.deallocate()
                        out.buffer = bigger
                        out.capacity = newCap
                    }
                    (out.buffer + out.end).copyMemory(from: chunk!, byteCount: n)
                    out.end += n
                }
                sessionCall.active = false
                if sessionCall.closeRequested { close(sessionCall.closeError); return }
                if out.end == 0 { break }
            }
            OpenSSLError.clear()
            let w = SSL_write(ssl, out.buffer + out.start, Int32(out.end - out.start))
            if w > 0 {
                out.start += Int(w)
                continue
            }
            switch SSL_get_error(ssl, w) {
            case SSL_ERROR_WANT_WRITE:
                setInterest(EventLoop.readable | EventLoop.writable)
                return
            case SSL_ERROR_WANT_READ:
                setInterest(EventLoop.readable)
                return
            default:
                let detail = OpenSSLError.drain(fallback: errno != 0 ? String(cString: strerror(errno)) : "write failed")
                // The peer may have said why before hanging up (a GOAWAY naming the streams it
                // never processed, which can then be sent elsewhere): read what is already here.
                out.start = out.end
                readAvailable()
                close(TransportError(.closed, "connection lost: " + detail))
                return
            }
        }
        setInterest(EventLoop.readable)
        if nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 {
            close(nil)
        }
    }

    /// What a connection closed between the TLS handshake and the server's SETTINGS reports (the
    /// client's connections, device and channel management alike).
    package static let closedAfterHandshakeText = TransportError.closedAfterHandshakeText

    /// True while bytes wait to be written.
    public var hasPendingOutput: Bool { out.start != out.end }

    // MARK: - Closing

    /// Closes the socket now (or as soon as nghttp2 is off the stack) and reports `error`.
    public func close(_ error: TransportError?) {
        if mode == .closed { return }
        if sessionCall.active {
            if !sessionCall.closeRequested {
                sessionCall.closeRequested = true
                sessionCall.closeError = error
            }
            return
        }
        mode = .closed
        loop.unregister(fd: fd)
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        SSL_free(ssl)
        Glibc.close(fd)
        didClose(error)
    }

    /// Asks for a close once nghttp2 returns (for use inside callbacks).
    public func requestClose(_ error: TransportError?) {
        if sessionCall.active {
            if !sessionCall.closeRequested { sessionCall.closeRequested = true; sessionCall.closeError = error }
        } else {
            close(error)
        }
    }
}

/// A socket's output: frames gathered from nghttp2 (one batch), written from `start` to `end`.
struct OutputBuffer {
    var buffer: UnsafeMutableRawPointer
    var capacity: Int
    var start = 0
    var end = 0

    init(capacity: Int) {
        self.capacity = capacity
        buffer = .allocate(byteCount: capacity, alignment: 16)
    }
}

/// Whether a socket is inside nghttp2 (its callbacks run), so that a close asked for there
/// waits until the session is no longer on the stack, and that close's error.
struct SessionCall {
    var active = false
    var closeRequested = false
    var closeError: TransportError?
}

/// An HTTP CONNECT tunnel through a proxy: the request to send once TCP is up, how much of it
/// went, and the proxy's answer so far.
public struct ProxyTunnel {
    public var request: SecretBytes?
    var sent = 0
    var answer: [UInt8] = []

    public init(request: SecretBytes? = nil) { self.request = request }
}
