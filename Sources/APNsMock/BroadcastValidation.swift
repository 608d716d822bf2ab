#if canImport(Glibc)
import Glibc
#endif
import PushCore

/// Apple's rules for broadcasts (`POST /4/broadcasts/apps/<bundle id>` on the APNs host) and
/// for channel management requests (`/1/apps/<bundle id>/channels` and `/all-channels` on the
/// management host), applied to what a `MockStream` recorded (apns.md, "Broadcast push and
/// channels"). Written from Apple's pages, not from the client: the format checks that both
/// sides share (`BroadcastRules`) are Apple's stated formats.
enum BroadcastValidation {
    private static let broadcastPrefix: StaticString = "/4/broadcasts/apps/"
    private static let appsPrefix: StaticString = "/1/apps/"
    private static let channelsSuffix: StaticString = "/channels"
    private static let allChannelsSuffix: StaticString = "/all-channels"

    /// Records a broadcast or channel management path (with its bundle id); false when the
    /// path is neither (a device path, or an unknown one).
    static func recordPath(_ value: UnsafeRawBufferPointer, on stream: MockStream) -> Bool {
        if let bundle = rest(of: value, after: broadcastPrefix) {
            stream.path = store(bundle, on: stream) ? .broadcast : .notDevicePath
            return true
        }
        guard let app = rest(of: value, after: appsPrefix) else { return false }
        for (suffix, path) in [(channelsSuffix, MockStream.Path.channels), (allChannelsSuffix, .allChannels)] {
            let n = suffix.utf8CodeUnitCount
            if app.count > n, memcmp(app.baseAddress! + app.count - n, suffix.utf8Start, n) == 0 {
                stream.path = store(UnsafeRawBufferPointer(rebasing: app[..<(app.count - n)]), on: stream) ? path : .notDevicePath
                return true
            }
        }
        stream.path = .notDevicePath
        return true
    }

    /// The reason to answer a broadcast with (`.none`: accept), in this order: framing,
    /// authentication, the app (enabled, allowed), the required headers as Apple's table lists
    /// them, the channel in the registry, the expiration against its storage policy, the
    /// payload.
    static func verdict(forBroadcast s: MockStream, authenticator: any MockAuthenticator, registry: ChannelRegistry) -> APNsReason {
        if s.duplicateHeader { return .duplicateHeaders }
        if s.method != .post { return .methodNotAllowed }
        let auth = authenticator.authorize(s)
        if auth != .none { return auth }
        if let reason = checkApp(s, authenticator: authenticator, registry: registry) { return reason }
        guard let channel = s.channelIdBytes else { return .missingChannelId }
        if s.channelIdTooLong || BroadcastRules.checkChannelId(channel) != nil { return .badChannelId }
        if s.seenHeaders & RequestHeader.pushType.bit == 0 { return .missingPushType }
        if s.pushTypeInvalid || s.pushType != BroadcastRules.pushType { return .invalidPushType }
        // apns-priority is required on a broadcast (no default applies).
        if s.priority == 0 || s.priority < 0 { return .badPriority }
        if case .failure = BroadcastRules.resolvePriority(s.priority) { return .badPriority }
        if s.seenHeaders & RequestHeader.expiration.bit == 0 || s.expirationInvalid { return .badExpirationDate }
        if s.apnsIdInvalid { return .badMessageId }
        switch registry.lookup(bundle: string(s.bundleBytes), id: string(channel)) {
        case .failure(let e): return e.reason
        case .success(let storage):
            if storage == .noMessageStored && s.expiration != 0 { return .badExpirationDate }
        }
        if s.bodyBytes == 0 { return .payloadEmpty }
        if s.bodyBytes > BroadcastRules.maxPayloadBytes { return .payloadTooLarge }
        return .none
    }

    /// A channel management request's answer: the status (201 create, 200 read and list, 204
    /// delete) with what it carries, or the reason it is refused.
    struct ManagementAnswer {
        var reason = APNsReason.none
        var status: Int32 = 200
        var channelId: [UInt8] = []
        var body: [UInt8] = []
    }

