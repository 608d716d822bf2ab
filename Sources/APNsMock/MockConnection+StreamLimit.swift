import CNGHTTP2
import PushCore

/// MAX_CONCURRENT_STREAMS as APNs handles it, and the GOAWAYs (apns.md, "Transport" and
/// "Lessons" 1, 2, 5).
///
/// - Token connections start at 1 and are raised to the configured limit by a SETTINGS frame
///   sent after the first 200 (after its HEADERS, so the client sees them in that order).
/// - With `MockFaults.dropLimitToOneAfterRejection`, a non-200 answer drops the limit to 1 and
///   the next 200 raises it again.
/// - A client that opens a stream beyond the limit is sent GOAWAY(REFUSED_STREAM, "Maximum
///   active streams violated for this endpoint.") and the connection is closed. The initial
///   limit holds from the first byte (APNs punishes clients that assume nghttp2's default of
///   100 before its SETTINGS arrive; `strictInitialStreamLimit` turns that off); a raise holds
///   as soon as it is sent; a drop only once the client has acknowledged it. Until then
///   nghttp2 resets streams over the new limit with RST_STREAM(REFUSED_STREAM), which is the
///   "reset in-flight streams" of lesson 1.
extension MockConnection {
    /// A SETTINGS frame carrying `limit` was submitted.
    func limitSent(_ limit: UInt32) {
        settingsInFlight.append(limit)
        updateEnforcedLimit()
    }

    /// The client acknowledged our oldest SETTINGS frame in flight (RFC 9113 §6.5.3: in order).
    func settingsAcknowledged() {
        guard !settingsInFlight.isEmpty else { return }
        acknowledgedLimit = settingsInFlight.removeFirst()
        updateEnforcedLimit()
    }

    private func updateEnforcedLimit() {
        enforcedLimit = settingsInFlight.reduce(acknowledgedLimit) { max($0, $1) }
    }

    /// Submits a SETTINGS frame with MAX_CONCURRENT_STREAMS = `limit`.
    private func submitLimit(_ limit: UInt32) {
        guard let session else { return }
        var entry = nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: limit)
        if nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entry, 1) == 0 {
            limitSent(limit)
        }
    }

    /// After an answer: the first 200 (or the first 200 after a drop) raises the limit once
    /// its HEADERS are sent; a rejection may drop it.
    func followStreamLimit(afterAnswering stream: MockStream) {
        if stream.reason == .none {
            if !limitRaised || limitDropped {
                limitRaised = true
                limitDropped = false
                raiseLimitAfterStream = stream.streamID
            }
        } else if limitRaised, !limitDropped, core.faultState.affectsRequests, core.faultState.faults.dropLimitToOneAfterRejection {
            limitDropped = true
            raiseLimitAfterStream = 0
            submitLimit(1)
        }
    }

    /// The 200 that raises the limit has gone out: raise MAX_CONCURRENT_STREAMS.
    func raiseStreamLimit() {
        raiseLimitAfterStream = 0
        submitLimit(UInt32(core.maxConcurrentStreams))
    }

    /// GOAWAY(NO_ERROR) with `{"reason": reason}`, last-stream-id = the highest stream
    /// processed: streams above it were not, and nghttp2 closes them once the frame is sent
    /// and stops reading when the streams below have finished.
    func sendGoaway(reason: String) {
        guard let session else { return }
        let debug = Array(#"{"reason":"#.utf8) + JSONText.quoted(reason) + [UInt8(ascii: "}")]
        goawayLastStream = highestDecidedStream
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), highestDecidedStream,
                              NGHTTP2_NO_ERROR.rawValue, debug, debug.count)
    }

    /// The client opened a stream beyond the limit (the scanner stopped feeding nghttp2 at its
    /// HEADERS frame): send what nghttp2 still has (answers to earlier streams), then
    /// GOAWAY(REFUSED_STREAM) with APNs's text, and close once written.
    func violateStreamLimit() {
        core.ledger.streamLimitViolated()
        core.ledger.goawaySent()
        // No raise on the way out: the connection is over.
        raiseLimitAfterStream = 0
        guard gather() else { return }
        sessionFinished = true
        let debug = Array(Self.violationText.utf8)
        var frame: [UInt8] = []
        frame.reserveCapacity(17 + debug.count)
        let length = 8 + debug.count
        frame += [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        frame += [7 /* GOAWAY */, 0 /* flags */, 0, 0, 0, 0 /* stream 0 */]
        let last = UInt32(highestDecidedStream)
        frame += [UInt8(last >> 24 & 0x7F), UInt8(last >> 16 & 0xFF), UInt8(last >> 8 & 0xFF), UInt8(last & 0xFF)]
        let code = NGHTTP2_REFUSED_STREAM.rawValue
        frame += [UInt8(code >> 24 & 0xFF), UInt8(code >> 16 & 0xFF), UInt8(code >> 8 & 0xFF), UInt8(code & 0xFF)]
        frame += debug
        frame.withUnsafeBytes { appendOutput($0.baseAddress!, $0.count) }
        closeAfterFlush = true
        flush()
    }
}
