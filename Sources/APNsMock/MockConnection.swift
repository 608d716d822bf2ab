#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushCore
import PushTransport

/// One client connection of the mock: TLS (from `TLSH2Socket`) plus an nghttp2 server session
/// that answers requests like APNs.
///
/// Lives on the server's I/O thread only. nghttp2 calls back into it through the C functions in
/// `MockConnection+Callbacks.swift`; each request's state is a pooled `MockStream`.
///
/// HTTP/2 behaviour (apns.md, "Transport"): with token auth the first SETTINGS allow one
/// stream; after the first 200 a second SETTINGS raises MAX_CONCURRENT_STREAMS to the
/// configured limit. Streams beyond the advertised limit are refused by nghttp2 itself with
/// RST_STREAM REFUSED_STREAM (real APNs answers with GOAWAY instead; refusing is kinder to
/// tests and still tells the client that nothing was processed).
final class MockConnection: TLSH2Socket {
    /// Receive window per stream and for the connection: large, so that a client streaming
    /// many payloads never waits for WINDOW_UPDATE frames.
    static let streamWindow: UInt32 = 1 << 20
    static let connectionWindow: Int32 = 64 << 20

    unowned let core: MockServerCore
    /// True when requests need a provider token.
    let tokenAuth: Bool

    /// Every stream object this connection made (owning), and the ones free for reuse.
    private var allStreams: [MockStream] = []
    private var freeStreams: [MockStream] = []
    /// The stream whose header block is arriving (header blocks are never interleaved,
    /// RFC 9113 §4.3), so `on_header` needs no stream lookup.
    var receivingHeaders: MockStream?
    private var openStreams = 0
    private var peakStreams = 0

    /// Whether MAX_CONCURRENT_STREAMS has been raised on this connection.
    private var limitRaised: Bool
    /// The stream whose 200 raises the limit once its HEADERS frame is sent (0: none).
    var raiseLimitAfterStream: Int32 = 0

    /// The last `authorization` value that verified on this connection, and its `iat`:
    /// requests repeating it byte for byte skip the signature check (APNs expects one token
    /// per connection for up to an hour, so nearly every request takes this path).
    private var verifiedAuthorization: [UInt8] = []
    private var verifiedIssuedAt: Int64 = 0

    /// Generates apns-id values for requests that came without one.
    private var uuids = UUIDGenerator()

    init(core: MockServerCore, fd: Int32, ssl: OpaquePointer) {
        self.core = core
        tokenAuth = !core.verifier.isEmpty
        limitRaised = !tokenAuth
        super.init(loop: core.loop, fd: fd, ssl: ssl, phase: .handshaking)
    }

    // MARK: - Session set-up

