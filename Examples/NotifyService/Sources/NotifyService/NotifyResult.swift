import Hummingbird
import SwiftPushKit

/// The answer of `POST /notify`: what became of the notification (`PushResult`).
struct NotifyResult: ResponseEncodable {
    /// "accepted", "rejected" or "failed".
    var outcome: String
    /// APNs's HTTP status (0: no answer).
    var status: Int
    /// APNs's reason ("BadDeviceToken", "Unregistered"...) or the library's ("Timeout"); nil when accepted.
    var reason: String?
    /// The notification's apns-id.
    var apnsID: String
    /// For 410 Unregistered: when the token stopped being valid (milliseconds since 1970).
    var timestamp: Int64?
    /// Attempts that may have reached APNs.
    var attempts: Int
    /// From the send to the outcome, in milliseconds.
    var latencyMs: Double

    enum CodingKeys: String, CodingKey {
        case outcome, status, reason, apnsID = "apns_id", timestamp, attempts, latencyMs = "latency_ms"
    }

    init(_ r: PushResult) {
        outcome = "\(r.outcome)"
        status = r.status
        reason = r.reason?.text
        apnsID = r.apnsID.description
        timestamp = r.timestamp
        attempts = r.attempts
        latencyMs = Double(r.latency / .microseconds(1)) / 1000
    }
}
