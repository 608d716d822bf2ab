#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// Apple's request rules (apns.md, "Request" table and the 400/404/405/413 reasons), applied to
/// what a `MockStream` recorded.
///
/// Implementation: each header is examined once, as it arrives (`record`), and only what a
/// later decision needs is kept; `verdict` then picks the one reason to answer with. Checks
/// that only read a header run in `record`; checks that combine headers (topic suffix and
/// priority depend on the push type, the payload limit too) wait for `verdict`. The rules
/// themselves are `PushCore.NotificationRules`, the same code the client checks with, so the
/// two cannot drift apart.
enum RequestValidation {
    /// The request path prefix: `POST /3/device/<hex token>`.
    private static let devicePrefix: StaticString = "/3/device/"
    /// The device token lengths, in bytes, that the mock takes for well formed (APNs answers
    /// BadDeviceToken for a malformed token). Apple gives no size and warns that it may grow
    /// (today's are 32 bytes); this range admits any plausible one and refuses what is clearly
    /// not a token (a 2-byte test value, a hash pasted by mistake).
    static let deviceTokenBytes = 16...200

    /// Records one request header on `stream`. `authorization` is the authenticator's
    /// (`MockAuthenticator.noteAuthorization`), which knows the last verified token.
    static func record(_ header: RequestHeader, _ value: UnsafeRawBufferPointer, on stream: MockStream) {
        if stream.seenHeaders & header.bit != 0 { stream.duplicateHeader = true }
        stream.seenHeaders |= header.bit
        switch header {
        case .method:
            if value.elementsEqual("POST".utf8) {
                stream.method = .post
            } else if value.elementsEqual("GET".utf8) {
                stream.method = .get
            } else {
                stream.method = value.elementsEqual("DELETE".utf8) ? .delete : .other
            }
        case .path:
            recordPath(value, on: stream)
        case .topic:
            if value.count > MockStream.topicCapacity {
                stream.topicTooLong = true
            } else {
                stream.topic.copyMemory(from: value.baseAddress ?? UnsafeRawPointer(stream.topic), byteCount: value.count)
                stream.topicLength = value.count
            }
        case .pushType:
            stream.pushType = pushType(value)
            stream.pushTypeInvalid = stream.pushType == nil
        case .apnsId, .requestId:
            // apns-id names a device notification, apns-request-id a broadcast or a channel
            // request; both are canonical UUIDs echoed in the answer.
            if NotificationRules.checkApnsId(value) == nil {
                stream.apnsId.copyMemory(from: value.baseAddress!, byteCount: 36)
                stream.hasApnsId = true
            } else {
                stream.apnsIdInvalid = true
            }
        case .priority:
            stream.priority = smallNumber(value) ?? -1
            if stream.priority == 0 { stream.priority = -1 }  // "0" is not a priority
        case .expiration:
            if let seconds = JSON.decodeInt64(value), NotificationRules.checkExpiration(seconds) == nil {
                stream.expirationInvalid = false
                stream.expiration = seconds
            } else {
                stream.expirationInvalid = true
            }
        case .collapseId:
            stream.collapseIdTooLong = NotificationRules.checkCollapseId(value) != nil
            if !stream.collapseIdTooLong {
                if let base = value.baseAddress { stream.collapseId.copyMemory(from: base, byteCount: value.count) }
                stream.collapseIdLength = value.count
            }
        case .channelId:
            if value.count > MockStream.channelIdCapacity {
                stream.channelIdTooLong = true
                stream.channelIdLength = 0
            } else {
                if let base = value.baseAddress { stream.channelId.copyMemory(from: base, byteCount: value.count) }
                stream.channelIdLength = value.count
            }
        case .authorization:
            break
        }
    }

