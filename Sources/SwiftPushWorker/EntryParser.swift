import PushCore

/// What a credential set allows, as far as checking an entry goes.
public struct AppPolicy: Sendable, Equatable {
    /// Topics entries of this app may use; empty: any. The first is the default topic.
    public var topics: [String] { didSet { topicBytes = topics.map { Array($0.utf8) } } }
    /// `topics` as bytes, made once: every entry is checked against them, and making a String
    /// (or the default topic's bytes) per entry was an allocation on the worker's hot path.
    private(set) var topicBytes: [[UInt8]]

    /// A policy allowing `topics` (empty: any topic, and entries must name one).
    public init(topics: [String]) {
        self.topics = topics
        topicBytes = topics.map { Array($0.utf8) }
    }
}

/// Why an entry cannot be sent: a REJECTED outcome with this reason and detail. Reasons are
/// the worker's own words (they never reached APNs), listed in docs/worker.md.
public struct EntryRejection: Error, Sendable, Equatable {
    /// The reason name recorded in the outcome (`MissingId`, `UnknownApp`, `BadDeviceToken`...).
    public let reason: String
    /// The detail: the library's validation message, or the worker's.
    public let detail: String

    /// A rejection with `reason` and `detail`.
    public init(_ reason: String, _ detail: String) {
        self.reason = reason
        self.detail = detail
    }

    /// The rejection for a broken NotificationRules rule, named after the library's status.
    init(_ violation: NotificationRules.Violation) {
        let reason: String
        switch violation.status {
        case .badDeviceToken: reason = "BadDeviceToken"
        case .badTopic: reason = "BadTopic"
        case .badPushType: reason = "BadPushType"
        case .badPriority: reason = "BadPriority"
        case .payloadTooLarge: reason = "PayloadTooLarge"
        case .badCollapseId: reason = "BadCollapseId"
        case .badExpiration: reason = "BadExpiration"
        default: reason = "BadPayload"
        }
        self.init(reason, violation.message)
    }
}

/// Turns a stream entry into a notification, or says why it cannot be sent. Pure: the same
/// entry and apps always give the same answer, so this policy is unit-tested on its own.
///
/// The entry format is versioned by its `v` field (absent means 1). Version 1's fields are
/// listed in docs/worker.md; unknown fields are ignored so that producers may add their own.
public struct EntryParser: Sendable {
    /// The entry format versions this worker reads.
    public static let supportedVersions: Set<String> = ["1"]
    /// Longest notification id accepted, in bytes (it becomes part of a Redis key).
    public static let maxIDBytes = 256

    /// The credential sets, by name.
    public let apps: [String: AppPolicy]

    /// A parser routing to `apps`.
    public init(apps: [String: AppPolicy]) { self.apps = apps }

    /// The notification in `entry`, or the rejection to record.
    public func parse(_ entry: QueueEntry) -> Result<QueuedNotification, EntryRejection> {
        do throws(EntryRejection) {
            return .success(try check(entry))
        } catch {
            return .failure(error)
        }
    }

