import PushCore

/// Answers: what a connection's facts mean (`ConnectionFact`: streams closed, SETTINGS, GOAWAY,
/// a PING's ACK), taken in the order nghttp2 reported them.
extension ClientCore {
    /// Takes every fact connection `id` recorded (`input`, its `ConnectionInput`) and decides on
    /// each, in order; `now` is the read's time, every answer's. The facts of a connection the
    /// core no longer knows are dropped.
    mutating func absorb(_ input: inout ConnectionInput, from id: ConnectionID, now: UInt64) {
        guard let e = pool.entry(id) else {
            while input.next() != nil {}
            return
        }
        pool.entries[e].lastInputNanos = now
        while let fact = input.next() {
            switch fact.kind {
            case .streamClosed:
                streamClosed(on: e, slot: fact.slot, streamID: fact.streamID, errorCode: fact.code, now: now)
            case .settings:
                settingsReceived(on: e, maxConcurrentStreams: fact.code, now: now)
            case .goaway:
                goawayReceived(on: e, lastStreamID: fact.streamID, errorCode: fact.code, reason: input.takeGoawayReason())
            case .pingAcknowledged:
                pool.entries[e].state.pingAcknowledged()
            }
        }
    }

    /// The server's SETTINGS: follow its MAX_CONCURRENT_STREAMS; the first makes the connection ready.
    mutating func settingsReceived(on e: Int, maxConcurrentStreams: UInt32, now: UInt64) {
        let before = pool.entries[e].state.streamLimit
        if pool.entries[e].state.settingsReceived(maxConcurrentStreams: maxConcurrentStreams) {
            connectionEstablished(e)
        } else if pool.entries[e].state.streamLimit != before {
            outbox.stateChanged = true // rare (APNs raises the limit once): the stats show it at once
        }
    }

    /// GOAWAY: the connection takes no new streams and is replaced; what it did not process is
    /// resent when it closes (`connectionClosed`).
    mutating func goawayReceived(on e: Int, lastStreamID: Int32, errorCode: UInt32, reason: String?) {
        outbox.counters.goaways += 1
        lastGoawayReason = reason ?? HTTP2ErrorCode.name(errorCode)
        perform(pool.entries[e].state.goawayReceived(lastStreamID: lastStreamID, reason: reason), on: e)
    }

    /// A stream ended: accepted, an error answer (finishRejected), refused (resent), or reset.
    /// The notification's fate is `RetryPolicy`'s (`settle`), the connection's is its state's
    /// (the action performed last); the side effects on the client are made here. A stream that
    /// is no longer its slot's (the notification was ended otherwise meanwhile: its deadline)
    /// changes nothing.
    mutating func streamClosed(on e: Int, slot index: Int32, streamID: Int32, errorCode: UInt32, now: UInt64) {
        let slot = slots[index]
        guard slot.pointee.transmission.streamID == streamID else { return }
        pool.entries[e].inFlight.unlink(index, slot, in: slots)
        slot.pointee.transmission.streamID = 0
        queue.inFlightTotal -= 1
        let status = slot.pointee.answer.status
        if status != 0 {
            outbox.latencies.record(micros: Int64((now &- slot.pointee.request.submitNanos) / 1000))
        }
        let action: ConnectionState.Action
        if status == 200 {
            let firstSuccess = !pool.entries[e].state.history.hadSuccess
            action = pool.entries[e].state.streamEnded(.accepted)
            if firstSuccess || pool.mayBeBackingOff {
                // Once per connection (cheap): an accepted notification ends any back-off and
                // shows the token it carried is good.
                pool.mayBeBackingOff = false
                backoffSucceeded()
                if tokenAuthentication { act(.tokenAccepted(generation: pool.entries[e].record.tokenGeneration)) }
            }
            settle(index, slot, after: .accepted, status: 200, reason: .none, text: nil, now: now)
        } else if status != 0 {
            action = finishRejected(index, slot, status: status, on: e, now: now)
        } else {
            action = pool.entries[e].state.streamEnded(.unanswered)
            if errorCode == HTTP2ErrorCode.refusedStream {
                // Refused streams were not processed (RFC 9113 §8.7): safe to send again.
                let goaway = pool.entries[e].state.goawayReason
                settle(index, slot, after: .unprocessed, status: 0, reason: .protocolError,
                       text: "stream refused by the server \(slot.pointee.transmission.attempts) times" + (goaway.map { " (GOAWAY: \($0))" } ?? ""),
                       now: now)
            } else {
                settle(index, slot, after: .unanswered, status: 0, reason: .protocolError,
                       text: "stream reset by the server: " + HTTP2ErrorCode.name(errorCode), now: now)
            }
        }
        perform(action, on: e)
    }

