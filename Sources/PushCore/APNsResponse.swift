/// Reading APNs error bodies (`{"reason":"...","timestamp":...}`) and GOAWAY debug data
/// (`{"reason":"..."}`), per `docs/apns.md`, "Response".
public enum APNsResponse {
    /// The fields of an error body.
    public struct ErrorBody: Equatable, Sendable {
        /// The reason (`.unknown` when APNs sent one that is not in the table).
        public var reason: APNsReason
        /// The reason's text exactly as sent (kept for unknown reasons).
        public var reasonText: String
        /// 410 only: milliseconds since the epoch when APNs learned the token was invalid.
        public var timestampMs: Int64
    }

    /// Parses an error body; nil when it is not a JSON object with a string `reason`.
    public static func parseErrorBody(_ body: UnsafeRawBufferPointer) -> ErrorBody? {
        guard case .success(let members) = JSON.topLevelMembers(body) else { return nil }
        var text: String?
        var timestamp: Int64 = 0
        for m in members {
            let raw = UnsafeRawBufferPointer(rebasing: body[m.value])
            if m.key == "reason" {
                text = JSON.decodeString(raw)
            } else if m.key == "timestamp" {
                timestamp = JSON.decodeInt64(raw) ?? 0
            }
        }
        guard let text else { return nil }
        return ErrorBody(reason: APNsReason(serverText: text), reasonText: text, timestampMs: timestamp)
    }

    /// The `reason` of a GOAWAY's debug data: the JSON reason when there is one, else the data
    /// as text (some servers send plain text); either way at most `maxReasonBytes` bytes, cut
    /// at a scalar boundary, since a peer chooses how long its debug data is.
    public static func reasonText(in data: UnsafeRawBufferPointer) -> String {
        let text = parseErrorBody(data)?.reasonText ?? String(decoding: data.prefix(maxReasonBytes), as: UTF8.self)
        return text.prefix(utf8Bytes: maxReasonBytes)
    }

    /// The longest GOAWAY reason kept, in UTF-8 bytes.
    public static let maxReasonBytes = 127
}

extension String {
    /// The longest prefix of at most `limit` UTF-8 bytes that does not split a Unicode scalar
    /// (reason texts are cut to fixed-size fields; a cut scalar would be invalid UTF-8 there).
    public func prefix(utf8Bytes limit: Int) -> String {
        guard utf8.count > limit else { return self }
        var end = utf8.index(utf8.startIndex, offsetBy: max(limit, 0))
        while end > startIndex && end.samePosition(in: unicodeScalars) == nil {
            end = utf8.index(before: end)
        }
        return String(self[..<end])
    }
}
