#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

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
        outbox.counters.goaways += 1
        queue.lastGoawayReason = reason ?? String(cString: nghttp2_http2_strerror(errorCode))
        perform(conn.state.goawayReceived(lastStreamID: lastStreamID, reason: reason), on: conn)
    }

    /// A stream ended: accepted, an error answer (finishRejected), refused (resent), or reset.
    /// The notification's fate is `RetryPolicy`'s (`settle`), the connection's is its state's
    /// (the action performed last); the side effects on the client are made here.
    func streamClosed(on conn: APNsConnection, slotIndex index: Int32, errorCode: UInt32) {
        let slot = slots[index]
        conn.inFlightSlots.unlink(index, slot, in: slots)
        queue.inFlightTotal -= 1
        let status = slot.pointee.answer.status
        // Answers end streams while their bytes are read: the read's time is the answer's.
        let now = conn.lastInputNanos
        if status != 0 {
            outbox.latencies.record(micros: Int64((now &- slot.pointee.request.submitNanos) / 1000))
        }
        let action: ConnectionState.Action
        if status == 200 {
            let firstSuccess = !conn.state.history.hadSuccess
            action = conn.state.streamEnded(.accepted)
            if firstSuccess || pool.mayBeBackingOff {
                // Once per connection (cheap): an accepted notification ends any back-off and
                // shows the token it carried is good.
                pool.mayBeBackingOff = false
                reconnect.succeeded()
                token?.accepted(generation: conn.record.tokenGeneration)
            }
            settle(index, slot, after: .accepted, status: 200, reason: .none, text: nil, now: now)
        } else if status != 0 {
            action = finishRejected(index, slot, status: status, on: conn, now: now)
        } else {
            action = conn.state.streamEnded(.unanswered)
            if errorCode == NGHTTP2_REFUSED_STREAM.rawValue {
                // Refused streams were not processed (RFC 9113 §8.7): safe to send again.
                settle(index, slot, after: .unprocessed, status: 0, reason: .protocolError,
                       text: "stream refused by the server \(slot.pointee.transmission.attempts) times" + (conn.state.goawayReason.map { " (GOAWAY: \($0))" } ?? ""),
                       now: now)
            } else {
                settle(index, slot, after: .unanswered, status: 0, reason: .protocolError,
                       text: "stream reset by the server: " + String(cString: nghttp2_http2_strerror(errorCode)), now: now)
            }
        }
        perform(action, on: conn)
    }

    /// An error answer: retried when its reason's class allows and the attempt budget and
    /// deadline leave room (apns.md, "Retry guidance"), otherwise the final REJECTED outcome.
    /// Returns what the answer means for its connection (`ConnectionState.streamEnded`), for the
    /// caller to perform once the notification is settled.
    func finishRejected(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, status: Int32, on conn: APNsConnection,
                        now: UInt64) -> ConnectionState.Action {
        let body = UnsafeRawBufferPointer(start: slot.pointee.storage.buffer! + SlotLayout.body, count: Int(slot.pointee.answer.bodyLength))
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
        slot.pointee.answer.timestampMs = parsed?.timestampMs ?? 0
        slot.pointee.transmission.answeredAttempts += 1
        let action = conn.state.streamEnded(.rejected(reason))
        answerAffectsClient(reason, text: text, on: conn, now: now)
        settle(index, slot, after: .rejected(reason), status: status, reason: reason,
               text: (reason == .expiredProviderToken ? queue.clockSuspectText : nil) ?? text, now: now)
        return action
    }

    /// Ends one attempt of the notification in `index`: `RetryPolicy` decides what becomes of it
    /// (the one rule for every answer path: accepted, an error answer, refused, reset, timed
    /// out, its connection lost), and this carries the decision out in one place: the outcome,
    /// or the list it waits in to be sent again. `status`, `reason` and `text` are the outcome's
    /// when the decision is final (an error answer's, or why it FAILED); `text` is built only then.
    func settle(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, after end: RetryPolicy.AttemptEnd, status: Int32,
                reason: APNsReason, text: @autoclosure () -> String?, now: UInt64) {
        let decision = constants.retryPolicy.decide(end, answered: slot.pointee.transmission.answeredAttempts, writes: slot.pointee.transmission.attempts,
                                                    now: now, deadline: slot.pointee.request.deadlineNanos, unit: Double.random(in: 0..<1))
        switch decision {
        case .accept:
            complete(index, outcome: .accepted, status: 200, reason: .none, text: nil, now: now)
        case .reject:
            complete(index, outcome: .rejected, status: status, reason: reason, text: text(), now: now)
        case .fail:
            complete(index, outcome: .failed, status: 0, reason: reason, text: text(), now: now)
        case .retryAfter(let delay):
            outbox.counters.resent += 1
            slot.pointee.answer.reason = reason.rawValue
            queue.delayed.insert(index, at: now + delay)
        case .resendOnNewConnection:
            // Waits in the queue (status and reason kept: at its deadline it ends REJECTED with
            // this answer, see expireQueued).
            slot.pointee.answer.reason = reason.rawValue
            requeue(index, slot, processed: true)
        case .resend:
            requeue(index, slot, processed: false)
        }
    }

    /// What an error answer means for the client's credentials, whatever becomes of the
    /// notification (`RetryPolicy`) and of the connection (`ConnectionState.streamEnded`, which
    /// counts 5xx and retires): an expired token is re-signed once (or the clock named), and
    /// credential refusals make the client back off.
    private func answerAffectsClient(_ reason: APNsReason, text: String, on conn: APNsConnection, now: UInt64) {
        switch reason.retryClass {
        case .token:
            // ExpiredProviderToken: a token APNs calls expired is useless whatever its age: sign a
            // new one once; if that one is refused too, the clock is the likely cause: say so and
            // stop re-signing. Either way the client backs off before the next connection.
            let verdict = token?.expiredRejection(generation: conn.record.tokenGeneration) ?? .alreadyReplaced
            switch verdict {
            case .clockSuspect(let iat, let localTime): queue.clockSuspectText = ProviderToken.clockSuspectText(iat: iat, localTime: localTime)
            case .resigned: queue.clockSuspectText = nil
            case .alreadyReplaced: break
            }
            connectionRefused(conn, text: queue.clockSuspectText ?? "APNs refused the provider token: \(text)", now: now)
        case .connection:
            // TooManyProviderTokenUpdates (a refusal of the credentials too) / IdleTimeout.
            if reason.isConnectionRefusal { connectionRefused(conn, text: "APNs refused the connection: \(text)", now: now) }
        case .refused:
            // Credentials APNs will not accept (InvalidProviderToken, BadCertificate...).
            connectionRefused(conn, text: "APNs refused the credentials: \(text)", now: now)
        case .backoff, .later, .never, .unknown, .local:
            break
        }
    }

    /// Moves delayed retries whose time has come to the front of the queue (the list is kept
    /// in due order, so this stops at the first one not due).
    func releaseDelayed(now: UInt64) {
        var ready = SlotList()
        while let first = queue.delayed.firstDue, first <= now {
            ready.append(queue.delayed.popFirst(), in: slots)
        }
        if ready.isEmpty { return }
        ready.splice(&queue.pending, in: slots)
        queue.pending = ready
    }
}

/// A client hears what its connections report (`ConnectionEvents`: SETTINGS, GOAWAY, stream
/// ends here; ready, refill and closed in PushClient+Pool and +Dispatch).
extension PushClient: ConnectionEvents {}
