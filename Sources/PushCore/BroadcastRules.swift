/// Apple's rules for broadcast requests (`POST /4/broadcasts/apps/<bundle id>`) and for the
/// channel management API, checked locally before anything is sent, as `NotificationRules`
/// does for device notifications.
///
/// Facts implemented here: `docs/apns.md`, "Broadcast push and channels". Where Apple's pages
/// leave something open, the choice is stated at the rule.
public enum BroadcastRules {
    /// A broadcast's payload limit in bytes (Apple: 5 KB for broadcasts, whatever the push
    /// type table says for device Live Activity updates).
    public static let maxPayloadBytes = 5120
    /// Longest channel id accepted. Apple says not to assume the size (its examples are 24
    /// characters); this bound only keeps a garbage argument from becoming a huge header.
    public static let maxChannelIdBytes = 256
    /// Longest bundle id accepted (Apple's own limit is 155 characters; this bounds garbage).
    public static let maxBundleIdBytes = 255
    /// The only push type a broadcast or a channel may have.
    public static let pushType = PushType.liveactivity
    /// The `push-type` value in channel management bodies. Apple writes `LiveActivity` there,
    /// while the broadcast header is `liveactivity`: each is sent exactly as Apple documents it.
    public static let channelPushTypeName = "LiveActivity"

    /// A channel id must be non-empty base64 (RFC 4648 alphabet `A-Z a-z 0-9 + /`, `=` padding
    /// only at the end, length a multiple of 4). Apple only says "base64"; padded standard
    /// base64 is what its examples and the ids it issues look like, so anything else is a typo
    /// or a token pasted in the wrong place, refused here rather than by APNs (BadChannelId).
    public static func checkChannelId(_ id: UnsafeRawBufferPointer) -> NotificationRules.Violation? {
        if id.isEmpty { return .init(.badChannelId, "channel id is empty") }
        if id.count > maxChannelIdBytes {
            return .init(.badChannelId, "channel id is longer than \(maxChannelIdBytes) bytes")
        }
        if id.count % 4 != 0 {
            return .init(.badChannelId, "channel id is not base64: its length (\(id.count)) is not a multiple of 4")
        }
        var padding = 0
        for (i, c) in id.enumerated() {
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            if padding > 0 || !isBase64(c) {
                return .init(.badChannelId, "channel id is not base64: unexpected character at offset \(i)")
            }
        }
        if padding > 2 { return .init(.badChannelId, "channel id is not base64: more than two '=' of padding") }
        return nil
    }

    /// A bundle id names the app in the request path: non-empty, letters, digits, `.` and `-`
    /// only (so nothing in it can change the path), and without a push-type suffix (a
    /// broadcast's path names the app, not a topic).
    public static func checkBundleId(_ bundle: UnsafeRawBufferPointer) -> NotificationRules.Violation? {
        if bundle.isEmpty {
            return .init(.badTopic, "bundle id is missing (a broadcast's topic is the app's bundle id; set it or PUSH_OPT_DEFAULT_TOPIC)")
        }
        if bundle.count > maxBundleIdBytes { return .init(.badTopic, "bundle id is longer than \(maxBundleIdBytes) bytes") }
        for (i, c) in bundle.enumerated() where !(isAlphanumeric(c) || c == UInt8(ascii: ".") || c == UInt8(ascii: "-")) {
            return .init(.badTopic, "bundle id has a character other than letters, digits, '.' and '-' at offset \(i)")
        }
        let suffix = pushType.topicSuffix.utf8
        if bundle.count >= suffix.count, bundle.suffix(suffix.count).elementsEqual(suffix) {
            return .init(.badTopic, "a broadcast names the app's bundle id, without the \"\(pushType.topicSuffix)\" suffix")
        }
        return nil
    }

    /// A broadcast's priority: 0 means 10; only 10, 5 and 1 exist.
    public static func resolvePriority(_ priority: Int32) -> Result<Int32, NotificationRules.Violation> {
        NotificationRules.resolvePriority(priority, pushType: pushType)
    }

    /// A broadcast payload: one JSON object of at most 5,120 bytes.
    public static func checkPayload(_ payload: UnsafeRawBufferPointer) -> NotificationRules.Violation? {
        NotificationRules.checkPayload(payload, limit: maxPayloadBytes, kind: "a broadcast")
    }

    /// The message storage policy of a channel: 0 (No Message Stored) or 1 (Most Recent
    /// Message Stored).
    public static func checkStoragePolicy(_ policy: Int32) -> NotificationRules.Violation? {
        policy == 0 || policy == 1 ? nil
            : .init(.invalidArgument, "message storage policy must be 0 (no message stored) or 1 (most recent message stored), got \(policy)")
    }

    @inline(__always)
    private static func isAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
    }

    @inline(__always)
    private static func isBase64(_ c: UInt8) -> Bool {
        isAlphanumeric(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "/")
    }
}
