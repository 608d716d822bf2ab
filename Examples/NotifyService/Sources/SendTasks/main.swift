import Foundation
import SwiftPushKit

// 1,000 tasks, each awaiting its own sends, on the client's task executor.
let env = ProcessInfo.processInfo.environment
var configuration = APNsConfiguration(
    environment: env["APNS_HOST"].map { .custom(host: $0, port: Int(env["APNS_PORT"] ?? "") ?? 443) } ?? .sandbox,
    credentials: .tokenKey(file: "AuthKey_TESTKEY001.p8", keyID: "TESTKEY001", teamID: "TEAM123456"),
    defaultTopic: "com.example.app")
configuration.caFile = env["APNS_CA_FILE"]

let client = try APNsClient(configuration: configuration)
let payload = PushPayload(json: #"{"aps":{"alert":"Hello"}}"#)
let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
let accepted = await withTaskExecutorPreference(client.taskExecutor) { // the group's tasks inherit it
    await withTaskGroup(of: Int.self) { group in
        for _ in 0..<1_000 {
            group.addTask {
                var accepted = 0
                for _ in 0..<10 { // one at a time, as a request handler would
                    let result = try? await client.send(PushNotification(deviceToken: token, payload: payload))
                    if result?.outcome == .accepted { accepted += 1 }
                }
                return accepted
            }
        }
        var total = 0
        for await n in group { total += n }
        return total
    }
}
await client.shutdown()
print("\(accepted) of 10000 accepted")
exit(accepted == 10_000 ? 0 : 1)