    /// An error answer: retried when its reason's class allows and the attempt budget and
    /// deadline leave room (apns.md, "Retry guidance"), otherwise the final REJECTED outcome.
    /// Returns what the answer means for its connection (`ConnectionState.streamEnded`), for the
    /// caller to perform once the notification is settled.
    mutating func finishRejected(_ index: Int32, _ slot: UnsafeMutablePointer<Slot>, status: Int32, on e: Int,
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
        let action = pool.entries[e].state.streamEnded(.rejected(reason))
        answerAffectsClient(reason, text: text, on: e, now: now)
        let resultText = (reason == .expiredProviderToken ? clockSuspectText : nil) ?? text
        settle(index, slot, after: .rejected(reason), status: status, reason: reason, text: resultText, now: now)
        return action
    }

    /// What an error answer means for the client's credentials, whatever becomes of the
    /// notification (`RetryPolicy`) and of the connection (`ConnectionState.streamEnded`, which
    /// counts 5xx and retires): an expired token is re-signed once (or the clock named), and
    /// credential refusals make the client back off.
    private mutating func answerAffectsClient(_ reason: APNsReason, text: String, on e: Int, now: UInt64) {
        switch reason.retryClass {
        case .token:
            // ExpiredProviderToken: a token APNs calls expired is useless whatever its age: sign a
            // new one once; if that one is refused too, the clock is the likely cause: say so and
            // stop re-signing. Either way the client backs off before the next connection. The
            // token decides (shared by a group's threads, it signs and reads the wall clock): the
            // driver asks it and reports its verdict (`tokenVerdict`).
            if tokenAuthentication {
                act(.tokenExpired(pool.id(e), generation: pool.entries[e].record.tokenGeneration, text: text))
            } else {
                tokenVerdict(.alreadyReplaced, on: e, text: text, now: now)
            }
        case .connection:
            // TooManyProviderTokenUpdates (a refusal of the credentials too) / IdleTimeout.
            if reason.isConnectionRefusal { connectionRefused(e, text: "APNs refused the connection: \(text)", now: now) }
        case .refused:
            // Credentials APNs will not accept (InvalidProviderToken, BadCertificate...).
            connectionRefused(e, text: "APNs refused the credentials: \(text)", now: now)
        case .backoff, .later, .never, .unknown, .local:
            break
        }
    }

    /// The provider token's verdict on an expiry that connection `id` was answered
    /// (`.tokenExpired`): a new token clears the clock's suspicion, a refused fresh one names the
    /// clock in what ends from now on; either way the connection counts as refused and the client
    /// backs off (`connectionRefused`). A connection gone since is not counted again.
    mutating func tokenVerdict(_ verdict: TokenExpiryVerdict, on id: ConnectionID, text: String, now: UInt64) {
        guard let e = pool.entry(id) else { return }
        tokenVerdict(verdict, on: e, text: text, now: now)
    }

    private mutating func tokenVerdict(_ verdict: TokenExpiryVerdict, on e: Int, text: String, now: UInt64) {
        switch verdict {
        case .clockSuspect(let iat, let localTime): clockSuspectText = TokenExpiryVerdict.clockSuspectText(iat: iat, localTime: localTime)
        case .resigned: clockSuspectText = nil
        case .alreadyReplaced: break
        }
        connectionRefused(e, text: clockSuspectText ?? "APNs refused the provider token: \(text)", now: now)
    }
}
