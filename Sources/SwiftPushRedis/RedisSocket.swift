#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import PushCore
import PushCrypto
import PushTransport

/// One TCP connection to a Redis node, in the clear or over TLS: the byte stream under
/// `RedisConnection`, so that plain and TLS share every line above it.
///
/// The socket is non-blocking; each call blocks its caller with `poll` until it is done or its
/// deadline (monotonic ns) passes, which makes every timeout exact and lets OpenSSL's
/// want-read/want-write be waited for like any other readiness.
final class RedisSocket {
    private var fd: Int32
    private var ssl: OpaquePointer?
    /// Where it is connected (`host:port`), for messages.
    let endpoint: String

    private init(fd: Int32, endpoint: String) {
        self.fd = fd
        self.endpoint = endpoint
    }

    deinit { close() }

    /// Connects to `node` (each resolved address in turn) and, with `tls`, completes the TLS
    /// handshake, all before `deadline`.
    static func connect(to node: RedisNode, tls: RedisTLSContext?, deadline: UInt64) throws(RedisError) -> RedisSocket {
        let endpoint = node.description
        var addresses: [SocketConnect.Address]
        do throws(TransportError) {
            addresses = try SocketConnect.resolve(host: node.host, port: node.port)
        } catch {
            throw RedisError(.connection, "cannot connect to Redis at \(endpoint): \(error.description)")
        }
        var lastError = RedisError(.connection, "cannot connect to Redis at \(endpoint): no address")
        while !addresses.isEmpty {
            let fd: Int32
            do throws(TransportError) {
                fd = try SocketConnect.start(addresses.removeFirst())
            } catch {
                lastError = RedisError(.connection, "cannot connect to Redis at \(endpoint): \(error.description)")
                continue
            }
            let socket = RedisSocket(fd: fd, endpoint: endpoint)
            do throws(RedisError) {
                try socket.finishConnect(deadline: deadline)
            } catch {
                lastError = error
                continue
            }
            if let tls { try socket.startTLS(tls, host: node.host, deadline: deadline) }
            return socket
        }
        throw lastError
    }

