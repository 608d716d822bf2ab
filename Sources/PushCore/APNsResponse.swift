/// Reading APNs error bodies (`{"reason":"...","timestamp":...}`) and GOAWAY debug data
/// (`{"reason":"..."}`), per `../shared/docs/apns.md`, "Response".
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
        return ErrorBody(reason: APNsReason(text: text), reasonText: text, timestampMs: timestamp)
    }

    /// The `reason` of a GOAWAY's debug data: the JSON reason when there is one, else the data
    /// as text (some servers send plain text), cut to 127 bytes.
    public static func reasonText(in data: UnsafeRawBufferPointer) -> String {
        if let body = parseErrorBody(data) { return body.reasonText }
        let text = String(decoding: data.prefix(127), as: UTF8.self)
        return text
    }
}
