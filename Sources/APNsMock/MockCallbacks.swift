#if canImport(Glibc)
import Glibc
#endif
import CNGHTTP2

/// The nghttp2 callbacks of the mock's server sessions: nghttp2's events turned into the
/// connection's. Each is a non-capturing C function that recovers its `MockConnection` from
/// `user_data` and its `MockStream` from the stream user data, both passed unretained and used
/// as guaranteed references: the pump is inside `deliver` or `gather` (so it, and the
/// connection it owns, outlive the call), and the stream is in its connection's pool for the
/// connection's whole life. That saves a retain and a release of each per callback, and the
/// callbacks run several times per request. nghttp2 answers PING frames by itself (the ACK is
/// queued like any frame).
enum MockCallbacks {
    /// Registers every callback on `callbacks`.
    static func install(on callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, beginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, header)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, frameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, dataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, streamClosed)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, frameSent)
    }

    /// Runs `body` with the connection of `userData`.
    @inline(__always)
    private static func withConnection<R>(_ userData: UnsafeMutableRawPointer?, _ body: (MockConnection) -> R) -> R {
        Unmanaged<MockConnection>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    /// The stream user data of `id`, if any.
    @inline(__always)
    private static func stream(_ session: OpaquePointer?, _ id: Int32) -> Unmanaged<MockStream>? {
        guard let p = nghttp2_session_get_stream_user_data(session, id) else { return nil }
        return Unmanaged<MockStream>.fromOpaque(p)
    }

    private static let headersType = UInt8(NGHTTP2_HEADERS.rawValue)
    private static let dataType = UInt8(NGHTTP2_DATA.rawValue)
    private static let settingsType = UInt8(NGHTTP2_SETTINGS.rawValue)
    private static let pingType = UInt8(NGHTTP2_PING.rawValue)
    private static let rstStreamType = UInt8(NGHTTP2_RST_STREAM.rawValue)
    private static let goawayType = UInt8(NGHTTP2_GOAWAY.rawValue)
    private static let endStream = UInt8(NGHTTP2_FLAG_END_STREAM.rawValue)
    private static let ack = UInt8(NGHTTP2_FLAG_ACK.rawValue)

    /// A request's HEADERS begin: a new stream.
    static let beginHeaders: nghttp2_on_begin_headers_callback = { session, frame, userData in
        guard let frame, frame.pointee.hd.type == headersType,
              frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST else { return 0 }
        withConnection(userData) { $0.beginStream(frame.pointee.hd.stream_id) }
        return 0
    }

    /// One request header: recorded on the stream (`RequestValidation.record`); the
    /// authorization is the authenticator's.
    static let header: nghttp2_on_header_callback = { session, frame, name, nameLength, value, valueLength, flags, userData in
        guard let frame, let name, let h = RequestHeader.classify(name, nameLength) else { return 0 }
        let streamID = frame.pointee.hd.stream_id
        // nghttp2 passes a valid pointer even for an empty value; keep a non-nil base anyway.
        let bytes = UnsafeRawBufferPointer(start: value ?? name, count: value == nil ? 0 : valueLength)
        withConnection(userData) { c in
            c.streams.receivingHeaders?._withUnsafeGuaranteedRef { s in
                guard s.streamID == streamID else { return }
                RequestValidation.record(h, bytes, on: s)
                if h == .authorization { c.authenticator.noteAuthorization(bytes, on: s) }
            }
        }
        return 0
    }

    /// A whole frame arrived: a request ends with END_STREAM on its HEADERS or last DATA; a
    /// SETTINGS ACK tells which stream limit the client now knows.
    static let frameReceived: nghttp2_on_frame_recv_callback = { session, frame, userData in
        guard let frame else { return 0 }
        let type = frame.pointee.hd.type
        withConnection(userData) { c in
            if type == headersType || type == dataType {
                if type == headersType { c.streams.receivingHeaders = nil }
                if frame.pointee.hd.flags & endStream != 0, let s = stream(session, frame.pointee.hd.stream_id) {
                    s._withUnsafeGuaranteedRef { c.respond(to: $0) }
                }
            } else if type == settingsType, frame.pointee.hd.flags & ack != 0 {
                c.settingsAcknowledged()
            } else if type == pingType, frame.pointee.hd.flags & ack == 0 {
                // nghttp2 answers it by itself; counted so tests can see a client's health PINGs.
                c.ledger.pingReceived()
            }
        }
        return 0
    }

    /// Payload bytes: counted; kept only for channel management requests (their JSON body).
    static let dataChunk: nghttp2_on_data_chunk_recv_callback = { session, flags, streamID, data, length, userData in
        stream(session, streamID)?._withUnsafeGuaranteedRef { s in
            s.bodyBytes += length
            if s.path == .channels, let data, s.keptBody.count <= MockStream.keptBodyCapacity {
                s.keptBody.append(contentsOf: UnsafeRawBufferPointer(start: data, count: length))
            }
        }
        return 0
    }

    /// A stream closed: recycle its state.
    static let streamClosed: nghttp2_on_stream_close_callback = { session, streamID, errorCode, userData in
        if let s = stream(session, streamID) {
            nghttp2_session_set_stream_user_data(session, streamID, nil)
            withConnection(userData) { c in s._withUnsafeGuaranteedRef { c.endStream($0) } }
        }
        return 0
    }

    /// A frame went out: an answer's HEADERS may trigger the stream limit's raise; refused
    /// streams and GOAWAYs are counted.
    static let frameSent: nghttp2_on_frame_send_callback = { session, frame, userData in
        guard let frame else { return 0 }
        let type = frame.pointee.hd.type
        withConnection(userData) { c in
            if type == headersType {
                c.headersSent(stream: frame.pointee.hd.stream_id)
            } else if type == rstStreamType, frame.pointee.rst_stream.error_code == NGHTTP2_REFUSED_STREAM.rawValue {
                c.ledger.streamRefused()
            } else if type == goawayType {
                c.ledger.goawaySent()
            }
        }
        return 0
    }

    /// Supplies an error body (or a channel management answer's body) from the stream's buffer.
    static let readBody: nghttp2_data_source_read_callback = { session, streamID, buffer, length, dataFlags, source, userData in
        guard let buffer, let dataFlags, let p = source?.pointee.ptr else { return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue) }
        return Unmanaged<MockStream>.fromOpaque(p)._withUnsafeGuaranteedRef { s in
            let n = min(length, s.bodyLength - s.bodySent)
            if s.answerBody.isEmpty {
                memcpy(buffer, s.body + s.bodySent, n)
            } else {
                s.answerBody.withUnsafeBytes { _ = memcpy(buffer, $0.baseAddress! + s.bodySent, n) }
            }
            s.bodySent += n
            if s.bodySent == s.bodyLength { dataFlags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue }
            return n
        }
    }
}
