#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import CNGHTTP2
import PushClientMachine
import PushCore
import PushTransport
import CPushSystem

/// What a connection reports to its owner (a `PushClient`), on the I/O thread, never from
/// inside nghttp2's callbacks: the whole interface from a connection to the client. Inside
/// nghttp2's callbacks a connection only writes answers into their slots and records facts
/// (`input`: streams closed, SETTINGS, GOAWAY, a PING's ACK); the owner takes them when told
/// of a read and has its `ClientCore` decide what they mean. The owner answers by calling the
/// connection (`submit`, `cancel`, `sendPing`, `requestClose`); the connection never reaches into
/// the client otherwise (the slots it reads and writes are the shared `SlotTable`, handed over at
/// init).
protocol ConnectionEvents: AnyObject {
    /// A step of the transport (TCP, the proxy's tunnel, TLS with the session made).
    func connectionProgressed(_ conn: APNsConnection, _ step: ConnectionProgress)
    /// A chunk of input was fed to nghttp2 (the read may go on): the facts it recorded wait in
    /// `conn.input`, and streams it freed may be refilled before the next chunk.
    func connectionRead(_ conn: APNsConnection)
    /// The connection is gone (`error` nil: an orderly end); the facts of its last read wait in
    /// `conn.input`, for the owner to take before accounting for what was in flight.
    func connectionClosed(_ conn: APNsConnection, error: TransportError?)
}

/// One client connection to APNs: TLS + an nghttp2 client session, carrying many notifications
/// as concurrent streams. Owned by a `PushClient` (which hears its `ConnectionEvents`) and used
/// only on its I/O thread. It is the I/O half of a connection: what the connection is in the
/// pool (its `ConnectionState`, its streams in flight) is its entry in the client's `ClientCore`,
/// under the same `id`.
///
/// Each stream's nghttp2 user data is its slot index + 1, so callbacks find the notification
/// without any lookup table.
final class APNsConnection: TLSH2Socket {
    /// Where events go (the owning client, which outlives its connections).
    unowned(unsafe) let events: any ConnectionEvents
    /// The notifications' slots (the owner's table).
    let slots: SlotTable
    /// `:authority` bytes, stable for the owner's life (nghttp2 references them unchanged).
    let authority: UnsafeRawBufferPointer
    /// Its name in the client's core (its entry there: state, streams in flight, pool position).
    let id: ConnectionID
    /// The stream whose response headers are being read, and its slot: an answer's 2–3
    /// header callbacks look the stream up in nghttp2's map once instead of each (a cache miss
    /// each with a thousand streams open). Stream ids are never reused within a session; a
    /// stream that is cancelled or closed is forgotten here (`cancel`, `onStreamClose`).
    var headerStreamID: Int32 = 0
    var headerSlotIndex: Int32 = -1
    /// Memory for this connection's nghttp2 session (the pool in CPushSystem's swiftpush_system.h).
    private let sessionPool: UnsafeMutablePointer<swiftpush_pool>? = swiftpush_pool_new()
    /// Another allocator for the session, instead of `sessionPool` (tests).
    private let sessionMemory: SessionMemory?
    /// Scratch header array reused by every request (nghttp2 copies what it must at submit).
    let nv: UnsafeMutablePointer<nghttp2_nv>
    private static let maxHeaders = 12

    /// What nghttp2 reported since the owner last took it (streams closed, SETTINGS, GOAWAY,
    /// PING ACKs), in order: recorded inside nghttp2's callbacks, decided on after them. Touched
    /// only on the I/O thread, in callbacks and by the owner between them: no runtime
    /// exclusivity checks (one per answer otherwise).
    @exclusivity(unchecked) var input = ConnectionInput()
    /// Streams refilled between reads and not yet written (see `PushClient.connectionRead`).
    var refilledSinceFlush = 0
    /// Refilled streams that are written at once, without waiting for the end of the read.
    static let refillFlushThreshold = 64

    init(id: ConnectionID, events: any ConnectionEvents, slots: SlotTable, authority: UnsafeRawBufferPointer, loop: EventLoop,
         clock: any PushClock, fd: Int32, ssl: OpaquePointer, sessionMemory: SessionMemory? = nil) {
        self.id = id
        self.events = events
        self.sessionMemory = sessionMemory
        self.slots = slots
        self.authority = authority
        nv = .allocate(capacity: Self.maxHeaders)
        nv.initialize(repeating: nghttp2_nv(), count: Self.maxHeaders)
        super.init(loop: loop, fd: fd, ssl: ssl, clock: clock)
    }

    deinit {
        nv.deallocate()
        input.deallocate()
        // The session is the pool's only user: it must go first (normally close() did that).
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        swiftpush_pool_delete(sessionPool)
    }

