import Logging
import Testing
@testable import APNsMock
import SwiftPushKit

/// The few lines a Swift developer writes, as the docs show them (only the environment and the
/// CA point at the mock): a client, an alert built with the payload builder, one send, the
/// result, shutdown.
@Suite("Usage", .timeLimit(.minutes(5)))
struct UsageTests {
    @Test("A client from a configuration value sends one alert and reads its result")
    func fewLines() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let token = KitTestSupport.token
        let key = KitTestSupport.pki + "/AuthKey_TESTKEY001.p8"

        var configuration = APNsConfiguration(environment: .custom(host: "localhost", port: server.port),
                                              credentials: .tokenKey(file: key, keyID: "TESTKEY001", teamID: "TEAM123456"),
                                              defaultTopic: "com.example.app")
        configuration.caFile = KitTestSupport.pki + "/ca.pem"
        let client = try APNsClient(configuration: configuration, logger: Logger(label: "app"))
        var alert = PushPayload.Builder()
        alert.title = "Hello"
        alert.body = "from swiftpush"
        let result = try await client.send(PushNotification(deviceToken: token, payload: PushPayload(alert)))
        print(result.outcome, result.status, result.apnsID, result.reason?.text ?? "")
        await client.shutdown()

        #expect(result.outcome == .accepted && result.status == 200)
    }
}
