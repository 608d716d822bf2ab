#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport
import PushClientCore

/// One connection to the channel management host (apns.md, "Broadcast push and channels"):
/// TLS + an nghttp2 client session over `TLSH2Socket`, like `APNsConnection`, carrying one
/// administrative request at a time for a `ChannelManagementClient`. Used only on the thread
/// of the call in progress (the client's lock serializes calls).
///
/// Its phase is a `ConnectionState`, as a device connection's: the transport's steps, the
/// server's SETTINGS, GOAWAY and the end move it. With one request at a time, the client looks
/// at the phase before each request instead of performing the state's actions, and decides
/// about each exchange itself (what to resend, when to give up).
final class ChannelConnection: TLSH2Socket {
    /// The request in flight and what its answer showed so far.
    final class Exchange {
        let streamBody: [UInt8]
        var bodySent = 0
        var streamID: Int32 = 0
        var status: Int32 = 0
        var requestId = ""
        var channelId = ""
        var body: [UInt8] = []
        /// The stream ended (answered, reset or refused).
        var finished = false
        /// The stream's reset code (0: it ended normally).
        var resetCode: UInt32 = 0
        /// The server said it never processed the stream (REFUSED_STREAM, or above a GOAWAY's
        /// last-stream-id): safe to send again.
        var unprocessed = false
        /// The largest answer body kept (`ChannelManagementClient.maxAnswerBytes`).
        let bodyLimit: Int
        /// The answer's body ran past `bodyLimit`: what was kept is not the whole answer.
        var truncated = false

        init(body: [UInt8], bodyLimit: Int) {
            streamBody = body
            self.bodyLimit = bodyLimit
        }
    }

    /// Its phase (requests go only while `.ready`: after the server's SETTINGS, before a
    /// GOAWAY) and when it was started (for the back-off).
    private(set) var state: ConnectionState
    /// How the connection ended (nil while open, or after an orderly end).
    private(set) var closedError: TransportError?
    /// The request in flight.
    var exchange: Exchange?
    /// The provider token generation its requests carry (ExpiredProviderToken is per token).
    var tokenGeneration = 0

    override init(loop: EventLoop, fd: Int32, ssl: OpaquePointer, clock: any PushClock) {
        state = ConnectionState(localMaxStreams: 1, startedNanos: clock.monotonicNanos())
        super.init(loop: loop, fd: fd, ssl: ssl, clock: clock)
    }

    override func didConnectTCP(throughProxy: Bool) {
        state.tcpConnected(throughProxy: throughProxy)
    }

    override func didOpenTunnel() {
        state.tunnelOpened()
    }

    override func didCompleteHandshake() throws(TransportError) {
        try requireNegotiatedH2()
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks, channelOnHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, channelOnData)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, channelOnStreamClose)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, channelOnFrame)
        var s: OpaquePointer?
        let rv = nghttp2_session_client_new(&s, callbacks, Unmanaged.passUnretained(self).toOpaque())
        guard rv == 0, let s else {
            throw TransportError(.protocolError, "nghttp2_session_client_new: " + String(cString: nghttp2_strerror(rv)))
        }
        session = s
        var settings = [nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0)]
        nghttp2_submit_settings(s, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        state.handshakeCompleted()
    }

    override func didClose(_ error: TransportError?) {
        closedError = error ?? (state.everEstablished ? nil : TransportError(.tls, Self.closedAfterHandshakeText))
        state.closed()
        if let e = exchange, !e.finished {
            e.finished = true
            e.resetCode = UInt32(NGHTTP2_INTERNAL_ERROR.rawValue)
        }
    }

    deinit {
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
    }

    /// Sends `request` with `authorization` (nil: certificate authentication) on a new stream.
    /// Why `start` did not start a request: the connection cannot take one now (not ready,
    /// going away, out of stream ids: another connection can), or nghttp2 refused the request.
    enum StartFailure: Error {
        case unavailable
        case refused(String)
    }

    func start(_ request: ChannelRequest, authority: String, authorization: [UInt8]?, answerLimit: Int) -> Result<Exchange, StartFailure> {
        guard let session, state.phase == .ready else { return .failure(.unavailable) }
        let e = Exchange(body: request.body, bodyLimit: answerLimit)
        var fields: [(String, [UInt8])] = [(":method", Array(request.method.utf8)), (":scheme", Array("https".utf8)),
                                           (":authority", Array(authority.utf8)), (":path", Array(request.path.utf8))]
        if let authorization { fields.append(("authorization", authorization)) }
        if let id = request.channelId { fields.append(("apns-channel-id", Array(id.utf8))) }
        if let id = request.requestId { fields.append(("apns-request-id", Array(id.utf8))) }
        if !e.streamBody.isEmpty { fields.append(("content-type", Array("application/json".utf8))) }
        // nghttp2 copies names and values during submit (no NO_COPY flags): nothing here must
        // outlive the call.
        let streamID: Int32 = withHeaderArray(fields) { nv, count in
            let user = Unmanaged.passUnretained(e).toOpaque()
            if e.streamBody.isEmpty { return nghttp2_submit_request(session, nil, nv, count, nil, user) }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: user), read_callback: channelReadBody)
            return nghttp2_submit_request(session, nil, nv, count, &provider, user)
        }
        guard streamID > 0 else {
            if streamID == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue { return .failure(.unavailable) }
            return .failure(.refused(String(cString: nghttp2_strerror(streamID))))
        }
        e.streamID = streamID
        exchange = e
        flush()
        return .success(e)
    }

    /// Health, as a device connection's (`ConnectionState.checkHealth`): idle longer than the
    /// idle time, it is PINGed; a PING unanswered for longer than the PING timeout closes it with
    /// that error, which ends a request waiting on it (a server that went silent, a dead peer
    /// behind a socket that never closes).
    func checkHealth(now: UInt64, timers: ClientTimers) {
        switch state.checkHealth(now: now, lastInputNanos: lastInputNanos, timers: timers) {
        case .none, .replace, .close:
            break
        case .ping:
            guard let session else { return }
            nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
            flush()
        case .fail:
            close(TransportError(.closed, "no PING acknowledgement within \(timers.pingTimeoutNanos / 1_000_000) ms"))
        }
    }

    /// Asks the server to end the connection politely (GOAWAY), then closes.
    func finish() {
        if let session, state.phase != .closed {
            nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
            flush()
        }
        if state.phase != .closed { close(nil) }
    }

    fileprivate func settingsReceived(maxConcurrentStreams: UInt32) {
        state.settingsReceived(maxConcurrentStreams: maxConcurrentStreams)
    }

    fileprivate func pingAcknowledged() {
        state.pingAcknowledged()
    }

    fileprivate func goawayReceived(lastStreamID: Int32) {
        // The client looks at the phase before its next request (see the type's comment).
        _ = state.goawayReceived(lastStreamID: lastStreamID, reason: nil)
        if let e = exchange, !e.finished, e.streamID > lastStreamID { e.unprocessed = true }
    }
}

