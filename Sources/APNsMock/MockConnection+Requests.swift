#if canImport(Glibc)
import Glibc
#endif
import CNGHTTP2
import PushCore

/// Requests: a pooled `MockStream` per request stream, the decision when the request is
/// complete (faults, validation), the record, and the answer, now or after the configured
/// delay.
extension MockConnection {
    /// A request stream opened (its HEADERS began).
    func beginStream(_ id: Int32) {
        let stream = freeStreams.popLast() ?? makeStream()
        nextStreamSerial &+= 1
        stream.reset(streamID: id, serial: nextStreamSerial)
        nghttp2_session_set_stream_user_data(session, id, Unmanaged.passUnretained(stream).toOpaque())
        receivingHeaders = .passUnretained(stream)
        openStreams += 1
        if openStreams > peakStreams {
            peakStreams = openStreams
            core.ledger.observeConcurrentStreams(openStreams)
        }
        if let last = goawayLastStream, id > last {
            // Opened after our GOAWAY was queued: the client will send it again elsewhere.
            stream.discarded = true
            return
        }
        refreshFaults()
        if core.faultState.affectsRequests, core.faultState.refuseThisStream() {
            stream.discarded = true
            nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_REFUSED_STREAM.rawValue)
        }
    }

    private func makeStream() -> MockStream {
        let s = MockStream()
        allStreams.append(s)
        return s
    }

    /// A stream closed (answered, reset, or the connection is going): recycle its state.
    func endStream(_ stream: MockStream) {
        if !stream.answered { core.ledger.streamUnanswered() }
        if receivingHeaders?.toOpaque() == Unmanaged.passUnretained(stream).toOpaque() { receivingHeaders = nil }
        openStreams -= 1
        freeStreams.append(stream)
    }

    /// Takes the current faults; a new generation restarts this connection's counts too.
    func refreshFaults() {
        core.refreshFaults()
        if faultGeneration != core.faultState.generation {
            faultGeneration = core.faultState.generation
            answeredSinceFaults = 0
        }
    }

    /// The request on `stream` is complete: decide, record, and answer (now, later, or never).
    func respond(to stream: MockStream) {
        guard !stream.decided, !stream.discarded, !killPending, !sessionFinished, session != nil else { return }
        if let last = goawayLastStream, stream.streamID > last {
            // Opened before our GOAWAY but completed after it: above its last-stream-id, so
            // the client will send it again elsewhere and it must not be processed here.
            stream.discarded = true
            return
        }
        refreshFaults()
        let faultsApply = core.faultState.affectsRequests
        // The lowercased token, only when a fault names tokens (a String per request otherwise
        // would be wasted work).
        let token = faultsApply && core.faultState.namesTokens
            ? String(decoding: stream.tokenBytes, as: UTF8.self).lowercased() : nil

        var reason = APNsReason.none
        var timestamp: Int64 = -1
        var stalled = false
        var management: BroadcastValidation.ManagementAnswer?
        switch faultsApply ? core.faultState.early(token: token) : .none {
        case .stall:
            stalled = true
        case .fail(let r):
            reason = r
        case .none where role == .channelManagement:
            management = BroadcastValidation.answer(management: stream, policy: self, registry: core.channels)
            reason = management!.reason
        case .none where stream.path == .broadcast:
            reason = BroadcastValidation.verdict(forBroadcast: stream, policy: self, registry: core.channels)
        case .none:
            applyDefaultTopic(to: stream)
            reason = RequestValidation.verdict(for: stream, policy: self)
            if reason == .none, !core.unregisteredDeviceTokens.isEmpty,
               let t = core.unregisteredDeviceTokens[String(decoding: stream.tokenBytes, as: UTF8.self).lowercased()] {
                reason = .unregistered
                timestamp = t
            }
            if reason == .none, faultsApply, let late = core.faultState.late(token: token) {
                reason = late.reason
                timestamp = late.timestamp
            }
        }

        if !stream.hasApnsId {
            uuids.write(to: stream.apnsId)
            stream.hasApnsId = true
        }
        stream.decided = true
        stream.reason = reason
        if stream.streamID > highestDecidedStream { highestDecidedStream = stream.streamID }
        // Channel management requests are administration, not notifications: not in the record.
        if role == .apns { core.ledger.processed(connection: serial, stream: stream, reason: reason, stalled: stalled) }
        // A stalled request keeps its stream open and never hears back (apns.md, "Lessons" 4).
        if stalled { return }

        // A management answer is built now (it carries what the registry said); the others
        // when they are sent (`answer`).
        if let management { MockResponse.fillManagementAnswer(stream, management) }
        if reason != .none { MockResponse.fillBody(stream, reason: reason, timestamp: timestamp) }
        let delay = core.faultState.delayMillis
        if delay > 0 {
            timers.schedule(afterMillis: delay, connection: self, stream: stream)
        } else {
            answer(stream)
        }
    }

    /// A delayed answer is due: submit it unless its stream or connection went away meanwhile.
    /// Nothing is written yet: true when the caller must `flush(recordPerAnswer: true)` this
    /// connection once the tick's other answers are submitted (each then becomes a TLS record
    /// of its own).
    /// `apnsId`: the stream's apns-id bytes as they were when it was scheduled (see
    /// `MockTimers.Entry`), written back now that the stream is known to be the same request.
    func submitLater(_ stream: MockStream, serial: UInt64, apnsId: MockStream.ApnsIdBytes) -> Bool {
        guard phase == .open, !sessionFinished, !killPending, stream.serial == serial, stream.decided, !stream.answered else { return false }
        stream.apnsId.storeBytes(of: apnsId, as: MockStream.ApnsIdBytes.self)
        answer(stream)
        return phase == .open
    }

    /// Builds the header block of a device notification's or broadcast's answer (decided:
    /// `stream.reason` is set). Done when the answer is submitted rather than when it is
    /// decided: a delayed answer's header storage is then written just before nghttp2 reads it
    /// (while it waits, thousands of others pass through the caches), and apns-unique-id is
    /// generated into hot memory too.
    private func fillHeaders(_ stream: MockStream) {
        let status = stream.reason.httpStatus
        if stream.path == .broadcast && role == .apns {
            // A broadcast's answer always carries apns-unique-id (apns.md), in both environments.
            uuids.write(to: stream.uniqueId)
            MockResponse.fillBroadcastHeaders(stream, status: status, uniqueId: stream.reason == .none)
        } else {
            if core.developmentMode { uuids.write(to: stream.uniqueId) }
            MockResponse.fillHeaders(stream, status: status, uniqueId: core.developmentMode)
        }
    }

    /// Submits the decided answer, then applies what follows an answer: the stream limit's
    /// raise or drop, a GOAWAY or a kill after N requests.
    private func answer(_ stream: MockStream) {
        guard let session else { return }
        if stream.headerCount == 0 { fillHeaders(stream) }
        let rv: Int32
        if stream.reason == .none && stream.answerBody.isEmpty {
            rv = nghttp2_submit_response(session, stream.streamID, stream.headers, stream.headerCount, nil)
        } else {
            var provider = nghttp2_data_provider()
            provider.source.ptr = Unmanaged.passUnretained(stream).toOpaque()
            provider.read_callback = MockCallbacks.readBody
            rv = nghttp2_submit_response(session, stream.streamID, stream.headers, stream.headerCount, &provider)
        }
        guard rv == 0 else { return }
        stream.answered = true
        answeredSinceFaults += 1
        followStreamLimit(afterAnswering: stream)
        guard core.faultState.affectsRequests else { return }
        let faults = core.faultState.faults
        if let n = faults.goawayAfterRequests, n > 0, answeredSinceFaults >= n, goawayLastStream == nil {
            sendGoaway(reason: faults.goawayReason)
        }
        if let n = faults.killConnectionAfterRequests, n > 0, answeredSinceFaults >= n {
            // Write what is queued (this answer included), then drop the socket.
            killPending = true
            closeAfterFlush = true
            core.ledger.connectionKilled()
        }
    }
}
