import CNGHTTP2
import PushCore

/// What one request stream has shown so far, and the storage its response points into.
///
/// Owned by one `MockConnection` and used only on its I/O thread. Streams are pooled per
/// connection: every buffer is allocated once, when the stream object is first made, so a
/// request in steady state allocates nothing on the Swift side. The response's header values
/// (`apns-id`, `apns-unique-id`) and error body live here because nghttp2 is told not to copy
/// them (`NGHTTP2_NV_FLAG_NO_COPY_*`): they must stay put until the stream closes, which is
/// exactly when the object goes back to the pool.
final class MockStream {
    /// Longest device token kept; longer ones are refused as BadDeviceToken without being
    /// stored (the same bound as `NotificationRules.maxDeviceTokenHexDigits`).
    static let tokenCapacity = NotificationRules.maxDeviceTokenHexDigits
    /// Longest topic kept; longer ones are BadTopic.
    static let topicCapacity = NotificationRules.maxTopicBytes
    /// Room for `{"reason":"...","timestamp":<ms>}` with any reason in the table.
    static let bodyCapacity = 128
    /// Longest channel id kept (`BroadcastRules.maxChannelIdBytes`).
    static let channelIdCapacity = BroadcastRules.maxChannelIdBytes
    /// Longest channel management body kept; a longer one is BadRequestPayload.
    static let keptBodyCapacity = 1024

    /// Which HTTP/2 method the request used.
    enum Method { case notSeen, post, get, delete, other }
    /// What `:path` held: a device notification, a broadcast, or a channel management request
    /// (apns.md, "Broadcast push and channels"), the last three naming a bundle id (`bundle`).
    enum Path { case notSeen, notDevicePath, device, broadcast, channels, allChannels }
    /// Where the `authorization` header stands.
    enum Authorization { case absent, sameAsVerified, pending }

    var streamID: Int32 = 0
    /// Changes each time the object is reused, so that a timer scheduled for one request
    /// cannot answer a later one.
    var serial: UInt64 = 0
    /// Request headers seen, one bit per `RequestHeader`, to find repeats (DuplicateHeaders).
    var seenHeaders: UInt16 = 0
    var duplicateHeader = false
    var method = Method.notSeen
    var path = Path.notSeen

    let token: UnsafeMutableRawPointer
    var tokenLength = 0
    var tokenTooLong = false

    let topic: UnsafeMutableRawPointer
    var topicLength = 0
    var topicTooLong = false

    /// nil with `pushTypeInvalid` false: header absent (APNs then assumes alert).
    var pushType: PushType?
    var pushTypeInvalid = false
    /// The bundle id a broadcast or channel management path names.
    let bundle: UnsafeMutableRawPointer
    var bundleLength = 0
    /// `apns-channel-id` (-1: absent; longer than `channelIdCapacity`: kept as too long).
    let channelId: UnsafeMutableRawPointer
    var channelIdLength = -1
    var channelIdTooLong = false
    // The arrays are emptied by `reset` for every request: no runtime exclusivity checks on them
    // (the stream is its connection's, on the I/O thread, and no access to them overlaps).

    /// A channel management request's body (create), kept up to `keptBodyCapacity` bytes.
    @exclusivity(unchecked) var keptBody: [UInt8] = []
    /// A channel management answer's body (read, list: any size), sent instead of `body`.
    @exclusivity(unchecked) var answerBody: [UInt8] = []
    /// 0: absent (the push type's default applies); -1: not a number.
    var priority: Int32 = 0
    var apnsIdInvalid = false
    var collapseIdTooLong = false
    var expirationInvalid = false
    /// apns-expiration as sent (-1: absent), for the record.
    var expiration: Int64 = -1
    /// apns-collapse-id as sent (up to 64 bytes kept), for the record.
    let collapseId: UnsafeMutableRawPointer
    var collapseIdLength = -1

    var authorization = Authorization.absent
    /// The header value, kept only when it differs from the connection's verified token.
    @exclusivity(unchecked) var authorizationValue: [UInt8] = []

    /// Payload bytes received (counted, not kept: the mock checks emptiness and size only).
    var bodyBytes = 0

    // MARK: What became of it

