#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// What connections report: the facts nghttp2 gave them (SETTINGS, GOAWAY, each stream's end),
/// taken after nghttp2 has returned and turned into an outcome, a resend or a delayed retry.
/// On the I/O thread.
extension PushClient {
    /// Takes what `conn` recorded since the last time (`ConnectionInput`) and decides on each
    /// fact, in order. The read's time is every answer's.
    func absorbInput(of conn: APNsConnection) {
        let now = conn.lastInputNanos
        while let fact = conn.input.next() {
            switch fact.kind {
            case .streamClosed:
                streamClosed(on: conn, slotIndex: fact.slot, streamID: fact.streamID, errorCode: fact.code, now: now)
            case .settings:
                settingsReceived(on: conn, maxConcurrentStreams: fact.code)
            case .goaway:
                goawayReceived(on: conn, lastStreamID: fact.streamID, errorCode: fact.code, reason: conn.input.takeGoawayReason())
            case .pingAcknowledged:
                conn.state.pingAcknowledged()
            }
        }
    }

    /// The server's SETTINGS: follow its MAX_CONCURRENT_STREAMS.
    func settingsReceived(on conn: APNsConnection, maxConcurrentStreams: UInt32) {
        let before = conn.state.streamLimit
        if conn.state.settingsReceived(maxConcurrentStreams: maxConcurrentStreams) {
            connectionEstablished(conn)
        } else if conn.state.streamLimit != before {
            refreshPublishedState() // rare (APNs raises the limit once): the stats show it at once
        }
    }

    /// GOAWAY: the connection takes no new streams and is replaced; what it did not process
    /// is resent when it closes (connectionClosed).
    func goawayReceived(on conn: APNsConnection, lastStreamID: Int32, errorCode: UInt32, reason: String?) {
        core.outbox.counters.goaways += 1
        core.lastGoawayReason = reason ?? String(cString: nghttp2_http2_strerror(errorCode))
        perform(conn.state.goawayReceived(lastStreamID: lastStreamID, reason: reason), on: conn)
    }

    /// A stream ended: accepted, an error answer (finishRejected), refused (resent), or reset.
    /// The notification's fate is `RetryPolicy`'s (`settle`), the connection's is its state's
    /// (the action performed last); the side effects on the client are made here.
    func streamClosed(on conn: APNsConnection, slotIndex index: Int32, streamID: Int32, errorCode: UInt32, now: UInt64) {
        let slot = slots[index]
        // A stream whose notification was ended otherwise meanwhile (its deadline) is not its
        // slot's current stream any more: nothing to decide.
        guard slot.pointee.transmission.streamID == streamID else { return }
        conn.inFlightSlots.unlink(index, slot, in: slots)
        slot.pointee.transmission.streamID = 0
        core.queue.inFlightTotal -= 1
        let status = slot.pointee.answer.status
        if status != 0 {
            core.outbox.latencies.record(micros: Int64((now &- slot.pointee.request.submitNanos) / 1000))
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
            core.settle(index, slot, after: .accepted, status: 200, reason: .none, text: nil, now: now)
        } else if status != 0 {
            action = finishRejected(index, slot, status: status, on: conn, now: now)
        } else {
            action = conn.state.streamEnded(.unanswered)
            if errorCode == NGHTTP2_REFUSED_STREAM.rawValue {
                // Refused streams were not processed (RFC 9113 §8.7): safe to send again.
                core.settle(index, slot, after: .unprocessed, status: 0, reason: .protocolError,
                       text: "stream refused by the server \(slot.pointee.transmission.attempts) times" + (conn.state.goawayReason.map { " (GOAWAY: \($0))" } ?? ""),
                       now: now)
            } else {
                core.settle(index, slot, after: .unanswered, status: 0, reason: .protocolError,
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
        core.settle(index, slot, after: .rejected(reason), status: status, reason: reason,
               text: (reason == .expiredProviderToken ? core.clockSuspectText : nil) ?? text, now: now)
        return action
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
            case .clockSuspect(let iat, let localTime): core.clockSuspectText = ProviderToken.clockSuspectText(iat: iat, localTime: localTime)
            case .resigned: core.clockSuspectText = nil
            case .alreadyReplaced: break
            }
            connectionRefused(conn, text: core.clockSuspectText ?? "APNs refused the provider token: \(text)", now: now)
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
}

/// A client hears what its connections report (`ConnectionEvents`: reads in PushClient+Dispatch,
/// closes in PushClient+Pool).
extension PushClient: ConnectionEvents {}
