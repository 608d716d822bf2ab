import PushCore

/// Requests: a pooled `MockStream` per request stream, the decision when the request is
/// complete (the handler chain), the record, and the answer, now or after the configured
/// delay, with what follows an answer (the stream limit, the GOAWAY or kill after N).
extension MockConnection {
    /// A request stream opened (its HEADERS began).
    func beginStream(_ id: Int32) {
        let (opened, newPeak) = streams.open(id)
        if newPeak { ledger.observeConcurrentStreams(streams.open) }
        opened._withUnsafeGuaranteedRef { begin($0) }
    }

    /// `stream` (reset for a new request) opened: unless above our GOAWAY, count it for the
    /// refuse-every-Nth fault.
    private func begin(_ stream: MockStream) {
        let id = stream.streamID
        withPump { $0.attach(stream) }
        if let last = goawayLastStream, id > last {
            // Opened after our GOAWAY was queued: the client will send it again elsewhere.
            stream.discarded = true
            return
        }
        refreshFaults()
        if faults.affectsRequests, faults.refuseThisStream() {
            stream.discarded = true
            pump.refuseStream(id)
        }
    }

    /// A stream closed (answered, reset, or the connection is going): recycle its state.
    func endStream(_ stream: MockStream) {
        if !stream.answered { ledger.streamUnanswered() }
        streams.close(stream)
    }

    /// Takes the current faults; a new generation restarts this connection's counts too.
    @inline(__always)
    func refreshFaults() {
        faults.refresh()
        counts.follow(generation: faults.generation)
    }

    /// The request on `stream` is complete: decide, record, and answer (now, later, or never).
    func respond(to stream: MockStream) {
        guard !stream.decided, !stream.discarded, !killPending, !pump.sessionFinished, pump.session != nil else { return }
        if let last = goawayLastStream, stream.streamID > last {
            // Opened before our GOAWAY but completed after it: above its last-stream-id, so
            // the client will send it again elsewhere and it must not be processed here.
            stream.discarded = true
            return
        }
        refreshFaults()
        var reason = APNsReason.none
        var timestamp: Int64 = -1
        var stalled = false
        switch chain.decide(stream, role: role) {
        case .answer(let r, let t):
            reason = r
            timestamp = t
        case .stall:
            stalled = true
        case .pass:
            break
        }

        if !stream.hasApnsId {
            uuids.write(to: stream.apnsId)
            stream.hasApnsId = true
        }
        stream.decided = true
        stream.reason = reason
        if stream.streamID > highestDecidedStream { highestDecidedStream = stream.streamID }
        // Channel management requests are administration, not notifications: not in the record.
        if role == .apns { ledger.processed(connection: serial, stream: stream, reason: reason, stalled: stalled) }
        // A stalled request keeps its stream open and never hears back (apns.md, "Lessons" 4).
        if stalled { return }

        // The header block is built when the answer is submitted (`answer`); a channel
        // management answer's was built with its decision (it carries what the registry said).
        if reason != .none { MockResponse.fillBody(stream, reason: reason, timestamp: timestamp) }
        let delay = faults.delayMillis
        if delay > 0 {
            timers.schedule(afterMillis: delay, connection: self, stream: stream)
        } else {
            answer(stream)
        }
    }

    /// A delayed answer is due: submit it unless its stream or connection went away meanwhile.
    /// Nothing is written yet: true when the caller must `flush(recordPerAnswer: true)` the
    /// pump once the tick's other answers are submitted (each then becomes a TLS record of its
    /// own).
    /// `apnsId`: the stream's apns-id bytes as they were when it was scheduled (see
    /// `MockTimers.Entry`), written back now that the stream is known to be the same request.
    func submitLater(_ stream: MockStream, serial: UInt64, apnsId: MockStream.ApnsIdBytes) -> Bool {
        guard pump.phase == .open, !pump.sessionFinished, !killPending, stream.serial == serial, stream.decided,
              !stream.answered else { return false }
        stream.apnsId.storeBytes(of: apnsId, as: MockStream.ApnsIdBytes.self)
        answer(stream)
        return pump.phase == .open
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
            if settings.developmentMode { uuids.write(to: stream.uniqueId) }
            MockResponse.fillHeaders(stream, status: status, uniqueId: settings.developmentMode)
        }
    }

    /// Submits the decided answer, then applies what follows an answer: the stream limit's
    /// raise or drop, a GOAWAY or a kill after N requests.
    private func answer(_ stream: MockStream) {
        guard pump.session != nil else { return }
        if stream.headerCount == 0 { fillHeaders(stream) }
        guard withPump({ $0.submitResponse(stream) }) else { return }
        stream.answered = true
        counts.countAnswer()
        perform(limit.answered(stream: stream.streamID, accepted: stream.reason == .none,
                               dropAfterRejection: faults.dropLimitAfterRejection))
        guard faults.affectsRequests else { return }
        let due = counts.due(faults.faults, goawaySent: goawayLastStream != nil)
        if let reason = due.goawayReason { sendGoaway(reason: reason) }
        if due.kill {
            // Write what is queued (this answer included), then drop the socket.
            killPending = true
            pump.closeAfterFlush = true
            ledger.connectionKilled()
        }
    }

    /// GOAWAY(NO_ERROR) with `{"reason": reason}`, last-stream-id = the highest stream
    /// processed: streams above it were not, and are not.
    func sendGoaway(reason: String) {
        guard pump.session != nil else { return }
        let debug = Array(#"{"reason":"#.utf8) + JSONText.quoted(reason) + [UInt8(ascii: "}")]
        goawayLastStream = highestDecidedStream
        pump.submitGoaway(lastStream: highestDecidedStream, debug: debug)
    }
}
