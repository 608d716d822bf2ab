import Foundation
import SwiftPushKit

let env = ProcessInfo.processInfo.environment
var configuration = APNsConfiguration(
    environment: env["APNS_HOST"].map { .custom(host: $0, port: Int(env["APNS_PORT"] ?? "") ?? 443) } ?? .sandbox,
    credentials: .tokenKey(file: "AuthKey_TESTKEY001.p8", keyID: "TESTKEY001", teamID: "TEAM123456"),
    defaultTopic: "com.example.app")
configuration.caFile = env["APNS_CA_FILE"] // nil: the system's trust store

let client = try APNsClient(configuration: configuration)
var alert = PushPayload.Builder()
alert.title = "Hello"
alert.body = "from swiftpush"
let result = try await client.send(PushNotification(
    deviceToken: "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0", payload: PushPayload(alert)))
print(result.outcome, result.status, result.reason?.text ?? "-", result.apnsID)
await client.shutdown() // drains what is in flight, then closes
exit(result.outcome == .accepted ? 0 : 1)