    override func didCompleteHandshake() throws(TransportError) {
        var proto: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &proto, &length)
        guard length == 2, let proto, proto[0] == UInt8(ascii: "h"), proto[1] == UInt8(ascii: "2") else {
            throw TransportError(.protocolError, "the client did not negotiate h2 (ALPN)")
        }
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw TransportError(.protocolError, "nghttp2_session_callbacks_new failed")
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        MockCallbacks.install(on: callbacks)
        var newSession: OpaquePointer?
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new(&newSession, callbacks, me) == 0, let newSession else {
            throw TransportError(.protocolError, "nghttp2_session_server_new failed")
        }
        session = newSession
        let initialStreams = UInt32(tokenAuth ? 1 : core.maxConcurrentStreams)
        // Observed APNs SETTINGS (apns.md): MAX_HEADER_LIST_SIZE 8000; the stream limit as above.
        let settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: initialStreams),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: Self.streamWindow),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: 8000),
        ]
        guard nghttp2_submit_settings(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), settings, settings.count) == 0,
              nghttp2_session_set_local_window_size(newSession, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, Self.connectionWindow) == 0 else {
            throw TransportError(.protocolError, "cannot submit the initial SETTINGS")
        }
    }

    override func didClose(_ error: TransportError?) {
        receivingHeaders = nil
        core.connectionClosed(fd: fd)
    }

    // MARK: - Streams

    /// A request stream opened: give it a pooled state object.
    func beginStream(_ id: Int32) {
        let stream = freeStreams.popLast() ?? makeStream()
        stream.reset(streamID: id)
        nghttp2_session_set_stream_user_data(session, id, Unmanaged.passUnretained(stream).toOpaque())
        receivingHeaders = stream
        openStreams += 1
        if openStreams > peakStreams {
            peakStreams = openStreams
            core.recorder.observeConcurrentStreams(openStreams)
        }
    }

    private func makeStream() -> MockStream {
        let s = MockStream()
        allStreams.append(s)
        return s
    }

    /// A stream closed (answered, reset, or the connection is going): recycle its state.
    func endStream(_ stream: MockStream) {
        if !stream.answered { core.recorder.streamUnanswered() }
        if receivingHeaders === stream { receivingHeaders = nil }
        openStreams -= 1
        freeStreams.append(stream)
    }

    /// Notes the `authorization` header: either the verified token again, or one to check.
    func recordAuthorization(_ value: UnsafeRawBufferPointer, on stream: MockStream) {
        if !verifiedAuthorization.isEmpty, value.count == verifiedAuthorization.count,
           verifiedAuthorization.withUnsafeBytes({ memcmp($0.baseAddress!, value.baseAddress!, value.count) }) == 0 {
            stream.authorization = .sameAsVerified
        } else {
            stream.authorization = .pending
            stream.authorizationValue.removeAll(keepingCapacity: true)
            stream.authorizationValue.append(contentsOf: value)
        }
    }

    /// The token check (apns.md, "Token authentication"): `.none` when the request may go on.
    private func authorize(_ stream: MockStream) -> APNsReason {
        guard tokenAuth else { return .none }
        let now = core.clock.wallSeconds()
        switch stream.authorization {
        case .absent:
            return .missingProviderToken
        case .sameAsVerified:
            break
        case .pending:
            // An earlier stream may have verified this very token since these headers came.
            if stream.authorizationValue != verifiedAuthorization {
                let result = stream.authorizationValue.withUnsafeBytes { core.verifier.verify(authorization: $0, now: now) }
                switch result {
                case .rejected(let reason):
                    return reason
                case .verified(let issuedAt):
                    verifiedAuthorization.removeAll(keepingCapacity: true)
                    verifiedAuthorization.append(contentsOf: stream.authorizationValue)
                    verifiedIssuedAt = issuedAt
                    return .none
                }
            }
        }
        // A cached token still ages: an hour after its iat it is expired, cached or not.
        return now - verifiedIssuedAt > core.verifier.maxAgeSeconds ? .expiredProviderToken : .none
    }

    /// The request on `stream` is complete: validate it and submit the answer.
    func respond(to stream: MockStream) {
        guard !stream.answered, let session else { return }
        var reason = RequestValidation.verdict(for: stream, authorize: authorize)
        var timestamp: Int64 = -1
        if reason == .none, !core.unregisteredDeviceTokens.isEmpty {
            let token = String(decoding: stream.tokenBytes, as: UTF8.self).lowercased()
            if let t = core.unregisteredDeviceTokens[token] {
                reason = .unregistered
                timestamp = t
            }
        }
        if !stream.hasApnsId {
            uuids.write(to: stream.apnsId)
            stream.hasApnsId = true
        }
        MockResponse.fillHeaders(stream, status: reason.httpStatus)
        let rv: Int32
        if reason == .none {
            rv = nghttp2_submit_response(session, stream.streamID, stream.headers, 2, nil)
        } else {
            MockResponse.fillBody(stream, reason: reason, timestamp: timestamp)
            var provider = nghttp2_data_provider()
            provider.source.ptr = Unmanaged.passUnretained(stream).toOpaque()
            provider.read_callback = MockCallbacks.readBody
            rv = nghttp2_submit_response(session, stream.streamID, stream.headers, 2, &provider)
        }
        guard rv == 0 else { return }
        stream.answered = true
        core.recorder.answered(reason)
        if reason == .none && !limitRaised {
            limitRaised = true
            raiseLimitAfterStream = stream.streamID
        }
    }

    /// The first 200 has gone out: raise MAX_CONCURRENT_STREAMS (apns.md, "Streams per
    /// connection"). Sent after the response so that the client sees them in that order.
    func raiseStreamLimit() {
        raiseLimitAfterStream = 0
        guard let session else { return }
        var entry = nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                           value: UInt32(core.maxConcurrentStreams))
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entry, 1)
    }
}
