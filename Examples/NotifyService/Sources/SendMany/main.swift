import Foundation
import SwiftPushKit

// APNsEngine: the full rate, on a thread of your own (a worker loop, a benchmark).
let env = ProcessInfo.processInfo.environment
var configuration = APNsConfiguration(
    environment: env["APNS_HOST"].map { .custom(host: $0, port: Int(env["APNS_PORT"] ?? "") ?? 443) } ?? .sandbox,
    credentials: .tokenKey(file: "AuthKey_TESTKEY001.p8", keyID: "TESTKEY001", teamID: "TEAM123456"),
    defaultTopic: "com.example.app")
configuration.caFile = env["APNS_CA_FILE"]

let engine = try APNsEngine(configuration: configuration)
let payload = PushPayload(json: #"{"aps":{"alert":"Hello"}}"#) // shared by every notification
let token = "00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0"
var rest = (0..<10_000).map { TaggedNotification(tag: UInt64($0), notification: PushNotification(deviceToken: token, payload: payload)) }[...]
var results: [TaggedResult] = []
var accepted = 0, done = 0
while done < 10_000 {
    let submission = engine.submit(rest)                                  // never waits: as many as fit
    rest = rest.dropFirst(submission.accepted)
    if let error = submission.error, error.code != .queueFull { print(error); rest = rest.dropFirst() } // a broken rule
    guard case .results(let n) = engine.take(into: &results, timeout: .milliseconds(100)) else { continue }
    accepted += results.filter { $0.result.outcome == .accepted }.count // results[i].tag says which
    done += n
    results.removeAll(keepingCapacity: true)
}
engine.close(drain: .seconds(5))
print("\(accepted) of \(done) accepted")
exit(accepted == done ? 0 : 1)
