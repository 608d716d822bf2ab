#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// The pool: opening connections (with back-off), following them as they come and go,
/// retiring them, and keeping idle ones healthy. All on the I/O thread.
extension PushClient {
    /// Opens connections for empty pool positions: all of them normally, one at a time (the
    /// probe) while the client backs off after refusals (`ReconnectSchedule`). Names are
    /// resolved on the resolver thread: a position waits for the answer (at most the connect
    /// timeout), the I/O thread does not.
    func maintainPool(now: UInt64) {
        takeResolutions(now: now)
        guard hasEmptyPosition else { return }
        guard reconnect.mayAttempt(now: now) else {
            pool.mayBeBackingOff = true
            return
        }
        guard let addresses = pool.resolvedAddresses else {
            if let asked = pool.resolution {
                if timers.connectTimedOut(now: now, startedNanos: asked.startedNanos) {
                    pool.resolution = nil // its answer, if it ever comes, is not taken
                    connectionAttemptFailed(startedNanos: asked.startedNanos,
                                            error: TransportError(.connect, "resolving \(resolvedHost) took longer than \(configuration.timing.connectTimeoutMillis) ms"),
                                            now: now)
                }
            } else {
                pool.resolution = (pool.resolverThread.request(host: resolvedHost, port: resolvedPort), now)
            }
            return
        }
        // One answer serves every position opened in this round; the next round resolves anew.
        pool.resolvedAddresses = nil
        let hasUse = !queue.pending.isEmpty || !queue.delayed.isEmpty || handoff.withLock { $0.waiters > 0 }
        for i in 0..<poolTarget where pool.connections[i] == nil {
            let attempt = reconnect.beginAttempt(now: now, mayProbe: hasUse)
            if attempt == .denied {
                pool.mayBeBackingOff = true
                return
            }
            do throws(TransportError) {
                let conn = try startConnection(poolIndex: i, addresses: addresses, rotate: true)
                conn.record.isProbe = attempt == .probe
                pool.connections[i] = conn
            } catch {
                connectionAttemptFailed(startedNanos: now, error: error, now: now)
            }
        }
    }

    /// How many pool positions should hold a connection: all, unless the pool sizes itself.
    var poolTarget: Int { pool.sizing?.target ?? pool.connections.count }

    /// A position that should hold a connection has none (it is to be opened, or reopened).
    var hasEmptyPosition: Bool { pool.connections[..<poolTarget].contains { $0 == nil } }

    /// A self-sizing pool (`PoolSizing`) looks at its connections' streams and the queue: it
    /// may open one more connection (the next `maintainPool` does) or retire its last one.
    func resizePool(now: UInt64) {
        guard var sizing = pool.sizing else { return }
        var ready = 0, opening = 0, free = 0
        var perConnection = configuration.pool.maxStreamsPerConnection
        for conn in pool.connections[..<sizing.target] {
            if let conn, conn.state.phase == .ready {
                ready += 1
                free += conn.state.availableStreams
                perConnection = conn.state.streamLimit
            } else {
                opening += 1
            }
        }
        let seen = PoolSizing.Observation(ready: ready, opening: opening, freeStreams: free, streamsPerConnection: perConnection,
                                          queued: queue.pending.count, inFlight: queue.inFlightTotal)
        let decision = sizing.observe(seen, now: now)
        pool.sizing = sizing
        switch decision {
        case .keep:
            break
        case .grow:
            log(.info, .poolResized, "every stream is in use and \(queue.pending.count) notification(s) wait: opening connection \(sizing.target) of at most \(sizing.maximum)")
        case .shrink:
            log(.info, .poolResized, "demand stayed below half of what \(sizing.target) connection(s) carry for \(configuration.pool.shrinkWindowMillis) ms: closing connection \(sizing.target + 1)")
            if let conn = pool.connections[sizing.target] { retireByClient(conn) }
        }
    }

    /// The name resolved for connections: APNs's host, or the proxy's (which resolves APNs's).
    var resolvedHost: String { configuration.endpoint.proxy?.host ?? configuration.endpoint.host }
    var resolvedPort: Int { configuration.endpoint.proxy?.port ?? configuration.endpoint.port }