    private func check(_ entry: QueueEntry) throws(EntryRejection) -> QueuedNotification {
        if let v = entry.value("v"), !Self.supportedVersions.contains(String(decoding: v, as: UTF8.self)) {
            throw EntryRejection("UnsupportedVersion", "entry format version '\(String(decoding: v, as: UTF8.self))' is not one this worker reads (1)")
        }
        let id = try notificationID(entry)
        let once: [StaticString] = ["app", "token", "topic", "push_type", "priority", "expiration", "collapse_id", "payload", "not_after"]
        for name in once where entry.count(name) > 1 {
            throw EntryRejection("BadField", "field '\(name)' appears more than once")
        }
        guard let appBytes = entry.value("app") else { throw EntryRejection("UnknownApp", "the entry names no app (field 'app')") }
        let app = String(decoding: appBytes, as: UTF8.self)
        guard let policy = apps[app] else {
            throw EntryRejection("UnknownApp", "unknown app '\(app)': this worker serves \(apps.keys.sorted().joined(separator: ", "))")
        }

        var pushType = PushType.alert
        if let t = entry.value("push_type") {
            guard let p = PushType(headerValue: String(decoding: t, as: UTF8.self)) else {
                throw EntryRejection("BadPushType", "unknown push type '\(String(decoding: t, as: UTF8.self))'; one of \(PushType.allCases.map { "\($0.headerValue)" }.joined(separator: ", "))")
            }
            pushType = p
        }
        guard let token = entry.value("token") else { throw EntryRejection("BadDeviceToken", "device token is missing (field 'token')") }
        if let v = token.withUnsafeBytes({ NotificationRules.checkDeviceToken($0) }) { throw EntryRejection(v) }

        let topic: ArraySlice<UInt8>
        var isDefaultTopic = false
        if let t = entry.value("topic") {
            topic = t
        } else if let first = policy.topicBytes.first {
            topic = first[...]
            isDefaultTopic = true
        } else {
            topic = []
        }
        if let v = topic.withUnsafeBytes({ NotificationRules.checkTopic($0, pushType: pushType) }) { throw EntryRejection(v) }
        if !isDefaultTopic && !policy.topicBytes.isEmpty && !policy.topicBytes.contains(where: { $0.elementsEqual(topic) }) {
            throw EntryRejection("TopicDisallowed", "topic '\(String(decoding: topic, as: UTF8.self))' is not among app '\(app)''s topics")
        }

        var priority: Int32 = 0
        if let p = entry.value("priority") {
            guard let n = Int32(String(decoding: p, as: UTF8.self)) else {
                throw EntryRejection("BadPriority", "priority must be 10, 5 or 1 (got '\(String(decoding: p, as: UTF8.self))')")
            }
            priority = n
        }
        if case .failure(let v) = NotificationRules.resolvePriority(priority, pushType: pushType) { throw EntryRejection(v) }

        var expiration: Int64?
        if let e = entry.value("expiration") {
            guard let n = Int64(String(decoding: e, as: UTF8.self)) else {
                throw EntryRejection("BadExpiration", "expiration must be 0 (try once) or UNIX seconds, got '\(String(decoding: e, as: UTF8.self))'")
            }
            if let v = NotificationRules.checkExpiration(n) { throw EntryRejection(v) }
            expiration = n
        }
        let collapseID = entry.value("collapse_id")
        if let c = collapseID, let v = c.withUnsafeBytes({ NotificationRules.checkCollapseId($0) }) { throw EntryRejection(v) }

        guard let payload = entry.value("payload") else { throw EntryRejection("BadPayload", "payload is missing (field 'payload')") }
        if let v = payload.withUnsafeBytes({ NotificationRules.checkPayload($0, pushType: pushType) }) { throw EntryRejection(v) }

        var notAfter: Int64?
        if let t = entry.value("not_after") {
            guard let n = Int64(String(decoding: t, as: UTF8.self)), n >= 0 else {
                throw EntryRejection("BadField", "not_after must be UNIX seconds, got '\(String(decoding: t, as: UTF8.self))'")
            }
            notAfter = n
        }
        let retries = entry.value("retries").flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
        return QueuedNotification(id: id, app: app, token: token, topic: topic, pushType: pushType, priority: priority,
                                  expiration: expiration, collapseID: collapseID, payload: payload, notAfter: notAfter,
                                  retries: max(0, retries), apnsID: NameBasedUUID.make(name: Array(id.utf8)))
    }

    /// The `id` field: present once, non-empty, bounded, valid UTF-8 without control characters
    /// (it appears in keys, logs and the outcome stream).
    public static func notificationID(of entry: QueueEntry) -> String? {
        guard entry.count("id") == 1, let raw = entry.value("id"), !raw.isEmpty, raw.count <= maxIDBytes,
              !raw.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return nil }
        let text = String(decoding: raw, as: UTF8.self)
        return text.utf8.elementsEqual(raw) ? text : nil
    }

    private func notificationID(_ entry: QueueEntry) throws(EntryRejection) -> String {
        if let id = Self.notificationID(of: entry) { return id }
        switch entry.count("id") {
        case 0: throw EntryRejection("MissingId", "the entry has no 'id' field")
        case 1: throw EntryRejection("BadId", "the 'id' must be 1 to \(Self.maxIDBytes) bytes of UTF-8 without control characters")
        default: throw EntryRejection("BadId", "the entry has \(entry.count("id")) 'id' fields")
        }
    }
}
