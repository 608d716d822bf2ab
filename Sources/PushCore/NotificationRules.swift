/// Apple's rules for the fields of a notification request, checked locally before anything is
/// sent, so a bad notification is refused at send with a precise message instead of costing a
/// round trip (and APNs's patience: it closes connections that produce many errors).
///
/// Facts implemented here: `docs/apns.md`, "Request" table.
public enum NotificationRules {
    /// Longest device token accepted, in hex digits. Apple says not to assume the size (today
    /// 64); this bound only keeps a garbage argument from becoming a huge request path.
    public static let maxDeviceTokenHexDigits = 512
    /// `apns-collapse-id` limit in bytes.
    public static let maxCollapseIdBytes = 64
    /// Longest topic accepted (bundle ids are far shorter; this only bounds garbage).
    public static let maxTopicBytes = 255

    /// A rule that a notification broke: the C status code and a message naming the field and
    /// the rule.
    public typealias Violation = StatusError

    /// A device token must be a non-empty, even-length string of hex digits.
    public static func checkDeviceToken(_ token: UnsafeRawBufferPointer) -> Violation? {
        if token.isEmpty { return Violation(.badDeviceToken, "device token is empty") }
        if token.count > maxDeviceTokenHexDigits {
            return Violation(.badDeviceToken, "device token is longer than \(maxDeviceTokenHexDigits) hex digits")
        }
        if token.count % 2 != 0 {
            return Violation(.badDeviceToken, "device token has an odd number of hex digits (\(token.count))")
        }
        for (i, c) in token.enumerated() where JSON.hexValue(c) == nil {
            return Violation(.badDeviceToken, "device token has a non-hex character at offset \(i)")
        }
        return nil
    }

    /// A topic must be present, printable ASCII without spaces, and end with the suffix that the
    /// push type requires (voip: `.voip`, liveactivity: `.push-type.liveactivity`, ...).
    public static func checkTopic(_ topic: UnsafeRawBufferPointer, pushType: PushType) -> Violation? {
        if topic.isEmpty {
            return Violation(.badTopic, "topic is missing (set it on the notification or PUSH_OPT_DEFAULT_TOPIC)")
        }
        if topic.count > maxTopicBytes { return Violation(.badTopic, "topic is longer than \(maxTopicBytes) bytes") }
        for c in topic where c <= 0x20 || c >= 0x7F {
            return Violation(.badTopic, "topic has a space, control or non-ASCII character")
        }
        let suffix = pushType.topicSuffix.utf8
        if !suffix.isEmpty {
            let ok = topic.count > suffix.count && topic.suffix(suffix.count).elementsEqual(suffix)
            if !ok {
                return Violation(.badTopic, "push type \(pushType.headerValue) needs a topic ending in \"\(pushType.topicSuffix)\"")
            }
        }
        return nil
    }

    /// Resolves the priority: 0 means the push type's default; only 10, 5 and 1 exist, and
    /// background notifications must use 5.
    public static func resolvePriority(_ priority: Int32, pushType: PushType) -> Result<Int32, Violation> {
        let p = priority == 0 ? pushType.defaultPriority : priority
        guard p == 10 || p == 5 || p == 1 else {
            return .failure(Violation(.badPriority, "priority must be 10, 5 or 1 (got \(priority))"))
        }
        if pushType == .background && p != 5 {
            return .failure(Violation(.badPriority, "background notifications must use priority 5 (got \(p))"))
        }
        return .success(p)
    }

    /// A payload must be non-empty, within the push type's size limit, and one well-formed UTF-8
    /// JSON object.
    public static func checkPayload(_ payload: UnsafeRawBufferPointer, pushType: PushType) -> Violation? {
        checkPayload(payload, limit: pushType.payloadLimit, kind: pushType.headerValue)
    }

