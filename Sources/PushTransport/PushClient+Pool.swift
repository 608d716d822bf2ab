#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore

/// The pool: opening connections (with back-off), following them as they come and go,
/// retiring them, and keeping idle ones healthy. All on the I/O thread.
extension PushClient {
    /// Reconnect back-off: first delay and cap (doubling with jitter in between).
    static let firstBackoffNanos: UInt64 = 100_000_000
    static let maxBackoffNanos: UInt64 = 5_000_000_000

    /// Opens connections for empty pool positions whose back-off has passed.
    func maintainPool(now: UInt64) {
        for i in 0..<pool.count where pool[i] == nil && now >= reconnectAtNanos[i] {
            do throws(TransportError) {
                pool[i] = try startConnection(poolIndex: i)
            } catch {
                connectionAttemptFailed(poolIndex: i, error: error, now: now)
            }
        }
    }

    /// Starts a non-blocking connection for pool position `poolIndex` (TCP connect in flight;
    /// TLS and HTTP/2 follow as the socket becomes ready).
    func startConnection(poolIndex: Int) throws(TransportError) -> APNsConnection {
        let host = configuration.host
        // Resolved afresh for every connection; connections rotate over the addresses. With a
        // proxy, the proxy is what we connect to, and it resolves APNs's name.
        let addresses = try SocketConnect.resolve(host: configuration.proxy?.host ?? host,
                                                  port: configuration.proxy?.port ?? configuration.port)
        let address = addresses[addressRotation % addresses.count]
        addressRotation &+= 1
        let fd = try SocketConnect.start(address)
        guard let ssl = SSL_new(tls.ctx) else {
            Glibc.close(fd)
            throw TransportError(.tls, "SSL_new: " + OpenSSLError.drain())
        }
        SSL_set_fd(ssl, fd)
        SSL_set_connect_state(ssl)
        if SocketConnect.isIPLiteral(host) {
            // No SNI for IP literals (RFC 6066 §3); verify the certificate's IP address instead.
            X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host)
        } else {
            _ = swiftpush_ssl_set_sni(ssl, host)
            SSL_set1_host(ssl, host)
        }
        localCounters.connectionsOpened += 1
        let conn = APNsConnection(client: self, poolIndex: poolIndex, fd: fd, ssl: ssl,
                                  localMaxStreams: configuration.maxStreamsPerConnection,
                                  retireAfterTimeouts: configuration.retireAfterTimeouts)
        conn.tunnelRequest = tunnelRequest
        return conn
    }

    /// A connection that could not be made, or died before its first success: back off with
    /// jitter, record the error for waiters, and fail the queue at once on TLS failures.
    func connectionAttemptFailed(poolIndex i: Int, error: TransportError, now: UInt64) {
        let previous = reconnectDelayNanos[i]
        let next = previous == 0 ? Self.firstBackoffNanos : min(previous * 2, Self.maxBackoffNanos)
        reconnectDelayNanos[i] = next
        // Full jitter in [next/2, next): many clients restarting together don't reconnect in step.
        reconnectAtNanos[i] = now + next / 2 + UInt64.random(in: 0..<max(1, next / 2))
        lock.withLock {
            lastConnectionError = error
            if waiters > 0 { lock.broadcast() }
        }
        if error.kind == .tls && openConnectionCount() == 0 {
            // Certificate, host-name or ALPN failures don't heal by retrying: fail what waits,
            // with the reason, instead of letting it sit until its deadline.
            failPending(reason: .tlsFailed, text: error.description)
        }
    }

    /// Connections of the pool that are ready for streams.
    func openConnectionCount() -> Int {
        pool.reduce(0) { $0 + (($1?.state.phase == .ready) ? 1 : 0) }
    }

    /// A connection finished its handshake: wakes callers of waitUntilConnected.
    func connectionEstablished(_ conn: APNsConnection) {
        lock.withLock {
            openConnections += 1
            if waiters > 0 { lock.broadcast() }
        }
    }

    /// A connection is gone: every stream still on it is resent (if the server never
    /// processed it) or ends FAILED as connection lost; its pool position reconnects.
    func connectionClosed(_ conn: APNsConnection, error: TransportError?) {
        // Account for every stream still open on it.
        let now = MonotonicTime.nanos()
        var index = conn.inFlightHead
        while index >= 0 {
            let slot = slots[index]
            let next = slot.pointee.next
            slot.pointee.next = -1
            slot.pointee.prev = -1
            inFlightTotal -= 1
            if conn.state.wasUnprocessed(streamID: slot.pointee.streamID)
                && slot.pointee.attempts < SlotLimits.maxWrites && now < slot.pointee.deadlineNanos {
                requeue(index, slot)
            } else {
                var text = error?.description ?? "the connection closed before the answer arrived"
                if let goaway = conn.state.goawayReason { text = "after GOAWAY (\(goaway)): " + text }
                complete(index, outcome: .failed, status: 0, reason: .connectionLost, text: text)
            }
            index = next
        }
        conn.inFlightHead = -1
        if pool[conn.poolIndex] === conn {
            pool[conn.poolIndex] = nil
            if conn.hadSuccess {
                reconnectAtNanos[conn.poolIndex] = now
            } else {
                connectionAttemptFailed(poolIndex: conn.poolIndex,
                                        error: error ?? TransportError(.closed, "the connection closed before any notification was accepted"),
                                        now: now)
            }
        }
        retiring.removeAll { $0 === conn }
        if conn.everEstablished {
            lock.withLock {
                openConnections -= 1
                if let error { lastConnectionError = error }
            }
        }
    }

    /// Moves a connection out of the pool (it takes no new streams) so that its position
    /// reconnects at once.
    func retire(_ conn: APNsConnection, action: ConnectionState.Action) {
        if pool[conn.poolIndex] === conn {
            pool[conn.poolIndex] = nil
            reconnectAtNanos[conn.poolIndex] = 0
            retiring.append(conn)
        }
        if action == .close { conn.requestClose(nil) }
    }


    /// Health: an idle connection gets a PING; one whose PING goes unanswered is closed (its
    /// streams end as connection lost, its position reconnects).
    func checkHealth(now: UInt64) {
        guard configuration.idlePingMillis > 0 else { return }
        let idle = UInt64(configuration.idlePingMillis) * 1_000_000
        let timeout = UInt64(max(configuration.pingTimeoutMillis, 1)) * 1_000_000
        for conn in pool.compactMap({ $0 }) + retiring where conn.phase == .open {
            if conn.pingSentNanos != 0 {
                if now > conn.pingSentNanos && now - conn.pingSentNanos > timeout {
                    conn.close(TransportError(.closed, "no PING acknowledgement within \(configuration.pingTimeoutMillis) ms"))
                }
            } else if now > conn.lastInputNanos && now - conn.lastInputNanos > idle {
                conn.sendPing(now: now)
            }
        }
    }
}