    /// Decides a channel management request and applies it to the registry.
    static func answer(management s: MockStream, authenticator: any MockAuthenticator, registry: ChannelRegistry) -> ManagementAnswer {
        var a = ManagementAnswer()
        a.reason = managementVerdict(s, authenticator: authenticator, registry: registry, answer: &a)
        return a
    }

    private static func managementVerdict(_ s: MockStream, authenticator: any MockAuthenticator, registry: ChannelRegistry,
                                          answer a: inout ManagementAnswer) -> APNsReason {
        if s.duplicateHeader { return .duplicateHeaders }
        guard s.path == .channels || s.path == .allChannels else { return .badPath }
        switch (s.path, s.method) {
        case (.channels, .post), (.channels, .get), (.channels, .delete), (.allChannels, .get): break
        default: return .methodNotAllowed
        }
        let auth = authenticator.authorize(s)
        if auth != .none { return auth }
        if let reason = checkApp(s, authenticator: authenticator, registry: registry) { return reason }
        if s.apnsIdInvalid { return .badRequestParams }
        let bundle = string(s.bundleBytes)
        if s.path == .allChannels {
            a.body = ChannelMessages.listJSON(registry.ids(bundle: bundle))
            return .none
        }
        if s.method == .post {
            if s.keptBody.count > MockStream.keptBodyCapacity { return .badRequestPayload }
            let parsed = s.keptBody.withUnsafeBytes { ChannelMessages.configuration($0) }
            let configuration: ChannelMessages.Configuration
            switch parsed {
            case .success(let c): configuration = c
            case .failure(.missingPushType): return .missingPushType
            case .failure(.malformed): return .badRequestPayload
            }
            guard configuration.pushType == BroadcastRules.channelPushTypeName else { return .invalidPushType }
            let storage = ChannelRegistry.StoragePolicy(rawValue: Int(configuration.storagePolicy)) ?? .noMessageStored
            switch registry.create(bundle: bundle, policy: storage) {
            case .refused(let reason): return reason
            case .created(let id):
                a.status = 201
                a.channelId = Array(id.utf8)
                return .none
            }
        }
        guard let channel = s.channelIdBytes else { return .missingChannelId }
        if s.channelIdTooLong || BroadcastRules.checkChannelId(channel) != nil { return .badChannelId }
        if s.method == .delete {
            let reason = registry.delete(bundle: bundle, id: string(channel))
            a.status = 204
            return reason
        }
        switch registry.lookup(bundle: bundle, id: string(channel)) {
        case .failure(let e): return e.reason
        case .success(let storage):
            a.body = ChannelMessages.Configuration(storagePolicy: Int32(storage.rawValue)).json
            return .none
        }
    }

    /// FeatureNotEnabled for an app without broadcast push, TopicDisallowed for an app the
    /// connection may not push to; nil when the app is fine.
    private static func checkApp(_ s: MockStream, authenticator: any MockAuthenticator, registry: ChannelRegistry) -> APNsReason? {
        if registry.disabledBundleIds.contains(string(s.bundleBytes)) { return .featureNotEnabled }
        let topic = authenticator.checkTopic(s.bundleBytes, base: s.bundleBytes)
        return topic == .none ? nil : topic
    }

    /// The bytes after `prefix`, or nil when `value` does not start with it.
    private static func rest(of value: UnsafeRawBufferPointer, after prefix: StaticString) -> UnsafeRawBufferPointer? {
        let n = prefix.utf8CodeUnitCount
        guard value.count >= n, memcmp(value.baseAddress!, prefix.utf8Start, n) == 0 else { return nil }
        return UnsafeRawBufferPointer(rebasing: value[n...])
    }

    /// Keeps a path's bundle id; false when it is empty, too long or holds a `/` (no such path).
    private static func store(_ bundle: UnsafeRawBufferPointer, on stream: MockStream) -> Bool {
        guard !bundle.isEmpty, bundle.count <= MockStream.topicCapacity, !bundle.contains(UInt8(ascii: "/")) else { return false }
        stream.bundle.copyMemory(from: bundle.baseAddress!, byteCount: bundle.count)
        stream.bundleLength = bundle.count
        return true
    }

    private static func string(_ bytes: UnsafeRawBufferPointer) -> String { String(decoding: bytes, as: UTF8.self) }
}