    /// Takes the resolver thread's answer to the request in progress (older ones are stale).
    private func takeResolutions(now: UInt64) {
        for answer in pool.resolverThread.take() where answer.ticket == pool.resolution?.ticket {
            let started = pool.resolution!.startedNanos
            pool.resolution = nil
            switch answer.result {
            case .success(let addresses): pool.resolvedAddresses = addresses
            case .failure(let error): connectionAttemptFailed(startedNanos: started, error: error, now: now)
            }
        }
    }

    /// Starts a non-blocking connection for pool position `poolIndex` to one of `addresses`
    /// (TCP connect in flight; TLS and HTTP/2 follow as the socket becomes ready). With `rotate`,
    /// connections take turns over the addresses (Apple asks providers to spread them); an
    /// address whose connect fails at once is skipped, and the ones not tried stay with the
    /// connection, to be tried in turn if its connect fails (`connectionClosed`).
    func startConnection(poolIndex: Int, addresses: [SocketConnect.Address], rotate: Bool) throws(TransportError) -> APNsConnection {
        let host = configuration.endpoint.host
        var order = addresses
        if rotate && order.count > 1 {
            let k = pool.addressRotation % order.count
            order = Array(order[k...] + order[..<k])
            pool.addressRotation &+= 1
        }
        let fd = try SocketConnect.startFirst(of: &order)
        let ssl = try tls.clientSSL(fd: fd, host: host)
        outbox.counters.connectionsOpened += 1
        log(.debug, .connecting, "connecting to \(configuration.endpoint.host):\(configuration.endpoint.port)"
            + (configuration.endpoint.proxy.map { " through the proxy \($0.host):\($0.port)" } ?? "")
            + " (pool position \(poolIndex), \(order.count) other address(es) to fall back on)")
        let conn = APNsConnection(events: self, slots: slots, authority: constants.authority, loop: loop, clock: configuration.timing.clock,
                                  poolIndex: poolIndex, fd: fd, ssl: ssl,
                                  localMaxStreams: configuration.pool.maxStreamsPerConnection,
                                  retireAfterTimeouts: configuration.recovery.retireAfterTimeouts,
                                  retireAfterServerErrors: configuration.recovery.retireAfterServerErrors,
                                  sessionMemory: configuration.sessionMemory)
        conn.tunnel.request = pool.tunnelRequest
        conn.record.fallbackAddresses = order
        return conn
    }

    /// A connection attempt was refused (see `ReconnectBackoff` for what counts): back off,
    /// record the error for waiters and `last_connection_error`, and fail the queue at once on
    /// TLS failures.
    func connectionAttemptFailed(startedNanos: UInt64, error: TransportError, now: UInt64) {
        let delay = reconnect.failed(now: now, startedNanos: startedNanos)
        pool.mayBeBackingOff = true
        logAttemptFailed(error, delayNanos: delay)
        handoff.withLockNotifying { h, waiters in
            h.lastConnectionError = error
            if h.waiters > 0 { waiters.broadcast() }
        }
        if error.kind == .tls && openConnectionCount() == 0 {
            // Certificate, host-name or ALPN failures don't heal by retrying: fail what waits,
            // with the reason, instead of letting it sit until its deadline.
            failPending(reason: .tlsFailed, text: error.description)
        }
    }

    /// A connection-level refusal answered on `conn` (a credential rejection): the client backs
    /// off (once per connection) and `text` becomes the last connection error.
    func connectionRefused(_ conn: APNsConnection, text: String, now: UInt64) {
        guard conn.state.countRefusal() else { return }
        let delay = reconnect.failed(now: now, startedNanos: conn.state.startedNanos)
        pool.mayBeBackingOff = true
        logAttemptFailed(TransportError(.closed, text), delayNanos: delay)
        handoff.withLockNotifying { h, waiters in
            h.lastConnectionError = TransportError(.closed, text)
            if h.waiters > 0 { waiters.broadcast() }
        }
    }

