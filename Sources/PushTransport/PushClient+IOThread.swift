#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore

/// The I/O-thread half of the client: the loop, the pool, dispatch, deadlines, outcomes.
extension PushClient {
    /// How often deadlines and connect timeouts are checked.
    static let scanIntervalNanos: UInt64 = 50_000_000
    /// Reconnect back-off: first delay and cap (doubling with jitter in between).
    static let firstBackoffNanos: UInt64 = 100_000_000
    static let maxBackoffNanos: UInt64 = 5_000_000_000

    func runIOThread() {
        IOThread.blockSIGPIPE()
        var drainDeadline: UInt64?
        while true {
            lock.lock()
            var taken = submissions
            submissions = SlotList()
            let closingNow = closing
            let drain = drainMillis
            ioIdle = false
            lock.unlock()
            pending.splice(&taken, in: slots)

            let now = MonotonicTime.nanos()
            if closingNow && drainDeadline == nil { drainDeadline = now + UInt64(drain) * 1_000_000 }
            if !closingNow || !pending.isEmpty || !delayed.isEmpty || inFlightTotal > 0 { maintainPool(now: now) }
            dispatch(now: now)
            if now >= nextScanNanos {
                releaseDelayed(now: now)
                scanDeadlines(now: now)
                checkHealth(now: now)
                refreshPublishedState()
                nextScanNanos = now + Self.scanIntervalNanos
            }
            if let deadline = drainDeadline, (pending.isEmpty && delayed.isEmpty && inFlightTotal == 0) || now >= deadline {
                shutDown()
                return
            }
            publish()

            lock.lock()
            if submissions.isEmpty && !closing { ioIdle = true }
            let sleep = submissions.isEmpty && closing == closingNow
            lock.unlock()
            if sleep { loop.runOnce(timeoutMillis: nextTimeoutMillis(now: now)) }
        }
    }

    private func nextTimeoutMillis(now: UInt64) -> Int32 {
        var until = nextScanNanos
        for (i, c) in pool.enumerated() where c == nil && reconnectAtNanos[i] < until {
            until = reconnectAtNanos[i]
        }
        return until <= now ? 0 : Int32(min((until - now) / 1_000_000 + 1, 1000))
    }

    // MARK: - Pool

    /// Opens connections for empty pool positions whose back-off has passed.
    private func maintainPool(now: UInt64) {
        for i in 0..<pool.count where pool[i] == nil && now >= reconnectAtNanos[i] {
            do throws(TransportError) {
                pool[i] = try startConnection(poolIndex: i)
            } catch {
                connectionAttemptFailed(poolIndex: i, error: error, now: now)
            }
        }
    }

