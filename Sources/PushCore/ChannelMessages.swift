/// The JSON bodies of the channel management API (apns.md, "Broadcast push and channels"),
/// written and read by the client and by the mock alike:
/// create and read carry `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`, list
/// answers `{"channels": ["<id>", ...]}`.
public enum ChannelMessages {
    /// A channel's configuration, as create sends it and read answers it.
    public struct Configuration: Equatable, Sendable {
        /// 0: No Message Stored; 1: Most Recent Message Stored.
        public var storagePolicy: Int32
        /// Apple writes "LiveActivity" (the only push type channels have).
        public var pushType: String

        /// A configuration with the given policy and push type.
        public init(storagePolicy: Int32, pushType: String = BroadcastRules.channelPushTypeName) {
            self.storagePolicy = storagePolicy
            self.pushType = pushType
        }

        /// The JSON body.
        public var json: [UInt8] {
            Array("{\"message-storage-policy\":\(storagePolicy),\"push-type\":\"\(pushType)\"}".utf8)
        }
    }

    /// Why a body could not be read.
    public enum ReadError: Error, Equatable, Sendable {
        /// Not a JSON object, or a member of the wrong kind (APNs: BadRequestPayload).
        case malformed(String)
        /// No `push-type` member (APNs: MissingPushType).
        case missingPushType

        /// What is wrong, for an error message.
        public var message: String {
            switch self {
            case .malformed(let why): why
            case .missingPushType: "no \"push-type\" member"
            }
        }
    }

    /// Reads a configuration body (a create request, a read answer).
    public static func configuration(_ body: UnsafeRawBufferPointer) -> Result<Configuration, ReadError> {
        let members: [JSON.Member]
        switch JSON.topLevelMembers(body) {
        case .success(let m): members = m
        case .failure(let f): return .failure(.malformed("not a JSON object: \(f.message)"))
        }
        var policy: Int32?
        var pushType: String?
        for m in members {
            let raw = UnsafeRawBufferPointer(rebasing: body[m.value])
            switch m.key {
            case "message-storage-policy":
                guard let p = JSON.decodeInt64(raw), p == 0 || p == 1 else {
                    return .failure(.malformed("message-storage-policy must be 0 or 1"))
                }
                policy = Int32(p)
            case "push-type":
                guard let t = JSON.decodeString(raw) else { return .failure(.malformed("push-type must be a string")) }
                pushType = t
            default:
                continue // members Apple may add later
            }
        }
        guard let pushType else { return .failure(.missingPushType) }
        guard let policy else { return .failure(.malformed("message-storage-policy is missing")) }
        return .success(Configuration(storagePolicy: policy, pushType: pushType))
    }

    /// The list answer's body.
    public static func listJSON(_ ids: [String]) -> [UInt8] {
        var out = Array("{\"channels\":[".utf8)
        for (i, id) in ids.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: id.utf8) // base64: nothing to escape
            out.append(UInt8(ascii: "\""))
        }
        out.append(contentsOf: "]}".utf8)
        return out
    }

    /// The one rule for a channel id in an answer of APNs, a create's `apns-channel-id` and each
    /// id of a list alike: the rule of the ids the library sends (`BroadcastRules.checkChannelId`:
    /// padded standard base64, at most 256 bytes), so that every id handed out can be named in a
    /// broadcast, a read or a delete. Nil when `id` keeps it; else why not, naming it as `what`
    /// ("channel id 2 of the list (\"not base64!\") is not base64: ...").
    public static func answeredIdViolation(_ id: String, _ what: String) -> String? {
        var copy = id
        guard let v = copy.withUTF8({ BroadcastRules.checkChannelId(UnsafeRawBufferPointer($0)) }) else { return nil }
        let why = v.message.hasPrefix("channel id ") ? String(v.message.dropFirst("channel id ".count)) : v.message
        let shown = id.count > 80 ? (String(id.prefix(80)) + "...").debugDescription : id.debugDescription
        return "\(what) (\(shown)) \(why)"
    }

    /// Reads a list answer: the channel ids, or why not. Each id is held to the rule of a
    /// created one (`answeredIdViolation`): an id that breaks it fails the list, naming it and
    /// why (an id the library could not use anyway, and a sign the answer is not what Apple
    /// documents).
    public static func channelIds(_ body: UnsafeRawBufferPointer) -> Result<[String], ReadError> {
        let members: [JSON.Member]
        switch JSON.topLevelMembers(body) {
        case .success(let m): members = m
        case .failure(let f): return .failure(.malformed("not a JSON object: \(f.message)"))
        }
        guard let list = members.first(where: { $0.key == "channels" }) else {
            return .failure(.malformed("no \"channels\" member"))
        }
        // Already validated as JSON: walk the array's string elements.
        var ids: [String] = []
        var i = list.value.lowerBound
        let end = list.value.upperBound
        guard i < end, body[i] == UInt8(ascii: "[") else { return .failure(.malformed("\"channels\" is not an array")) }
        i += 1
        while i < end {
            let c = body[i]
            if c == UInt8(ascii: "\"") {
                var j = i + 1
                while j < end, body[j] != UInt8(ascii: "\"") { j += body[j] == UInt8(ascii: "\\") ? 2 : 1 }
                guard j < end, let s = JSON.decodeString(UnsafeRawBufferPointer(rebasing: body[i...j])) else {
                    return .failure(.malformed("a channel id is not a string"))
                }
                if let why = answeredIdViolation(s, "channel id \(ids.count) of the list") {
                    return .failure(.malformed(why))
                }
                ids.append(s)
                i = j + 1
            } else if c == UInt8(ascii: ",") || c == UInt8(ascii: "]") || c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 {
                i += 1
            } else {
                return .failure(.malformed("\"channels\" holds something other than strings"))
            }
        }
        return .success(ids)
    }
}