    override func didConnectTCP(throughProxy: Bool) {
        events.connectionProgressed(self, .tcpConnected(throughProxy: throughProxy))
    }

    override func didOpenTunnel() {
        events.connectionProgressed(self, .tunnelOpened)
    }

    override func didCompleteHandshake() throws(TransportError) {
        try requireNegotiatedH2()
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameReceived)

        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        // nghttp2 assumes 100 streams before the first SETTINGS; APNs allows 1 until a token
        // is accepted (apns.md, "Streams per connection").
        nghttp2_option_set_peer_max_concurrent_streams(option, 1)

        var s: OpaquePointer?
        // nghttp2 allocates per stream (stream, header copies, frame items); a pool owned by
        // this connection recycles those blocks, so steady sending does not call malloc.
        var mem = sessionMemory?.mem
            ?? nghttp2_mem(mem_user_data: UnsafeMutableRawPointer(sessionPool),
                           malloc: swiftpush_pool_malloc, free: swiftpush_pool_free,
                           calloc: swiftpush_pool_calloc, realloc: swiftpush_pool_realloc)
        let rv = nghttp2_session_client_new3(&s, callbacks, Unmanaged.passUnretained(self).toOpaque(), option, &mem)
        guard rv == 0, let s else {
            throw TransportError(.protocolError, "nghttp2_session_client_new2: " + String(cString: nghttp2_strerror(rv)))
        }
        session = s
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        nghttp2_submit_settings(s, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        // Not ready yet: the server accepts us by sending its SETTINGS (a fact, then
        // ClientCore.settingsReceived).
        events.connectionProgressed(self, .handshakeCompleted)
    }

    /// A chunk was fed to nghttp2: the owner takes the facts it recorded, and refills the
    /// streams its answers freed now rather than after the whole read, so the server gets new
    /// requests while we are still reading (both sides stay busy instead of taking turns).
    override func didReceiveChunk() {
        events.connectionRead(self)
    }

    /// The read is over: the write that follows (`handleEvents`) takes what refill deferred.
    override func didProcessInput() {
        refilledSinceFlush = 0
    }

    override func didClose(_ error: TransportError?) {
        events.connectionClosed(self, error: error)
    }

    // MARK: - Requests

    /// Submits the notification in `slotIndex` as a new stream. Returns the stream id, or a
    /// negative nghttp2 error: `NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE` when this connection's
    /// stream ids ran out, another (`NGHTTP2_ERR_NOMEM`) when nghttp2 could not take it now.
    ///
    /// A device notification is `POST /3/device/<token>` with `apns-topic` and `apns-id`; a
    /// broadcast (the slot has a channel id; apns.md, "Broadcast push and channels") is
    /// `POST /4/broadcasts/apps/<bundle id>` with `apns-channel-id`, `apns-push-type:
    /// liveactivity`, `apns-expiration` and `apns-priority` (all required, checked when it was
    /// queued), the slot's apns-id as `apns-request-id`, and no `apns-topic`.
    func submit(slotIndex: Int32, slot: UnsafeMutablePointer<Slot>, authorization: UnsafeRawBufferPointer?) -> Int32 {
        guard let session, let buffer = slot.pointee.storage.buffer else { return -1 }
        var h = HeaderList(nv: nv)
        let s = slot.pointee
        let broadcast = s.request.channelID.length > 0
        h.add(":method", "POST")
        h.add(":scheme", "https")
        h.add(":authority", authority.baseAddress!, authority.count, HeaderList.noCopy)
        // Never indexed either way (nghttp2 does not index :path whatever the flags, and Apple
        // asks for literals): marked so, for both kinds.
        h.add(":path", buffer + SlotLayout.request, Int(s.request.pathLength), HeaderList.noIndex)
        if let authorization {
            // Copied by nghttp2 (no NO_COPY flag): the token may be re-signed before the frame
            // is written. nghttp2 never indexes an authorization field (it is sensitive), so
            // the token goes out literally on every request.
            h.add("authorization", authorization.baseAddress!, authorization.count, HeaderList.noCopyName)
        }
        if broadcast {
            // Apple's table once writes "Liveactivity"; header values are compared as sent, and
            // every other mention (and the push type table) says "liveactivity".
            h.add("apns-push-type", BroadcastRules.pushType.headerValue)
            h.add("apns-channel-id", buffer + Int(s.request.channelID.offset), Int(s.request.channelID.length), HeaderList.noCopy)
        } else {
            h.add("apns-push-type", (PushType(rawValue: s.request.pushType) ?? .alert).headerValue)
            h.add("apns-topic", buffer + Int(s.request.topic.offset), Int(s.request.topic.length), HeaderList.noCopy)
        }
        switch s.request.priority {
        case 5: h.add("apns-priority", "5")
        case 1: h.add("apns-priority", "1")
        default: h.add("apns-priority", "10")
        }
        h.add(broadcast ? "apns-request-id" : "apns-id", buffer + SlotLayout.apnsId, 36, HeaderList.noIndex)
        // Always present on a broadcast (required); optional on a device notification.
        if s.request.expiration.length > 0 {
            h.add("apns-expiration", buffer + Int(s.request.expiration.offset), Int(s.request.expiration.length), HeaderList.noIndex)
        }
        // Never on a broadcast (refused when queued: Apple does not document it there).
        if s.request.collapseID.length > 0 {
            h.add("apns-collapse-id", buffer + Int(s.request.collapseID.offset), Int(s.request.collapseID.length), HeaderList.noCopy)
        }
        slot.pointee.transmission.payloadSent = 0
        var provider = nghttp2_data_provider(
            source: nghttp2_data_source(ptr: UnsafeMutableRawPointer(bitPattern: Int(slotIndex) + 1)),
            read_callback: readPayload)
        return nghttp2_submit_request(session, nil, nv, h.count, &provider, UnsafeMutableRawPointer(bitPattern: Int(slotIndex) + 1))
    }

