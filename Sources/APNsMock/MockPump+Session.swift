import CNGHTTP2

/// What the connection submits to the nghttp2 session: SETTINGS, answers, resets, GOAWAY.
/// Each only queues frames (nghttp2 calls no callback while submitting); `flush` sends them.
/// False (or nothing done) when the session is gone.
extension MockPump {
    /// Submits SETTINGS with `entries`.
    func submitSettings(_ entries: [nghttp2_settings_entry]) -> Bool {
        guard let session else { return false }
        return nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), entries, entries.count) == 0
    }

    /// Submits SETTINGS with MAX_CONCURRENT_STREAMS = `limit` alone.
    func submitStreamLimit(_ limit: UInt32) -> Bool {
        guard let session else { return false }
        var entry = nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: limit)
        return nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entry, 1) == 0
    }

    /// Submits the answer whose header block `stream` holds, with its body (`MockCallbacks.readBody`)
    /// when it has one.
    func submitResponse(_ stream: MockStream) -> Bool {
        guard let session else { return false }
        if stream.reason == .none && stream.answerBody.isEmpty {
            return nghttp2_submit_response(session, stream.streamID, stream.headers, stream.headerCount, nil) == 0
        }
        var provider = nghttp2_data_provider()
        provider.source.ptr = Unmanaged.passUnretained(stream).toOpaque()
        provider.read_callback = MockCallbacks.readBody
        return nghttp2_submit_response(session, stream.streamID, stream.headers, stream.headerCount, &provider) == 0
    }

    /// Resets stream `id` with REFUSED_STREAM.
    func refuseStream(_ id: Int32) {
        guard let session else { return }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_REFUSED_STREAM.rawValue)
    }

    /// Submits GOAWAY(NO_ERROR) with `lastStream` and `debug` data: nghttp2 closes the streams
    /// above it once the frame is sent, and stops reading when those below have finished.
    func submitGoaway(lastStream: Int32, debug: [UInt8]) {
        guard let session else { return }
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), lastStream, NGHTTP2_NO_ERROR.rawValue, debug, debug.count)
    }

    /// Makes `stream` the user data of its nghttp2 stream (the callbacks find it there).
    @inline(__always)
    func attach(_ stream: MockStream) {
        nghttp2_session_set_stream_user_data(session, stream.streamID, Unmanaged.passUnretained(stream).toOpaque())
    }
}
