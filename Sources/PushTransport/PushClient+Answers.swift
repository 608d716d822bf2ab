#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore

/// What connections report from inside nghttp2 callbacks: SETTINGS, GOAWAY, and each
/// stream's end, turned into an outcome, a resend or a delayed retry. On the I/O thread.
extension PushClient {
    /// The server's SETTINGS: follow its MAX_CONCURRENT_STREAMS.
    func settingsReceived(on conn: APNsConnection, maxConcurrentStreams: UInt32) {
        let before = conn.state.streamLimit
        if conn.state.settingsReceived(maxConcurrentStreams: maxConcurrentStreams) {
            conn.becameReady()
        } else if conn.state.streamLimit != before {
            refreshPublishedState() // rare (APNs raises the limit once): the stats show it at once
        }
    }

    /// GOAWAY: the connection takes no new streams and is replaced; what it did not process
    /// is resent when it closes (connectionClosed).
    func goawayReceived(on conn: APNsConnection, lastStreamID: Int32, errorCode: UInt32, reason: String?) {
        localCounters.goaways += 1
        lastGoawayReason = reason ?? String(cString: nghttp2_http2_strerror(errorCode))
        let action = conn.state.goawayReceived(lastStreamID: lastStreamID, reason: reason)
        retire(conn, action: action)
    }

    /// A stream ended: accepted, an error answer (finishRejected), refused (resent), or reset.
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
            conn.answered = true
            conn.consecutiveServerErrors = 0
            if !conn.hadSuccess || mayBeBackingOff {
                // Once per connection (cheap): an accepted notification ends any back-off and
                // shows the token it carried is good.
                conn.hadSuccess = true
                mayBeBackingOff = false
                reconnect.succeeded()
                token?.accepted(generation: conn.tokenGeneration)
            }
            complete(index, outcome: .accepted, status: 200, reason: .none, text: nil)
        } else if status != 0 {
            finishRejected(index, slot, status: status, on: conn)
        } else if errorCode == NGHTTP2_REFUSED_STREAM.rawValue {
            // Refused streams were not processed (RFC 9113 §8.7): safe to send again, within the
            // deadline; this does not spend the retry budget.
            if slot.pointee.attempts < SlotLimits.maxWrites && MonotonicTime.nanos() < slot.pointee.deadlineNanos {
                requeue(index, slot, processed: false)
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
    func finishRejected(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, status: Int32, on conn: APNsConnection) {
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
        let refusal = reason.isConnectionRefusal
        if !refusal { conn.answered = true }
        let attemptsLeft = slot.pointee.answeredAttempts < UInt32(configuration.maxAttempts)
            && slot.pointee.attempts < SlotLimits.maxWrites
        switch reason.retryClass {
        case .later, .backoff:
            if reason.retryClass == .backoff {
                // 5xx: the connection is suspect; several in a row retire it.
                conn.consecutiveServerErrors += 1
                if conn.consecutiveServerErrors >= configuration.retireAfterServerErrors {
                    retireByClient(conn)
                }
            }
            let delay = retryDelay(attempt: slot.pointee.answeredAttempts)
            if attemptsLeft && now + delay < slot.pointee.deadlineNanos {
                localCounters.resent += 1
                slot.pointee.reason = reason.rawValue
                delayed.insert(index, at: now + delay)
                return
            }
        case .token:
            // ExpiredProviderToken: a token APNs calls expired is useless whatever its age: sign
            // a new one once and use it on a new connection. If that one is refused too, the
            // clock is the likely cause: say so and stop re-signing. Either way the client backs
            // off and the notification waits for a new connection until its deadline (REJECTED
            // with this reason then).
            let verdict = token?.expiredRejection(generation: conn.tokenGeneration) ?? .alreadyReplaced
            switch verdict {
            case .clockSuspect(let iat, let localTime): clockSuspectText = ProviderToken.clockSuspectText(iat: iat, localTime: localTime)
            case .resigned: clockSuspectText = nil
            case .alreadyReplaced: break
            }
            connectionRefused(conn, text: clockSuspectText ?? "APNs refused the provider token: \(text)", now: now)
            retireByClient(conn)
            if slot.pointee.attempts < SlotLimits.maxWrites && now < slot.pointee.deadlineNanos {
                slot.pointee.reason = reason.rawValue
                requeue(index, slot, processed: true)
                return
            }
        case .connection:
            // TooManyProviderTokenUpdates / IdleTimeout: that connection is unusable (the first
            // is also a refusal of the credentials: back off).
            if refusal { connectionRefused(conn, text: "APNs refused the connection: \(text)", now: now) }
            retireByClient(conn)
            if attemptsLeft {
                slot.pointee.reason = reason.rawValue
                requeue(index, slot, processed: true)
                return
            }
        case .refused:
            // Credentials APNs will not accept (InvalidProviderToken, BadCertificate...): final
            // for the notification; new connections back off so nothing hammers APNs.
            connectionRefused(conn, text: "APNs refused the credentials: \(text)", now: now)
        case .never, .unknown, .local:
            break
        }
        let finalText = (reason == .expiredProviderToken ? clockSuspectText : nil) ?? text
        complete(index, outcome: .rejected, status: status, reason: reason, text: finalText)
    }

    /// Exponential back-off for retried answers: the base delay doubled per attempt made,
    /// with jitter in [d/2, d) so retries from many notifications don't arrive together.
    func retryDelay(attempt: UInt32) -> UInt64 {
        let base = UInt64(max(configuration.retryDelayMillis, 1)) * 1_000_000
        let d = base << UInt64(min(max(Int(attempt) - 1, 0), 16))
        return d / 2 + UInt64.random(in: 0..<max(1, d / 2))
    }

    /// Moves delayed retries whose time has come to the front of the queue (the list is kept
    /// in due order, so this stops at the first one not due).
    func releaseDelayed(now: UInt64) {
        var ready = SlotList()
        while let first = delayed.firstDue, first <= now {
            ready.append(delayed.popFirst(), in: slots)
        }
        if ready.isEmpty { return }
        ready.splice(&pending, in: slots)
        pending = ready
    }
}