    /// Resets a stream (deadline passed) and detaches it from its slot, so a late answer is
    /// ignored.
    func cancel(streamID: Int32) {
        guard let session else { return }
        if streamID == headerStreamID { headerStreamID = 0 }
        nghttp2_session_set_stream_user_data(session, streamID, nil)
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_CANCEL.rawValue)
    }

    /// Sends a health PING (the state noted when; its ACK clears that, `pingAcknowledged`).
    func sendPing() {
        guard let session else { return }
        nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
        flush()
    }

    /// Sends GOAWAY (client closing) so the server knows no more streams will come.
    func sendGoaway() {
        guard let session else { return }
        nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
    }
}

/// Fills the connection's scratch `nghttp2_nv` array (a struct, not a closure, so that even
/// unoptimized builds allocate nothing per request).
struct HeaderList {
    let nv: UnsafeMutablePointer<nghttp2_nv>
    var count = 0
    /// Name and value live as long as the stream (static strings, the slot's buffer).
    static let noCopy = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
    /// Per-device and per-request values must not enter APNs's small HPACK table.
    static let noIndex = noCopy | UInt8(NGHTTP2_NV_FLAG_NO_INDEX.rawValue)
    /// The value is copied by nghttp2.
    static let noCopyName = UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue)

    init(nv: UnsafeMutablePointer<nghttp2_nv>) { self.nv = nv }

    mutating func add(_ name: StaticString, _ value: UnsafeRawPointer, _ length: Int, _ flags: UInt8) {
        nv[count] = nghttp2_nv(name: UnsafeMutablePointer(mutating: name.utf8Start),
                               value: UnsafeMutablePointer(mutating: value.assumingMemoryBound(to: UInt8.self)),
                               namelen: name.utf8CodeUnitCount, valuelen: length, flags: flags)
        count += 1
    }

    mutating func add(_ name: StaticString, _ value: StaticString) {
        add(name, value.utf8Start, value.utf8CodeUnitCount, Self.noCopy)
    }
}

// MARK: - nghttp2 callbacks (non-capturing, so they can be C function pointers)

/// Runs `body` with the connection a callback is for, as a guaranteed reference: nghttp2 calls
/// back only from inside that connection's own reads and writes, which hold it, and a strong
/// local cost a retain and a release per call (several calls per notification).
@inline(__always)
private func withConnection<R>(_ userData: UnsafeMutableRawPointer?, _ body: (APNsConnection) -> R) -> R {
    Unmanaged<APNsConnection>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
}

@inline(__always)
private func slotIndex(_ session: OpaquePointer?, _ streamID: Int32) -> Int32 {
    guard let p = nghttp2_session_get_stream_user_data(session, streamID) else { return -1 }
    return Int32(Int(bitPattern: p) - 1)
}

/// Supplies a request's payload from its slot (device notifications and broadcasts alike).
let readPayload: nghttp2_data_source_read_callback = { _, _, buf, length, flags, source, userData in
    let index = Int32(Int(bitPattern: source!.pointee.ptr) - 1)
    let slot = withConnection(userData) { $0.slots[index] }
    let remaining = Int(slot.pointee.request.payload.length - slot.pointee.transmission.payloadSent)
    let n = min(remaining, length)
    if n > 0 {
        buf!.update(from: (slot.pointee.storage.buffer! + Int(slot.pointee.request.payload.offset + slot.pointee.transmission.payloadSent)).assumingMemoryBound(to: UInt8.self), count: n)
        slot.pointee.transmission.payloadSent += Int32(n)
    }
    if slot.pointee.transmission.payloadSent == slot.pointee.request.payload.length {
        flags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue)
    }
    return n
}