    /// Never to be processed: refused as it opened, or above a GOAWAY's last-stream-id.
    var discarded = false
    /// Processed (recorded); its answer may still wait for a timer.
    var decided = false
    /// The answer was submitted to nghttp2.
    var answered = false
    /// The reason decided (`.none`: 200).
    var reason = APNsReason.none

    // MARK: Response storage

    /// The request's apns-id, or one generated for it: echoed in the response.
    let apnsId: UnsafeMutableRawPointer
    /// The 36 bytes of an apns-id as one value (`apnsId` is allocated with 8-byte alignment).
    typealias ApnsIdBytes = (UInt64, UInt64, UInt64, UInt64, UInt32)
    var hasApnsId = false
    /// `apns-unique-id` (development mode).
    let uniqueId: UnsafeMutableRawPointer
    /// The response header block: `:status`, `apns-id`, and maybe `apns-unique-id`.
    let headers: UnsafeMutablePointer<nghttp2_nv>
    var headerCount = 0
    /// The error body, sent by the data source callback.
    let body: UnsafeMutableRawPointer
    var bodyLength = 0
    var bodySent = 0

    init() {
        token = .allocate(byteCount: Self.tokenCapacity, alignment: 8)
        topic = .allocate(byteCount: Self.topicCapacity, alignment: 8)
        apnsId = .allocate(byteCount: 36, alignment: 8)
        uniqueId = .allocate(byteCount: 36, alignment: 8)
        body = .allocate(byteCount: Self.bodyCapacity, alignment: 8)
        collapseId = .allocate(byteCount: NotificationRules.maxCollapseIdBytes, alignment: 8)
        bundle = .allocate(byteCount: Self.topicCapacity, alignment: 8)
        channelId = .allocate(byteCount: Self.channelIdCapacity, alignment: 8)
        headers = .allocate(capacity: 4)
        authorizationValue.reserveCapacity(512)
    }

    deinit {
        token.deallocate()
        topic.deallocate()
        apnsId.deallocate()
        uniqueId.deallocate()
        body.deallocate()
        collapseId.deallocate()
        bundle.deallocate()
        channelId.deallocate()
        headers.deallocate()
    }

    /// Clears the request state for stream `id` (buffers are kept).
    func reset(streamID id: Int32, serial: UInt64) {
        streamID = id
        self.serial = serial
        seenHeaders = 0
        duplicateHeader = false
        method = .notSeen
        path = .notSeen
        tokenLength = 0
        tokenTooLong = false
        topicLength = 0
        topicTooLong = false
        pushType = nil
        pushTypeInvalid = false
        priority = 0
        apnsIdInvalid = false
        hasApnsId = false
        collapseIdTooLong = false
        expirationInvalid = false
        expiration = -1
        collapseIdLength = -1
        bundleLength = 0
        channelIdLength = -1
        channelIdTooLong = false
        if !keptBody.isEmpty { keptBody.removeAll(keepingCapacity: true) }
        if !answerBody.isEmpty { answerBody.removeAll(keepingCapacity: true) }
        authorization = .absent
        if !authorizationValue.isEmpty { authorizationValue.removeAll(keepingCapacity: true) }
        bodyBytes = 0
        discarded = false
        decided = false
        answered = false
        reason = .none
        headerCount = 0
        bodyLength = 0
        bodySent = 0
    }

    var tokenBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: token, count: tokenLength) }
    var topicBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: topic, count: topicLength) }
    /// The device token as a lowercased String, for the tables that list tokens (a String per
    /// request: asked only when a table is not empty).
    var lowercasedToken: String { String(decoding: tokenBytes, as: UTF8.self).lowercased() }
    var bundleBytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: bundle, count: bundleLength) }
    var channelIdBytes: UnsafeRawBufferPointer? {
        channelIdLength < 0 ? nil : UnsafeRawBufferPointer(start: channelId, count: channelIdLength)
    }
    var collapseIdBytes: UnsafeRawBufferPointer? {
        collapseIdLength < 0 ? nil : UnsafeRawBufferPointer(start: collapseId, count: collapseIdLength)
    }

    /// Replaces the topic (certificate connections fill in the certificate's default topic).
    func setTopic(_ bytes: [UInt8]) {
        guard bytes.count <= Self.topicCapacity else { topicTooLong = true; return }
        bytes.withUnsafeBytes { topic.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        topicLength = bytes.count
        seenHeaders |= RequestHeader.topic.bit
    }
}