    /// As `checkPayload(_:pushType:)`, with the size limit of `kind` (a broadcast's differs
    /// from its push type's). `kind` is a StaticString so that naming it costs nothing unless
    /// a message is written: every send checks its payload here, and making a String of it
    /// showed in profiles.
    public static func checkPayload(_ payload: UnsafeRawBufferPointer, limit: Int, kind: StaticString) -> Violation? {
        if payload.isEmpty { return Violation(.badPayload, "payload is empty") }
        if payload.count > limit {
            return Violation(.payloadTooLarge, "payload is \(payload.count) bytes; \(kind) allows \(limit)")
        }
        var first = 0
        while first < payload.count, payload[first] == 0x20 || payload[first] == 0x0A || payload[first] == 0x0D || payload[first] == 0x09 {
            first += 1
        }
        if first == payload.count || payload[first] != UInt8(ascii: "{") {
            return Violation(.badPayload, "payload must be a JSON object")
        }
        if let failure = JSON.validate(payload) {
            return Violation(.badPayload, "payload is not valid JSON: \(failure.message) at byte \(failure.offset)")
        }
        return nil
    }

    /// A collapse id may be at most 64 bytes, and being an HTTP/2 field value it may not hold
    /// NUL, CR or LF (RFC 9113 §8.2.1: APNs would reset the stream as malformed).
    public static func checkCollapseId(_ id: UnsafeRawBufferPointer) -> Violation? {
        if id.count > maxCollapseIdBytes {
            return Violation(.badCollapseId, "collapse id is \(id.count) bytes; at most \(maxCollapseIdBytes) allowed")
        }
        if id.contains(where: { $0 == 0 || $0 == 0x0A || $0 == 0x0D }) {
            return Violation(.badCollapseId, "collapse id has a NUL, CR or LF byte (not allowed in an HTTP/2 header value)")
        }
        return nil
    }

    /// An apns-id must be a canonical UUID (8-4-4-4-12 hex digits).
    ///
    /// Every request the mock serves and every caller-chosen id goes through here. The digits of a
    /// random UUID are as often letters as numbers, so a per-character `switch` mispredicts about
    /// one branch in three (0.12 µs a request, 4% of the mock's time in `make bench`): the check
    /// is a bit test per character, accumulated without branching, and the loop over the
    /// characters runs again to name the offset only when something is wrong.
    public static func checkApnsId(_ id: UnsafeRawBufferPointer) -> Violation? {
        guard id.count == 36 else { return Violation(.badApnsId, "apns-id must be a 36-character UUID") }
        var allowed: UInt8 = 1
        for i in 0..<36 {
            allowed &= uuidCharacterAllowed(id[i], at: i)
        }
        if allowed == 1 { return nil }
        let offset = (0..<36).first { uuidCharacterAllowed(id[$0], at: $0) == 0 } ?? 0
        return Violation(.badApnsId, "apns-id is not a canonical UUID (offset \(offset))")
    }

    /// Bit c set: byte c is a hex digit (0-9, a-f, A-F). All are below 128.
    private static let hexDigitBits: UInt128 = 0x0000007E0000007E_03FF000000000000
    /// Bit i set: offset i of a canonical UUID is a dash (8, 13, 18, 23).
    private static let uuidDashBits: UInt64 = 1 << 8 | 1 << 13 | 1 << 18 | 1 << 23

    /// 1 when `c` may stand at offset `i` (0..<36) of a canonical UUID, else 0; no branches.
    @inline(__always)
    private static func uuidCharacterAllowed(_ c: UInt8, at i: Int) -> UInt8 {
        let dash = UInt8(truncatingIfNeeded: uuidDashBits >> UInt64(i)) & 1
        let isDash: UInt8 = c == UInt8(ascii: "-") ? 1 : 0
        let isHex = UInt8(truncatingIfNeeded: hexDigitBits >> UInt128(c & 0x7F)) & 1 & (1 &- (c >> 7))
        return dash & isDash | (1 &- dash) & isHex
    }

    /// Expiration is UNIX seconds; 0 means "try once". Negative values are refused.
    public static func checkExpiration(_ seconds: Int64) -> Violation? {
        seconds < 0 ? Violation(.badExpiration, "expiration must be 0 (try once) or UNIX seconds, got \(seconds)") : nil
    }
}