private let onHeader: nghttp2_on_header_callback = { session, frame, name, namelen, value, valuelen, _, userData in
    guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) else { return 0 }
    let streamID = frame.pointee.hd.stream_id
    withConnection(userData) { conn in
        if streamID != conn.headerStreamID {
            conn.headerStreamID = streamID
            conn.headerSlotIndex = slotIndex(session, streamID)
        }
        let index = conn.headerSlotIndex
        guard index >= 0, let name, let value else { return }
        recordHeader(name, namelen, value, valuelen, in: conn.slots[index])
    }
    return 0
}

/// What the client keeps of an answer's header: the status, the apns-id (or a broadcast's
/// apns-request-id), the apns-unique-id.
@inline(__always)
private func recordHeader(_ name: UnsafePointer<UInt8>, _ namelen: Int, _ value: UnsafePointer<UInt8>, _ valuelen: Int,
                          in slot: UnsafeMutablePointer<Slot>) {
    guard let buffer = slot.pointee.storage.buffer else { return }
    if namelen == 7 && name[0] == UInt8(ascii: ":") {            // ":status"
        var status: Int32 = 0
        for i in 0..<valuelen { status = status &* 10 &+ Int32(value[i] &- 0x30) }
        slot.pointee.answer.status = status
    } else if namelen == 7 && memcmp(name, "apns-id", 7) == 0 && valuelen == 36 {
        (buffer + SlotLayout.apnsId).copyMemory(from: value, byteCount: 36)
    } else if namelen == 15 && valuelen == 36 && memcmp(name, "apns-request-id", 15) == 0 {
        // A broadcast's answer names its request by apns-request-id (no apns-id).
        (buffer + SlotLayout.apnsId).copyMemory(from: value, byteCount: 36)
    } else if namelen == 14 && memcmp(name, "apns-unique-id", 14) == 0 {
        let n = min(valuelen, 36)
        (buffer + SlotLayout.uniqueId).copyMemory(from: value, byteCount: n)
        slot.pointee.answer.uniqueIdLength = Int32(n)
    }
}

private let onDataChunk: nghttp2_on_data_chunk_recv_callback = { session, _, streamID, data, len, userData in
    let index = slotIndex(session, streamID)
    guard index >= 0, let data else { return 0 }
    let slot = withConnection(userData) { $0.slots[index] }
    let room = SlotLayout.bodyCapacity - Int(slot.pointee.answer.bodyLength)
    let n = min(room, len)
    if n > 0 {
        (slot.pointee.storage.buffer! + SlotLayout.body + Int(slot.pointee.answer.bodyLength)).copyMemory(from: data, byteCount: n)
        slot.pointee.answer.bodyLength += Int32(n)
    }
    return 0
}

private let onStreamClose: nghttp2_on_stream_close_callback = { session, streamID, errorCode, userData in
    withConnection(userData) { conn in
        // Most streams close on the frame whose headers were just read: their slot is known.
        let index = streamID == conn.headerStreamID ? conn.headerSlotIndex : slotIndex(session, streamID)
        if streamID == conn.headerStreamID { conn.headerStreamID = 0 }
        guard index >= 0 else { return }
        conn.input.append(.streamClosed(slot: index, streamID: streamID, errorCode: errorCode))
    }
    return 0
}

private let onFrameReceived: nghttp2_on_frame_recv_callback = { session, frame, userData in
    guard let frame else { return 0 }
    // Every answer's HEADERS frame comes here too: the connection is looked at only below.
    switch UInt32(frame.pointee.hd.type) {
    case NGHTTP2_SETTINGS.rawValue where frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0:
        let limit = nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS)
        withConnection(userData) { $0.input.append(.settings(maxConcurrentStreams: limit)) }
    case NGHTTP2_PING.rawValue where frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0:
        withConnection(userData) { $0.input.append(.pingAcknowledged) }
    case NGHTTP2_GOAWAY.rawValue:
        let g = frame.pointee.goaway
        var reason: String?
        if g.opaque_data_len > 0, let data = g.opaque_data {
            reason = APNsResponse.reasonText(in: UnsafeRawBufferPointer(start: data, count: g.opaque_data_len))
        }
        withConnection(userData) { $0.input.appendGoaway(lastStreamID: g.last_stream_id, errorCode: g.error_code, reason: reason) }
    default:
        break
    }
    return 0
}
