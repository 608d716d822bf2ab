import CNGHTTP2

/// The stream limit's events, and its actions carried out (`StreamLimit` decides).
extension MockConnection {
    /// Carries out what the stream limit decided.
    @inline(__always)
    func perform(_ action: StreamLimit.Action) {
        switch action {
        case .none:
            break
        case .announce(let value):
            if pump.submitStreamLimit(value) { limit.announced(value) }
        case .refuseConnection:
            refuseConnection()
        }
    }

    /// The client acknowledged our oldest SETTINGS frame in flight.
    func settingsAcknowledged() { limit.acknowledgedSettings() }

    /// The HEADERS frame of `stream`'s answer went out (the raise may follow it).
    @inline(__always)
    func headersSent(stream: Int32) { perform(limit.headersSent(stream: stream)) }

    /// Whether `arriving` new streams, on top of those open, could break the limit: the pump
    /// then feeds nghttp2 up to the next one and asks `admitNewStream`. After our own GOAWAY,
    /// new streams are discarded, not refused.
    @inline(__always)
    func mayExceedStreamLimit(arriving: Int) -> Bool {
        goawayLastStream == nil && !limit.admits(streams.open + arriving)
    }

    /// The client opens a stream while the open ones are exactly counted: false when it breaks
    /// the limit, and the connection is refused.
    func admitNewStream() -> Bool {
        let action = limit.streamOpening(openStreams: streams.open)
        perform(action)
        return action != .refuseConnection
    }

    /// The client opened a stream beyond the limit: what nghttp2 still has (answers to earlier
    /// streams) goes out, then GOAWAY(REFUSED_STREAM) with APNs's text, and the connection
    /// closes once written.
    private func refuseConnection() {
        ledger.streamLimitViolated()
        ledger.goawaySent()
        pump.finish(with: Self.refusalFrame(lastStream: highestDecidedStream))
    }

    /// GOAWAY(REFUSED_STREAM, `StreamLimit.violationText`) as bytes: nghttp2 would not send it
    /// (it resets the stream instead), so the pump writes it itself.
    static func refusalFrame(lastStream: Int32) -> [UInt8] {
        let debug = Array(StreamLimit.violationText.utf8)
        var frame: [UInt8] = []
        frame.reserveCapacity(17 + debug.count)
        let length = 8 + debug.count
        frame += [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        frame += [7 /* GOAWAY */, 0 /* flags */, 0, 0, 0, 0 /* stream 0 */]
        let last = UInt32(lastStream)
        frame += [UInt8(last >> 24 & 0x7F), UInt8(last >> 16 & 0xFF), UInt8(last >> 8 & 0xFF), UInt8(last & 0xFF)]
        let code = NGHTTP2_REFUSED_STREAM.rawValue
        frame += [UInt8(code >> 24 & 0xFF), UInt8(code >> 16 & 0xFF), UInt8(code >> 8 & 0xFF), UInt8(code & 0xFF)]
        return frame + debug
    }
}