    /// The reason to answer `stream` with (`.none`: accept), in a fixed order: the request's
    /// framing (headers, method, path), its authentication (`authenticator`), then each field
    /// as the "Request" table lists them (TopicDisallowed from the authenticator among them),
    /// and the payload. The token's registration is asked afterwards (`RegistrationHandler`).
    /// With `lenientDeviceTokens` a token of any length passes (hex digits in even number
    /// still required).
    static func verdict(for stream: MockStream, authenticator: any MockAuthenticator,
                        lenientDeviceTokens: Bool = false) -> APNsReason {
        if stream.duplicateHeader { return .duplicateHeaders }
        if stream.method != .post { return .methodNotAllowed }
        if stream.path != .device { return .badPath }
        let auth = authenticator.authorize(stream)
        if auth != .none { return auth }
        if stream.tokenLength == 0 && !stream.tokenTooLong { return .missingDeviceToken }
        if stream.tokenTooLong || NotificationRules.checkDeviceToken(stream.tokenBytes) != nil { return .badDeviceToken }
        if !lenientDeviceTokens && !deviceTokenBytes.contains(stream.tokenLength / 2) { return .badDeviceToken }
        if stream.seenHeaders & RequestHeader.topic.bit == 0 || (stream.topicLength == 0 && !stream.topicTooLong) {
            return .missingTopic
        }
        if stream.pushTypeInvalid { return .invalidPushType }
        // APNs assumes alert when apns-push-type is absent (it is required only for watchOS).
        let type = stream.pushType ?? .alert
        if stream.topicTooLong || NotificationRules.checkTopic(stream.topicBytes, pushType: type) != nil {
            return .badTopic
        }
        let base = baseTopic(stream.topicBytes, pushType: type)
        let topicVerdict = authenticator.checkTopic(stream.topicBytes, base: base)
        if topicVerdict != .none { return topicVerdict }
        if stream.priority < 0 { return .badPriority }
        if case .failure = NotificationRules.resolvePriority(stream.priority, pushType: type) { return .badPriority }
        if stream.apnsIdInvalid { return .badMessageId }
        if stream.collapseIdTooLong { return .badCollapseId }
        if stream.expirationInvalid { return .badExpirationDate }
        if stream.bodyBytes == 0 { return .payloadEmpty }
        if stream.bodyBytes > type.payloadLimit { return .payloadTooLarge }
        return .none
    }

    /// The topic without the suffix its push type requires (`com.example.app.voip` →
    /// `com.example.app` for voip): the app's bundle id, which allow lists name.
    static func baseTopic(_ topic: UnsafeRawBufferPointer, pushType: PushType) -> UnsafeRawBufferPointer {
        let suffix = pushType.topicSuffix.utf8
        guard !suffix.isEmpty, topic.count > suffix.count, topic.suffix(suffix.count).elementsEqual(suffix) else {
            return topic
        }
        return UnsafeRawBufferPointer(rebasing: topic[..<(topic.count - suffix.count)])
    }

    private static func recordPath(_ value: UnsafeRawBufferPointer, on stream: MockStream) {
        if BroadcastValidation.recordPath(value, on: stream) { return }
        let prefixLength = devicePrefix.utf8CodeUnitCount
        guard value.count >= prefixLength,
              memcmp(value.baseAddress!, devicePrefix.utf8Start, prefixLength) == 0 else {
            // "/3/device" without the slash and token still names the endpoint: the token is
            // what is missing.
            let bare = prefixLength - 1
            if value.count == bare, memcmp(value.baseAddress!, devicePrefix.utf8Start, bare) == 0 {
                stream.path = .device
                stream.tokenLength = 0
            } else {
                stream.path = .notDevicePath
            }
            return
        }
        stream.path = .device
        let tokenLength = value.count - prefixLength
        if tokenLength > MockStream.tokenCapacity {
            stream.tokenTooLong = true
        } else {
            stream.token.copyMemory(from: value.baseAddress! + prefixLength, byteCount: tokenLength)
            stream.tokenLength = tokenLength
        }
    }

    /// The push type named by a header value, compared in place against the generated table.
    private static func pushType(_ value: UnsafeRawBufferPointer) -> PushType? {
        for type in PushType.allCases {
            let name = type.headerValue
            if name.utf8CodeUnitCount == value.count, memcmp(name.utf8Start, value.baseAddress!, value.count) == 0 {
                return type
            }
        }
        return nil
    }

    /// A decimal number of at most three digits (priorities are 10, 5 or 1), else nil.
    private static func smallNumber(_ value: UnsafeRawBufferPointer) -> Int32? {
        guard !value.isEmpty, value.count <= 3 else { return nil }
        var n: Int32 = 0
        for c in value {
            guard c >= 0x30, c <= 0x39 else { return nil }
            n = n * 10 + Int32(c - 0x30)
        }
        return n
    }
}
