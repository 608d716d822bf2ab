import PushCore

/// The pool: opening connections (with back-off), following them as they come up and go,
/// retiring them and sizing the pool. Opening is asked of the driver (`.resolve`, `.connect`),
/// which reports back.
extension ClientCore {
    // MARK: - Opening

    /// Opens connections for empty pool positions: all of them normally, one at a time (the
    /// probe) while the client backs off after refusals (`backoff`). Names are
    /// resolved on the resolver thread: a position waits for the answer (at most the connect
    /// timeout), the I/O thread does not. `callersWaiting`: a caller waits on the client (for
    /// room, results, or a connection), which entitles this thread to the back-off's probe.
    mutating func maintainPool(now: UInt64, callersWaiting: Bool) {
        guard pool.hasEmptyPosition else { return }
        guard backoff.mayAttempt(now: now) else {
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
                pool.resolution = (nil, now)
                act(.resolve(host: resolvedHost, port: resolvedPort))
            }
            return
        }
        // One answer serves every position opened in this round; the next round resolves anew.
        pool.resolvedAddresses = nil
        // An unreachable client fails what it is given at once, so its queue is empty: it still
        // probes (at the back-off's pace) to learn when APNs is back.
        let hasUse = queue.hasWaiting || callersWaiting || reachability.isUnreachable
        for i in 0..<pool.target where pool.positions[i] == nil {
            let attempt = backoff.beginAttempt(now: now, mayProbe: hasUse)
            if attempt == .denied {
                pool.mayBeBackingOff = true
                return
            }
            // Connections take turns over the addresses (Apple asks providers to spread them).
            var order = addresses
            if order.count > 1 {
                let k = pool.addressRotation % order.count
                order = Array(order[k...] + order[..<k])
                pool.addressRotation &+= 1
            }
            var record = ConnectionRecord()
            record.isProbe = attempt == .probe
            let id = pool.add(at: i, state: newConnectionState(now: now), record: record, now: now)
            if record.isProbe { act(.backoff(.probeStarted(id))) }
            act(.connect(id, addresses: order))
        }
    }

    /// The name resolved for connections: APNs's host, or the proxy's (which resolves APNs's).
    package var resolvedHost: String { configuration.endpoint.proxy?.host ?? configuration.endpoint.host }
    package var resolvedPort: Int { configuration.endpoint.proxy?.port ?? configuration.endpoint.port }

    /// A connection's state as it starts connecting at `now`.
    package func newConnectionState(now: UInt64) -> ConnectionState {
        ConnectionState(localMaxStreams: configuration.pool.maxStreamsPerConnection, timeoutsBeforeRetirement: configuration.recovery.retireAfterTimeouts,
                        serverErrorsBeforeRetirement: configuration.recovery.retireAfterServerErrors, startedNanos: now)
    }

    /// The driver asked the resolver thread (`.resolve`); its answer will carry `ticket`.
    package mutating func resolutionStarted(ticket: UInt64) {
        if pool.resolution != nil { pool.resolution!.ticket = ticket }
    }

    /// The resolver thread answered: the addresses serve the next round of connection attempts;
    /// a failure counts as a failed attempt. An answer to an abandoned request is not taken.
    mutating func resolutionAnswered(ticket: UInt64, _ result: Result<[SocketAddress], TransportError>, now: UInt64) {
        guard let asked = pool.resolution, asked.ticket == ticket else { return }
        pool.resolution = nil
        switch result {
        case .success(let addresses): pool.resolvedAddresses = addresses
        case .failure(let error): connectionAttemptFailed(startedNanos: asked.startedNanos, error: error, now: now)
        }
    }

    /// The driver started connection `id` (`.connect`): its TCP connect is in flight; `fallback`
    /// are the addresses not tried, to be tried in turn if this one's connect fails.
    mutating func connectStarted(_ id: ConnectionID, fallback: [SocketAddress], now: UInt64) {
        guard let e = pool.entry(id) else { return }
        pool.entries[e].record.fallbackAddresses = fallback
        outbox.counters.connectionsOpened += 1
        log(.debug, .connecting, "connecting to \(endpointText)"
            + (configuration.endpoint.proxy.map { " through the proxy \($0.host):\($0.port)" } ?? "")
            + " (pool position \(pool.entries[e].position), \(fallback.count) other address(es) to fall back on)")
    }

    /// Connection `id` could not even start (no address took a TCP connect, TLS could not be
    /// set up): a failed attempt (the one it fell back from, if it was a fallback).
    mutating func connectFailed(_ id: ConnectionID, error: TransportError, now: UInt64) {
        guard let e = pool.entry(id) else { return }
        let origin = pool.entries[e].record.fallbackOf
        pool.remove(e)
        connectionAttemptFailed(startedNanos: origin?.startedNanos ?? now, error: origin?.error ?? error, now: now)
    }

    /// A step of connection `id`'s transport (TCP, the proxy's tunnel, TLS).
    package mutating func connectionProgressed(_ id: ConnectionID, _ step: ConnectionProgress) {
        guard let e = pool.entry(id) else { return }
        switch step {
        case .tcpConnected(let throughProxy): pool.entries[e].state.tcpConnected(throughProxy: throughProxy)
        case .tunnelOpened: pool.entries[e].state.tunnelOpened()
        case .handshakeCompleted: pool.entries[e].state.handshakeCompleted()
        }
    }

    /// The server's first SETTINGS made the connection ready: callers of waitUntilConnected hear it.
    mutating func connectionEstablished(_ e: Int) {
        if pool.entries[e].record.isProbe && !queue.hasWaiting {
            // A probe with nothing to send would hold the back-off's one attempt indefinitely
            // (only an answer ends it): let a thread with work probe instead.
            pool.entries[e].record.isProbe = false
            endProbe()
        }
        noteConnectionReady()
        log(.info, .ready, "connection to \(endpointText) ready (pool position \(pool.entries[e].position), "
            + "server allows \(pool.entries[e].state.remoteMaxStreams) concurrent streams)")
        outbox.openConnectionsChange += 1
        outbox.stateChanged = true
    }

    // MARK: - Ending

    /// Connection `id` is gone (`error` nil: an orderly end); the facts of its last read were
    /// taken first. Every stream still on it is resent (if the server never processed it) or ends
    /// FAILED as connection lost; its pool position reconnects, at the same answer's next address
    /// first when its TCP connect failed.
    mutating func connectionClosed(_ id: ConnectionID, error: TransportError?, now: UInt64) {
        guard let e = pool.entry(id) else { return }
        var error = error
        if pool.entries[e].state.phase == .awaitingSettings, error == nil || error?.kind == .closed {
            // TLS came up but the server hung up before its SETTINGS, without an alert: with
            // TLS 1.3 this is how a server that refuses the client certificate looks.
            let detail = error.map { " (\($0.description))" } ?? ""
            error = TransportError(.tls, TransportError.closedAfterHandshakeText + detail)
        }
        pool.entries[e].state.closed()
        let state = pool.entries[e].state, record = pool.entries[e].record
        // Account for every stream still open on it.
        var index = pool.entries[e].inFlight.head
        while index >= 0 {
            let slot = slots[index]
            let next = slot.pointee.links.next
            slot.pointee.links.next = -1
            slot.pointee.links.prev = -1
            queue.inFlightTotal -= 1
            // Streams above a GOAWAY's last-stream-id were never processed; the others may have been.
            settle(index, slot, after: state.wasUnprocessed(streamID: slot.pointee.transmission.streamID) ? .unprocessed : .unanswered,
                   status: 0, reason: .connectionLost,
                   text: (state.goawayReason.map { "after GOAWAY (\($0)): " } ?? "")
                       + (error?.description ?? "the connection closed before the answer arrived"),
                   now: now)
            slot.pointee.transmission.streamID = 0
            index = next
        }
        pool.entries[e].inFlight = InFlightList()
        if pool.holdsPosition(e), let error, error.kind == .connect, !state.reachedTCP, !record.fallbackAddresses.isEmpty {
            // The TCP connect to this address failed: the same answer's next address first,
            // before counting a failure (the same attempt, so the same probe ticket).
            let position = pool.entries[e].position
            pool.remove(e)
            var next = ConnectionRecord()
            next.isProbe = record.isProbe
            next.fallbackOf = (state.startedNanos, error)
            act(.connect(pool.add(at: position, state: newConnectionState(now: now), record: next, now: now), addresses: record.fallbackAddresses))
            return
        }
        pool.remove(e)
        switch state.ending {
        case .counted:
            break // success reset the back-off; a refusal already counted as this attempt's failure
        case .failedAttempt:
            connectionAttemptFailed(startedNanos: state.startedNanos,
                                    error: error ?? TransportError(.closed, "the server closed the connection before answering"),
                                    now: now)
        case .ordinary:
            if record.isProbe { endProbe() }
        }
        if state.everEstablished {
            let how = error.map { "closed: \($0.description)" } ?? "closed"
            log(error == nil || state.history.retiredByClient ? .info : .warning, .closed,
                "connection to \(endpointText) \(how)" + (state.goawayReason.map { " (after GOAWAY: \($0))" } ?? ""))
            // Ordinary closes (ours, an orderly GOAWAY drain) are not connection errors; an
            // abrupt loss is, with the GOAWAY's reason when one came first.
            var reported = error
            if let e = error, let goaway = state.goawayReason { reported = TransportError(e.kind, "after GOAWAY (\(goaway)): " + e.description) }
            if let reported, state.endIsConnectionError { reportConnectionError(reported) }
            outbox.openConnectionsChange -= 1
            outbox.stateChanged = true
        }
    }

    /// A connection attempt was refused (see `ReconnectBackoff` for what counts): back off,
    /// record the error for waiters and `last_connection_error`, and fail the queue at once on
    /// TLS failures.
    mutating func connectionAttemptFailed(startedNanos: UInt64, error: TransportError, now: UInt64) {
        let delay = backoffFailed(startedNanos: startedNanos, now: now)
        pool.mayBeBackingOff = true
        logAttemptFailed(error, delayNanos: delay)
        reportConnectionError(error)
        noteAttemptFailed(startedNanos: startedNanos)
        if error.kind == .tls && pool.readyCount == 0 {
            // Certificate, host-name or ALPN failures don't heal by retrying: fail what waits,
            // with the reason, instead of letting it sit until its deadline.
            failPending(reason: .tlsFailed, text: error.description, now: now)
        }
    }

    /// A connection-level refusal answered on the connection in entry `e` (a credential
    /// rejection): the client backs off (once per connection) and `text` becomes the last
    /// connection error.
    mutating func connectionRefused(_ e: Int, text: String, now: UInt64) {
        guard pool.entries[e].state.countRefusal() else { return }
        let delay = backoffFailed(startedNanos: pool.entries[e].state.startedNanos, now: now)
        pool.mayBeBackingOff = true
        logAttemptFailed(TransportError(.closed, text), delayNanos: delay)
        reportConnectionError(TransportError(.closed, text))
    }

    /// `error` is the last connection error from now on (published with the next results).
    package mutating func reportConnectionError(_ error: TransportError) {
        lastConnectionError = error
        outbox.connectionError = error
    }

    /// Logs a failed connection attempt: the error (as a TLS failure or protocol error when it
    /// is one) and the back-off it caused.
    mutating func logAttemptFailed(_ error: TransportError, delayNanos: UInt64?) {
        switch error.kind {
        case .tls: log(.error, .tlsFailure, error.description)
        case .protocolError: log(.error, .protocolError, error.description)
        default: break
        }
        if let delayNanos {
            log(.warning, .reconnectScheduled, "\(error.description); next connection attempt in \(delayNanos / 1_000_000) ms")
        }
    }

    // MARK: - Size

    /// A self-sizing pool (`PoolSizing`) looks at its connections' streams and the queue: it
    /// may open one more connection (the next `maintainPool` does) or retire its last one.
    mutating func resizePool(now: UInt64) {
        guard var sizing = pool.sizing else { return }
        var ready = 0, opening = 0, free = 0
        var perConnection = configuration.pool.maxStreamsPerConnection
        for position in 0..<sizing.target {
            if let id = pool.positions[position], let e = pool.entry(id), pool.entries[e].state.phase == .ready {
                ready += 1
                free += pool.entries[e].state.availableStreams
                perConnection = pool.entries[e].state.streamLimit
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
            if let id = pool.positions[sizing.target], let e = pool.entry(id) { perform(pool.entries[e].state.retire(), on: e) }
        }
    }
}
