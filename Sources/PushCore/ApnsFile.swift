/// A `.apns` file, as Xcode's simulator (`xcrun simctl push`) and desktop push tools read them:
/// a JSON payload with one more top-level key, `"Simulator Target Bundle"`, naming the app's
/// bundle id (apns.md, "The payload").
///
/// Reading one gives the topic and the payload to send, that key removed. The payload's other
/// members are copied byte for byte (only their keys are written anew), so numbers, escapes
/// and nested objects reach APNs exactly as the file has them.
public struct ApnsFile: Sendable, Equatable {
    /// The key that names the bundle id.
    public static let targetBundleKey = "Simulator Target Bundle"

    /// Why a file could not be read as a `.apns` file (`.badPayload`).
    public typealias Failure = StatusError

    /// The bundle id from `"Simulator Target Bundle"`, nil when the file has none.
    public let bundleID: String?
    /// The payload without `"Simulator Target Bundle"`. When the file has no such key, the
    /// file's bytes exactly.
    public let payload: [UInt8]

    /// Reads a `.apns` file's contents.
    public init(contents: [UInt8]) throws(Failure) {
        let members: [JSON.Member]
        switch JSON.topLevelMembers(contents) {
        case .success(let m): members = m
        case .failure(let f): throw Failure(.badPayload, "not a JSON object: \(f.message) at byte \(f.offset)")
        }
        var bundleID: String?
        var kept: [JSON.Member] = []
        for m in members {
            guard m.key == Self.targetBundleKey else { kept.append(m); continue }
            let name = contents.withUnsafeBytes { JSON.decodeString(UnsafeRawBufferPointer(rebasing: $0[m.value])) }
            guard let name else { throw Failure(.badPayload, "\"\(Self.targetBundleKey)\" must be a string") }
            if name.isEmpty { throw Failure(.badPayload, "\"\(Self.targetBundleKey)\" is empty") }
            if let bundleID, bundleID != name {
                throw Failure(.badPayload, "\"\(Self.targetBundleKey)\" is given twice, with different values")
            }
            bundleID = name
        }
        self.bundleID = bundleID
        if kept.count == members.count {
            payload = contents
            return
        }
        var w = PayloadJSONWriter(capacity: contents.count)
        w.beginObject()
        for m in kept {
            w.key(m.key)
            w.raw(Array(contents[m.value]))
        }
        w.endObject()
        payload = w.bytes
    }

    /// The topic for `pushType`: the bundle id plus the push type's suffix; nil when the file
    /// names no bundle.
    public func topic(for pushType: PushType) -> Result<String, NotificationRules.Violation>? {
        bundleID.map { Array($0.utf8).withUnsafeBytes { pushType.topic(forBundleID: $0) } }
    }
}

extension PushType {
    /// The `apns-topic` for an app's bundle id: the bundle id plus this push type's suffix
    /// (voip `.voip`, liveactivity `.push-type.liveactivity`, ...; apns.md, "Request" table).
    /// mdm topics come from the MDM certificate and cannot be derived: `.badTopic`.
    public func topic(forBundleID bundleID: UnsafeRawBufferPointer) -> Result<String, NotificationRules.Violation> {
        if self == .mdm {
            return .failure(.init(.badTopic, "an mdm topic comes from the MDM certificate, not from a bundle id"))
        }
        if bundleID.isEmpty { return .failure(.init(.badTopic, "bundle id is empty")) }
        for c in bundleID where c <= 0x20 || c >= 0x7F {
            return .failure(.init(.badTopic, "bundle id has a space, control or non-ASCII character"))
        }
        let topic = String(decoding: bundleID, as: UTF8.self) + topicSuffix
        if topic.utf8.count > NotificationRules.maxTopicBytes {
            return .failure(.init(.badTopic, "topic would be longer than \(NotificationRules.maxTopicBytes) bytes"))
        }
        return .success(topic)
    }
}