    /// Connections of the pool that are ready for streams.
    func openConnectionCount() -> Int {
        pool.connections.reduce(0) { $0 + (($1?.state.phase == .ready) ? 1 : 0) }
    }

    /// A connection finished its handshake: wakes callers of waitUntilConnected.
    func connectionEstablished(_ conn: APNsConnection) {
        if conn.record.isProbe && queue.pending.isEmpty && queue.delayed.isEmpty {
            // A probe with nothing to send would hold the back-off's one attempt indefinitely
            // (only an answer ends it): let a thread with work probe instead.
            conn.record.isProbe = false
            reconnect.probeEnded()
        }
        log(.info, .ready, "connection to \(configuration.endpoint.host):\(configuration.endpoint.port) ready (pool position \(conn.poolIndex), "
            + "server allows \(conn.state.remoteMaxStreams) concurrent streams)")
        handoff.withLockNotifying { h, waiters in
            h.openConnections += 1
            if h.waiters > 0 { waiters.broadcast() }
        }
        refreshPublishedState()
    }

    /// A connection is gone: every stream still on it is resent (if the server never
    /// processed it) or ends FAILED as connection lost; its pool position reconnects.
    func connectionClosed(_ conn: APNsConnection, error: TransportError?) {
        // Account for every stream still open on it.
        let now = configuration.timing.clock.monotonicNanos()
        var index = conn.inFlightSlots.head
        while index >= 0 {
            let slot = slots[index]
            let next = slot.pointee.links.next
            slot.pointee.links.next = -1
            slot.pointee.links.prev = -1
            queue.inFlightTotal -= 1
            // Streams above a GOAWAY's last-stream-id were never processed; the others may have been.
            settle(index, slot, after: conn.state.wasUnprocessed(streamID: slot.pointee.transmission.streamID) ? .unprocessed : .unanswered,
                   status: 0, reason: .connectionLost,
                   text: (conn.state.goawayReason.map { "after GOAWAY (\($0)): " } ?? "")
                       + (error?.description ?? "the connection closed before the answer arrived"),
                   now: now)
            index = next
        }
        conn.inFlightSlots = InFlightList()
        if pool.connections[conn.poolIndex] === conn {
            pool.connections[conn.poolIndex] = nil
            if error?.kind == .connect && !conn.state.reachedTCP && !conn.record.fallbackAddresses.isEmpty {
                // The TCP connect to this address failed: the same answer's next address first,
                // before counting a failure.
                if let next = try? startConnection(poolIndex: conn.poolIndex, addresses: conn.record.fallbackAddresses, rotate: false) {
                    next.record.isProbe = conn.record.isProbe // the same attempt, at its next address
                    pool.connections[conn.poolIndex] = next
                    return
                }
            }
        }
        pool.retiring.removeAll { $0 === conn }
        switch conn.state.ending {
        case .counted:
            break // success reset the back-off; a refusal already counted as this attempt's failure
        case .failedAttempt:
            connectionAttemptFailed(startedNanos: conn.state.startedNanos,
                                    error: error ?? TransportError(.closed, "the server closed the connection before answering"),
                                    now: now)
        case .ordinary:
            if conn.record.isProbe { reconnect.probeEnded() }
        }
        if conn.state.everEstablished {
            let how = error.map { "closed: \($0.description)" } ?? "closed"
            log(error == nil || conn.state.history.retiredByClient ? .info : .warning, .closed,
                "connection to \(configuration.endpoint.host):\(configuration.endpoint.port) \(how)"
                + (conn.state.goawayReason.map { " (after GOAWAY: \($0))" } ?? ""))
            // Ordinary closes (ours, an orderly GOAWAY drain) are not connection errors; an
            // abrupt loss is, with the GOAWAY's reason when one came first.
            var reported = error
            if let e = error, let goaway = conn.state.goawayReason { reported = TransportError(e.kind, "after GOAWAY (\(goaway)): " + e.description) }
            handoff.withLock { h in
                h.openConnections -= 1
                if let reported, conn.state.endIsConnectionError { h.lastConnectionError = reported }
            }
            refreshPublishedState()
        }
    }
}
