import Foundation
import SwiftPushKit

/// The body of `POST /notify`.
struct NotifyRequest: Decodable {
    /// The device token (hex digits).
    var token: String
    /// A simple alert's text; or give `payload`.
    var alert: String?
    /// The whole APNs payload, sent as given.
    var payload: JSONValue?
    /// `apns-topic` (default: the service's `APNS_TOPIC`).
    var topic: String?
    /// `apns-push-type` (default alert).
    var pushType: String?

    enum CodingKeys: String, CodingKey {
        case token, alert, payload, topic, pushType = "push_type"
    }

    /// The notification it asks for; throws `PushError` (a 400) when it asks for none.
    func notification() throws -> PushNotification {
        let body: PushPayload
        switch (alert, payload) {
        case (let text?, nil):
            var builder = PushPayload.Builder()
            builder.body = text
            body = try PushPayload(builder)
        case (nil, let json?):
            body = try PushPayload(encoding: json)
        default:
            throw PushError(.badPayload, "give either \"alert\" or \"payload\"")
        }
        var type = APNsPushType.alert
        if let pushType {
            guard let named = APNsPushType(headerValue: pushType) else {
                throw PushError(.badPushType, "unknown push_type \"\(pushType)\"")
            }
            type = named
        }
        return PushNotification(deviceToken: token, payload: body, pushType: type, topic: topic)
    }
}

/// Any JSON value, to take a payload as the client wrote it and encode it again.
enum JSONValue: Codable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try n == n.rounded() && abs(n) < 1e15 ? c.encode(Int64(n)) : c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}