    private func startConnection(poolIndex: Int) throws(TransportError) -> APNsConnection {
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

    private func connectionAttemptFailed(poolIndex i: Int, error: TransportError, now: UInt64) {
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

    private func openConnectionCount() -> Int {
        pool.reduce(0) { $0 + (($1?.state.phase == .ready) ? 1 : 0) }
    }

    func connectionEstablished(_ conn: APNsConnection) {
        lock.withLock {
            openConnections += 1
            if waiters > 0 { lock.broadcast() }
        }
    }

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
    private func retire(_ conn: APNsConnection, action: ConnectionState.Action) {
        if pool[conn.poolIndex] === conn {
            pool[conn.poolIndex] = nil
            reconnectAtNanos[conn.poolIndex] = 0
            retiring.append(conn)
        }
        if action == .close { conn.requestClose(nil) }
    }

    // MARK: - Dispatch

    /// Starts streams for pending notifications on connections with room, spreading them.
    private func dispatch(now: UInt64) {
        guard !pending.isEmpty else { return }
        let authorization = currentAuthorization()
        for conn in pool {
            guard let conn, !pending.isEmpty else { continue }
            var room = conn.state.availableStreams
            if room == 0 { continue }
            var submitted = false
            while room > 0 {
                let index = pending.popFirst(in: slots)
                if index < 0 { break }
                let slot = slots[index]
                if now >= slot.pointee.deadlineNanos {
                    complete(index, outcome: .failed, status: 0, reason: .queueTimeout,
                             text: "not sent within the deadline")
                    continue
                }
                if !slot.pointee.hasCallerApnsId && slot.pointee.attempts == 0 {
                    uuid.write(to: slot.pointee.buffer! + SlotLayout.apnsId)
                }
                slot.pointee.status = 0
                slot.pointee.bodyLength = 0
                let streamID = conn.submit(slotIndex: index, slot: slot, authorization: authorization)
                if streamID < 0 {
                    // Stream ids exhausted or session unusable: retire it, keep the notification.
                    pending.prepend(index, in: slots)
                    retire(conn, action: conn.state.retire())
                    break
                }
                slot.pointee.streamID = streamID
                slot.pointee.connection = Int32(conn.poolIndex)
                slot.pointee.attempts += 1
                localCounters.sent += 1
                conn.linkInFlight(index, slot)
                conn.state.streamOpened()
                inFlightTotal += 1
                room -= 1
                submitted = true
            }
            if submitted { conn.flush() }
        }
    }

    /// The `authorization` value in a buffer the client owns, copied again only when the token
    /// is re-signed (so dispatching needs no closure and no array per batch).
    private func currentAuthorization() -> UnsafeRawBufferPointer? {
        guard let token else { return nil }
        let value = token.current()
        if token.generation != authorizationGeneration || authorizationBuffer == nil {
            if let old = authorizationBuffer {
                OPENSSL_cleanse(old.baseAddress, old.count)
                old.deallocate()
            }
            let b = UnsafeMutableRawBufferPointer.allocate(byteCount: value.count, alignment: 1)
            b.copyBytes(from: value)
            authorizationBuffer = b
            authorizationGeneration = token.generation
        }
        return UnsafeRawBufferPointer(authorizationBuffer!)
    }

    // MARK: - Events from connections (inside nghttp2 callbacks)

    func settingsReceived(on conn: APNsConnection, maxConcurrentStreams: UInt32) {
        conn.state.settingsReceived(maxConcurrentStreams: maxConcurrentStreams)
    }

    func goawayReceived(on conn: APNsConnection, lastStreamID: Int32, errorCode: UInt32, reason: String?) {
        localCounters.goaways += 1
        lastGoawayReason = reason ?? String(cString: nghttp2_http2_strerror(errorCode))
        let action = conn.state.goawayReceived(lastStreamID: lastStreamID, reason: reason)
        retire(conn, action: action)
    }

    func streamClosed(on conn: APNsConnection, slotIndex index: Int32, errorCode: UInt32) {
        let slot = slots[index]
        conn.unlinkInFlight(index, slot)
        inFlightTotal -= 1
        let status = slot.pointee.status
        let action = conn.state.streamClosed(answered: status != 0)
        if status != 0 {
            localLatencies.record(micros: Int64((MonotonicTime.nanos() &- slot.pointee.submitNanos) / 1000))
        }
        if status == 200 {
            conn.consecutiveServerErrors = 0
            if !conn.hadSuccess {
                conn.hadSuccess = true
                reconnectDelayNanos[conn.poolIndex] = 0
            }
            complete(index, outcome: .accepted, status: 200, reason: .none, text: nil)
        } else if status != 0 {
            finishRejected(index, slot, status: status, on: conn)
        } else if errorCode == NGHTTP2_REFUSED_STREAM.rawValue {
            // Refused streams were not processed (RFC 9113 §8.7): safe to send again, within the
            // deadline; this does not spend the retry budget.
            if slot.pointee.attempts < SlotLimits.maxWrites && MonotonicTime.nanos() < slot.pointee.deadlineNanos {
                requeue(index, slot)
            } else {
                let goaway = conn.state.goawayReason.map { " (GOAWAY: \($0))" } ?? ""
                complete(index, outcome: .failed, status: 0, reason: .protocolError,
                         text: "stream refused by the server \(slot.pointee.attempts) times" + goaway)
            }
        } else {
            let name = String(cString: nghttp2_http2_strerror(errorCode))
            complete(index, outcome: .failed, status: 0, reason: .protocolError, text: "stream reset by the server: \(name)")
        }
        if action == .close { conn.requestClose(nil) }
    }

    /// An error answer: retried when its reason's class allows and the attempt budget and
    /// deadline leave room (apns.md, "Retry guidance"), otherwise the final REJECTED outcome.
    private func finishRejected(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, status: Int32, on conn: APNsConnection) {
        let body = UnsafeRawBufferPointer(start: slot.pointee.buffer! + SlotLayout.body, count: Int(slot.pointee.bodyLength))
        let parsed = APNsResponse.parseErrorBody(body)
        var reason = parsed?.reason ?? .unknown
        if parsed == nil {
            // No usable body: classify by status so that bare 5xx are still treated as such.
            switch status {
            case 500: reason = .internalServerError
            case 503: reason = .serviceUnavailable
            case 429: reason = .tooManyRequests
            default: break
            }
        }
        let text = parsed?.reasonText ?? "HTTP \(status) without a reason"
        slot.pointee.timestampMs = parsed?.timestampMs ?? 0
        let now = MonotonicTime.nanos()
        slot.pointee.answeredAttempts += 1
        let attemptsLeft = slot.pointee.answeredAttempts < UInt32(configuration.maxAttempts)
            && slot.pointee.attempts < SlotLimits.maxWrites
        switch reason.retryClass {
        case .later, .backoff:
            if reason.retryClass == .backoff {
                // 5xx: the connection is suspect; several in a row retire it.
                conn.consecutiveServerErrors += 1
                if conn.consecutiveServerErrors >= configuration.retireAfterServerErrors {
                    retire(conn, action: conn.state.retire())
                }
            }
            let delay = retryDelay(attempt: slot.pointee.attempts)
            if attemptsLeft && now + delay < slot.pointee.deadlineNanos {
                localCounters.resent += 1
                slot.pointee.reason = reason.rawValue
                slot.pointee.retryAtNanos = now + delay
                delayed.append(index, in: slots)
                return
            }
        case .token:
            // ExpiredProviderToken: sign a new token, use it on a new connection, resend.
            token?.refreshAfterRejection()
            retire(conn, action: conn.state.retire())
            if attemptsLeft { requeue(index, slot); return }
        case .connection:
            // TooManyProviderTokenUpdates / IdleTimeout: that connection is unusable.
            retire(conn, action: conn.state.retire())
            if attemptsLeft { requeue(index, slot); return }
        case .never, .unknown, .local:
            break
        }
        complete(index, outcome: .rejected, status: status, reason: reason, text: text)
    }

    /// Exponential back-off for retried answers: the base delay doubled per attempt made,
    /// with jitter in [d/2, d) so retries from many notifications don't arrive together.
    private func retryDelay(attempt: UInt32) -> UInt64 {
        let base = UInt64(max(configuration.retryDelayMillis, 1)) * 1_000_000
        let d = base << UInt64(min(max(Int(attempt) - 1, 0), 16))
        return d / 2 + UInt64.random(in: 0..<max(1, d / 2))
    }

    /// Moves delayed retries whose time has come to the front of the queue.
    private func releaseDelayed(now: UInt64) {
        guard !delayed.isEmpty else { return }
        var kept = SlotList()
        var ready = SlotList()
        while true {
            let index = delayed.popFirst(in: slots)
            if index < 0 { break }
            if now >= slots[index].pointee.retryAtNanos { ready.append(index, in: slots) } else { kept.append(index, in: slots) }
        }
        delayed = kept
        ready.splice(&pending, in: slots)
        pending = ready
    }

    /// Health: an idle connection gets a PING; one whose PING goes unanswered is closed (its
    /// streams end as connection lost, its position reconnects).
    private func checkHealth(now: UInt64) {
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

    // MARK: - Outcomes

    /// The outcome kinds, matching `PUSH_OUTCOME_*`.
    enum Outcome: Int32 { case accepted = 1, rejected = 2, failed = 3 }

    func complete(_ index: Int32, outcome: Outcome, status: Int32, reason: APNsReason, text: String?) {
        let slot = slots[index]
        if slot.pointee.attempts == 0 && !slot.pointee.hasCallerApnsId {
            // Never sent, so never given an apns-id: results always carry one.
            uuid.write(to: slot.pointee.buffer! + SlotLayout.apnsId)
        }
        slot.pointee.outcome = outcome.rawValue
        slot.pointee.status = status
        slot.pointee.reason = reason.rawValue
        if outcome != .rejected { slot.pointee.timestampMs = 0 }
        slot.pointee.latencyUs = Int64((MonotonicTime.nanos() &- slot.pointee.submitNanos) / 1000)
        if var text {
            if text.utf8.count > SlotLayout.reasonTextCapacity {
                text = String(decoding: text.utf8.prefix(SlotLayout.reasonTextCapacity), as: UTF8.self)
            }
            let n = min(text.utf8.count, SlotLayout.reasonTextCapacity)
            text.withUTF8 { (slot.pointee.buffer! + SlotLayout.reasonText).copyMemory(from: $0.baseAddress!, byteCount: n) }
            slot.pointee.reasonTextLength = Int32(n)
        } else {
            slot.pointee.reasonTextLength = 0
        }
        switch outcome {
        case .accepted: localCounters.accepted += 1
        case .rejected: localCounters.rejected += 1
        case .failed: localCounters.failed += 1
        }
        finishedLocally.append(index, in: slots)
    }

    /// Fills a FAILED/Cancelled result into a slot that never reached the I/O thread (a send
    /// that raced with close). Called under the lock by a caller thread.
    static func markCancelled(_ slot: UnsafeMutablePointer<Slot>, now: UInt64) {
        let text: StaticString = "the client was closed before it was sent"
        slot.pointee.outcome = Outcome.failed.rawValue
        slot.pointee.status = 0
        slot.pointee.reason = APNsReason.cancelled.rawValue
        slot.pointee.timestampMs = 0
        slot.pointee.latencyUs = Int64((now &- slot.pointee.submitNanos) / 1000)
        (slot.pointee.buffer! + SlotLayout.reasonText).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        slot.pointee.reasonTextLength = Int32(text.utf8CodeUnitCount)
        // The apns-id is assigned on the I/O thread; this one never got there (rare: a fresh
        // generator is fine).
        if !slot.pointee.hasCallerApnsId {
            var generator = UUIDGenerator()
            generator.write(to: slot.pointee.buffer! + SlotLayout.apnsId)
        }
    }

    private func requeue(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>) {
        localCounters.resent += 1
        slot.pointee.streamID = 0
        slot.pointee.connection = -1
        pending.prepend(index, in: slots)
    }

    private func failPending(reason: APNsReason, text: String) {
        while true {
            let index = pending.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: reason, text: text)
        }
    }

    /// Copies what the stats show of the I/O thread's state (every scan interval, so stats
    /// cost nothing per notification).
    private func refreshPublishedState() {
        var p = PublishedState()
        p.queued = pending.count + delayed.count
        p.inFlight = inFlightTotal
        p.lastGoawayReason = lastGoawayReason
        for conn in pool.compactMap({ $0 }) + retiring {
            let state: Int32
            switch conn.state.phase {
            case .connecting: state = 1; p.connectionsOpening += 1
            case .ready: state = 2; p.connectionsOpen += 1
            case .draining: state = 3
            case .closed: continue
            }
            p.connections.append((state, Int32(min(conn.state.streamLimit, Int(Int32.max))), Int32(conn.state.inFlight)))
        }
        lock.withLock { published = p }
    }

    /// Hands finished notifications to pollers (one lock for the whole batch).
    private func publish() {
        if finishedLocally.isEmpty && localCounters == ClientCounters() && localLatencies.total == 0 { return }
        if let callback = configuration.resultCallback {
            deliver(&finishedLocally, to: callback, buffer: callbackBuffer)
        }
        lock.lock()
        completions.splice(&finishedLocally, in: slots)
        counters.add(localCounters)
        if localLatencies.total > 0 { latencies.merge(localLatencies) }
        if waiters > 0 { lock.broadcast() }
        lock.unlock()
        localCounters = ClientCounters()
        if localLatencies.total > 0 { localLatencies = LatencyHistogram() }
    }

    // MARK: - Deadlines

    private func scanDeadlines(now: UInt64) {
        // Queued notifications whose deadline passed were never sent.
        var kept = SlotList()
        while true {
            let index = pending.popFirst(in: slots)
            if index < 0 { break }
            if now >= slots[index].pointee.deadlineNanos {
                let text = lock.withLock { lastConnectionError }.map { "not sent within the deadline; last connection error: \($0.description)" }
                complete(index, outcome: .failed, status: 0, reason: .queueTimeout, text: text ?? "not sent within the deadline")
            } else {
                kept.append(index, in: slots)
            }
        }
        pending = kept
        var keptDelayed = SlotList()
        while true {
            let index = delayed.popFirst(in: slots)
            if index < 0 { break }
            let slot = slots[index]
            if now >= slot.pointee.deadlineNanos {
                // Its last answer was a retryable error; the deadline ended the retries.
                complete(index, outcome: .rejected, status: slot.pointee.status, reason: APNsReason(rawValue: slot.pointee.reason) ?? .unknown,
                         text: "deadline reached while waiting to retry")
            } else {
                keptDelayed.append(index, in: slots)
            }
        }
        delayed = keptDelayed
        // In-flight streams with no answer in time: reset them; the result is unknown.
        for conn in pool.compactMap({ $0 }) + retiring {
            var index = conn.inFlightHead
            var expired = false
            while index >= 0 {
                let slot = slots[index]
                let next = slot.pointee.next
                if now >= slot.pointee.deadlineNanos {
                    conn.unlinkInFlight(index, slot)
                    inFlightTotal -= 1
                    conn.cancel(streamID: slot.pointee.streamID)
                    complete(index, outcome: .failed, status: 0, reason: .timeout, text: "no answer within the deadline")
                    let action = conn.state.streamTimedOut()
                    if action != .none { retire(conn, action: action) }
                    expired = true
                }
                index = next
            }
            if expired { conn.flush() }
            // Connection attempts that take too long.
            if conn.phase == .connecting || conn.phase == .handshaking,
               now > conn.startedNanos, now - conn.startedNanos > UInt64(configuration.connectTimeoutMillis) * 1_000_000 {
                conn.close(TransportError(.connect, "connecting to \(configuration.host):\(configuration.port) timed out"))
            }
        }
    }

    // MARK: - Shutdown

    /// Ends everything still held with a FAILED outcome, closes connections, publishes.
    private func shutDown() {
        pending.splice(&delayed, in: slots)
        while true {
            let index = pending.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: .cancelled, text: "the client was closed before it was sent")
        }
        for conn in pool.compactMap({ $0 }) + retiring {
            var index = conn.inFlightHead
            while index >= 0 {
                let slot = slots[index]
                let next = slot.pointee.next
                conn.unlinkInFlight(index, slot)
                inFlightTotal -= 1
                complete(index, outcome: .failed, status: 0, reason: .cancelledInFlight,
                         text: "the client was closed while it was in flight")
                index = next
            }
            conn.sendGoaway()
            conn.flush()
            conn.close(nil)
        }
        pool = pool.map { _ in nil }
        retiring = []
        if let callback = configuration.resultCallback { deliver(&finishedLocally, to: callback, buffer: callbackBuffer) }
        lock.lock()
        completions.splice(&finishedLocally, in: slots)
        counters.add(localCounters)
        localCounters = ClientCounters()
        // Nothing else will ever be queued: anything a racing sender slipped in is cancelled too.
        var late = submissions
        submissions = SlotList()
        submissionsClosed = true
        lock.unlock()
        while true {
            let index = late.popFirst(in: slots)
            if index < 0 { break }
            complete(index, outcome: .failed, status: 0, reason: .cancelled, text: "the client was closed before it was sent")
        }
        if let callback = configuration.resultCallback { deliver(&finishedLocally, to: callback, buffer: callbackBuffer) }
        lock.lock()
        completions.splice(&finishedLocally, in: slots)
        counters.add(localCounters)
        finished = true
        lock.broadcast()
        lock.unlock()
    }
}