    /// Waits for the non-blocking connect to complete.
    private func finishConnect(deadline: UInt64) throws(RedisError) {
        try wait(for: Int16(POLLOUT), deadline: deadline, doing: "connecting")
        var err: Int32 = 0
        var len = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)
        if err != 0 { throw RedisError(.connection, "cannot connect to Redis at \(endpoint): \(String(cString: strerror(err)))") }
    }

    /// The TLS handshake, verifying the certificate and the host name; failures are classified
    /// (`RedisError.Kind`): a certificate or name the configuration does not accept, or a
    /// handshake that cannot succeed, is permanent; a peer that hangs up is a lost connection.
    private func startTLS(_ context: RedisTLSContext, host: String, deadline: UInt64) throws(RedisError) {
        OpenSSLError.clear()
        let ssl = try context.makeSSL(fd: fd, host: host)
        self.ssl = ssl
        while true {
            let rc = SSL_connect(ssl)
            if rc == 1 { return }
            let error = SSL_get_error(ssl, rc)
            switch error {
            case SSL_ERROR_WANT_READ: try wait(for: Int16(POLLIN), deadline: deadline, doing: "in the TLS handshake")
            case SSL_ERROR_WANT_WRITE: try wait(for: Int16(POLLOUT), deadline: deadline, doing: "in the TLS handshake")
            default: throw handshakeError(ssl, error, name: context.serverName ?? host)
            }
        }
    }

    /// What a failed handshake means, in words that name the cause.
    private func handshakeError(_ ssl: OpaquePointer, _ error: Int32, name: String) -> RedisError {
        let verify = SSL_get_verify_result(ssl)
        if verify != Int(X509_V_OK) {
            OpenSSLError.clear()
            let reason = String(cString: X509_verify_cert_error_string(verify))
            if verify == Int(X509_V_ERR_HOSTNAME_MISMATCH) || verify == Int(X509_V_ERR_IP_ADDRESS_MISMATCH) {
                return RedisError(.hostName, "TLS to Redis at \(endpoint): the server's certificate is not valid for \"\(name)\" (\(reason)); set tls.server_name to the name it carries, or connect by that name")
            }
            return RedisError(.certificate, "TLS to Redis at \(endpoint): the server's certificate is not trusted (\(reason)); check tls.ca_file")
        }
        if error == SSL_ERROR_SYSCALL || error == SSL_ERROR_ZERO_RETURN || swiftpush_err_is_unexpected_eof() != 0 {
            let e = errno
            OpenSSLError.clear()
            let why = e != 0 ? String(cString: strerror(e)) : "the server closed the connection"
            return RedisError(.connection, "TLS to Redis at \(endpoint): \(why) during the handshake")
        }
        let detail = OpenSSLError.drain(fallback: "handshake failed")
        let hint = detail.contains("wrong version number") ? " (is this a plain, non-TLS port?)" : ""
        return RedisError(.tls, "TLS handshake with Redis at \(endpoint) failed: \(detail)\(hint)")
    }

    /// Writes all of `bytes` before `deadline`.
    func write(_ bytes: UnsafeRawBufferPointer, deadline: UInt64) throws(RedisError) {
        guard fd >= 0 else { throw RedisError(.connection, "Redis at \(endpoint): not connected") }
        var done = 0
        while done < bytes.count {
            let rest = bytes.count - done
            let base = bytes.baseAddress! + done
            if let ssl {
                let n = SSL_write(ssl, base, Int32(min(rest, Int(Int32.max))))
                if n > 0 { done += Int(n); continue }
                try waitForSSL(ssl, n, deadline: deadline, doing: "writing")
            } else {
                let n = send(fd, base, rest, Int32(MSG_NOSIGNAL))
                if n > 0 { done += n; continue }
                if n < 0 && (errno == EAGAIN || errno == EINTR) {
                    try wait(for: Int16(POLLOUT), deadline: deadline, doing: "writing")
                    continue
                }
                throw lost("write", errno)
            }
        }
    }

    /// Reads what is there (at least one byte, waiting for it until `deadline`) into `buffer`;
    /// returns how many bytes.
    func read(into buffer: UnsafeMutableRawBufferPointer, deadline: UInt64) throws(RedisError) -> Int {
        guard fd >= 0 else { throw RedisError(.connection, "Redis at \(endpoint): not connected") }
        while true {
            if let ssl {
                let n = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
                if n > 0 { return Int(n) }
                try waitForSSL(ssl, n, deadline: deadline, doing: "waiting for a reply")
            } else {
                let n = recv(fd, buffer.baseAddress, buffer.count, 0)
                if n > 0 { return n }
                if n == 0 { throw RedisError(.connection, "Redis at \(endpoint): connection closed by the server") }
                if errno == EAGAIN || errno == EINTR {
                    try wait(for: Int16(POLLIN), deadline: deadline, doing: "waiting for a reply")
                    continue
                }
                throw lost("read", errno)
            }
        }
    }

    /// The socket's descriptor (-1 once closed), for a caller's own `poll`: readable means a
    /// `readAvailable` will find bytes (or the end of the connection).
    var descriptor: Int32 { fd }

    /// Reads what has arrived into `buffer` without waiting: the byte count, 0 when nothing is
    /// there yet (the socket, and OpenSSL's buffer, are drained: `poll` on `descriptor` then
    /// says when more comes). A closed or broken connection throws.
    func readAvailable(into buffer: UnsafeMutableRawBufferPointer) throws(RedisError) -> Int {
        guard fd >= 0 else { throw RedisError(.connection, "Redis at \(endpoint): not connected") }
        while true {
            if let ssl {
                let n = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
                if n > 0 { return Int(n) }
                let e = errno
                switch SSL_get_error(ssl, n) {
                case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return 0
                case SSL_ERROR_SYSCALL where e == EINTR: OpenSSLError.clear(); continue
                default: try waitForSSL(ssl, n, deadline: 0, doing: "reading a reply")
                }
            } else {
                let n = recv(fd, buffer.baseAddress, buffer.count, 0)
                if n > 0 { return n }
                if n == 0 { throw RedisError(.connection, "Redis at \(endpoint): connection closed by the server") }
                if errno == EAGAIN { return 0 }
                if errno == EINTR { continue }
                throw lost("read", errno)
            }
        }
    }

    /// After an SSL_read or SSL_write that did not complete: waits for what OpenSSL wants, or
    /// throws what broke.
    private func waitForSSL(_ ssl: OpaquePointer, _ rc: Int32, deadline: UInt64, doing: String) throws(RedisError) {
        let e = errno
        switch SSL_get_error(ssl, rc) {
        case SSL_ERROR_WANT_READ: try wait(for: Int16(POLLIN), deadline: deadline, doing: doing)
        case SSL_ERROR_WANT_WRITE: try wait(for: Int16(POLLOUT), deadline: deadline, doing: doing)
        case SSL_ERROR_ZERO_RETURN:
            throw RedisError(.connection, "Redis at \(endpoint): connection closed by the server")
        case SSL_ERROR_SYSCALL:
            OpenSSLError.clear()
            if e == EINTR { return }
            throw e == 0 ? RedisError(.connection, "Redis at \(endpoint): connection closed by the server") : lost(doing, e)
        default:
            let eof = swiftpush_err_is_unexpected_eof() != 0
            let detail = OpenSSLError.drain()
            if eof { throw RedisError(.connection, "Redis at \(endpoint): connection closed by the server") }
            throw RedisError(.connection, "Redis at \(endpoint): TLS error: \(detail)")
        }
    }

    /// Waits until the socket is ready for `events`, or throws a timeout at `deadline`.
    private func wait(for events: Int16, deadline: UInt64, doing: String) throws(RedisError) {
        while true {
            let now = MonotonicTime.nanos()
            if now >= deadline {
                var e = RedisError(.connection, "Redis at \(endpoint): timed out \(doing)\(doing == "in the TLS handshake" ? " (is this a plain, non-TLS port?)" : "")")
                e.timedOut = true
                throw e
            }
            var p = pollfd(fd: fd, events: events, revents: 0)
            let ms = Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
            let rc = poll(&p, 1, ms)
            if rc > 0 { return }
            if rc < 0 && errno != EINTR { throw lost("poll", errno) }
        }
    }

    private func lost(_ call: String, _ err: Int32) -> RedisError {
        RedisError(.connection, "Redis at \(endpoint): \(call): \(String(cString: strerror(err)))")
    }

    /// Closes the connection (no TLS close_notify: Redis does not need one, and a dead peer
    /// must not make closing wait).
    func close() {
        if let ssl { SSL_free(ssl) }
        ssl = nil
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }
}