/// Calls `body` with an `nghttp2_nv` array over `fields` (valid during the call only).
private func withHeaderArray<R>(_ fields: [(String, [UInt8])], _ body: (UnsafePointer<nghttp2_nv>, Int) -> R) -> R {
    let nv = UnsafeMutablePointer<nghttp2_nv>.allocate(capacity: fields.count)
    defer { nv.deallocate() }
    var names: [UnsafeMutablePointer<UInt8>] = []
    var values: [UnsafeMutablePointer<UInt8>] = []
    defer {
        names.forEach { $0.deallocate() }
        values.forEach { $0.deallocate() }
    }
    for (i, f) in fields.enumerated() {
        let name = Array(f.0.utf8)
        let n = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, name.count))
        n.initialize(from: name, count: name.count)
        let v = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, f.1.count))
        v.initialize(from: f.1, count: f.1.count)
        names.append(n)
        values.append(v)
        // Request ids and channel ids are per request: keep them out of the HPACK table.
        let flags = f.0.hasPrefix("apns-") ? UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue) : UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
        nv[i] = nghttp2_nv(name: n, value: v, namelen: name.count, valuelen: f.1.count, flags: flags)
    }
    return body(nv, fields.count)
}

// MARK: - nghttp2 callbacks

@inline(__always)
private func channelConnection(_ userData: UnsafeMutableRawPointer?) -> ChannelConnection {
    Unmanaged<ChannelConnection>.fromOpaque(userData!).takeUnretainedValue()
}

@inline(__always)
private func exchange(_ session: OpaquePointer?, _ streamID: Int32) -> ChannelConnection.Exchange? {
    guard let p = nghttp2_session_get_stream_user_data(session, streamID) else { return nil }
    return Unmanaged<ChannelConnection.Exchange>.fromOpaque(p).takeUnretainedValue()
}

private let channelReadBody: nghttp2_data_source_read_callback = { _, _, buf, length, flags, source, _ in
    let e = Unmanaged<ChannelConnection.Exchange>.fromOpaque(source!.pointee.ptr).takeUnretainedValue()
    let n = min(length, e.streamBody.count - e.bodySent)
    e.streamBody.withUnsafeBytes { buf!.update(from: $0.baseAddress!.assumingMemoryBound(to: UInt8.self) + e.bodySent, count: n) }
    e.bodySent += n
    if e.bodySent == e.streamBody.count { flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) }
    return n
}

private let channelOnHeader: nghttp2_on_header_callback = { session, frame, name, namelen, value, valuelen, _, _ in
    guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue), let name, let value,
          let e = exchange(session, frame.pointee.hd.stream_id) else { return 0 }
    let n = String(decoding: UnsafeRawBufferPointer(start: name, count: namelen), as: UTF8.self)
    let v = String(decoding: UnsafeRawBufferPointer(start: value, count: valuelen), as: UTF8.self)
    switch n {
    case ":status": e.status = Int32(v) ?? 0
    case "apns-request-id": e.requestId = v
    case "apns-channel-id": e.channelId = v
    default: break
    }
    return 0
}

private let channelOnData: nghttp2_on_data_chunk_recv_callback = { session, _, streamID, data, len, _ in
    guard let data, let e = exchange(session, streamID) else { return 0 }
    // Past the bound the rest is dropped and the call fails (a cut list must not pass as whole).
    if e.truncated || e.body.count + len > e.bodyLimit { e.truncated = true; return 0 }
    e.body.append(contentsOf: UnsafeBufferPointer(start: data, count: len))
    return 0
}

private let channelOnStreamClose: nghttp2_on_stream_close_callback = { session, streamID, errorCode, userData in
    guard let e = exchange(session, streamID) else { return 0 }
    e.finished = true
    e.resetCode = errorCode
    if errorCode == NGHTTP2_REFUSED_STREAM.rawValue { e.unprocessed = true }
    return 0
}

private let channelOnFrame: nghttp2_on_frame_recv_callback = { session, frame, userData in
    guard let frame else { return 0 }
    let conn = channelConnection(userData)
    switch UInt32(frame.pointee.hd.type) {
    case NGHTTP2_SETTINGS.rawValue where frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0:
        conn.settingsReceived(maxConcurrentStreams: nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    case NGHTTP2_PING.rawValue where frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0:
        conn.pingAcknowledged()
    case NGHTTP2_GOAWAY.rawValue:
        conn.goawayReceived(lastStreamID: frame.pointee.goaway.last_stream_id)
    default:
        break
    }
    return 0
}
