import Testing
@testable import PushClientCore
@testable import SwiftPushKit

/// The configuration values: their defaults and ranges are the option table's, every option of
/// the C ABI has a place, and they reach the client's configuration through the C ABI's setters.
@Suite("Configuration", .timeLimit(.minutes(1)))
struct ConfigurationTests {
    @Test("The generated groups' defaults are the option table's (the C ABI's)")
    func defaultsFromTheTable() throws {
        let c = APNsConfiguration(environment: .sandbox, credentials: .certificate(file: "/dev/null"))
        #expect(c.pool.connections == PushOption.connections.defaultInt)
        #expect(c.pool.queueCapacity == PushOption.queueCapacity.defaultInt)
        #expect(c.timing.deadline == .milliseconds(PushOption.deadlineMs.defaultInt))
        #expect(c.recovery.reconnectMaxDelay == .milliseconds(PushOption.reconnectMaxMs.defaultInt))
        #expect(c.recovery.maxAttempts == PushOption.maxAttempts.defaultInt)
    }

    @Test("Every option of the C ABI has a place in the Swift configuration", arguments: PushOption.allCases)
    func everyOptionHasAPlace(option: PushOption) {
        #expect(!APNsConfiguration.setting(for: option).isEmpty)
    }

    @Test("Apple's environments are the C ABI's hosts, on 443")
    func environments() {
        #expect(APNsEnvironment.production.description == "api.push.apple.com:443")
        #expect(APNsEnvironment.sandbox.description == "api.sandbox.push.apple.com:443")
        #expect(APNsEnvironment.custom(host: "localhost", port: 2197).port == 2197)
    }

    @Test("Values reach the client's configuration through the C ABI's setters")
    func mapping() throws {
        var c = KitTestSupport.configuration(port: 2197)
        c.pool.connections = 3
        c.timing.deadline = .seconds(5)
        c.recovery.retryDelay = .milliseconds(250)
        c.proxy = APNsProxy(host: "::1", port: 3128, user: "u", password: "p")
        let client = try c.clientConfiguration()
        #expect(client.pool.connections == 3 && client.timing.deadlineMillis == 5000 && client.recovery.retryDelayMillis == 250)
        #expect(client.endpoint.host == "localhost" && client.endpoint.port == 2197 && client.defaultTopic == Array("com.example.app".utf8))
        #expect(client.endpoint.proxy?.host == "::1" && client.endpoint.proxy?.port == 3128)
        #expect(client.credentials.keyID == "TESTKEY001" && client.credentials.tokenKey != nil)
        #expect(c.proxy?.description == "[::1]:3128")
    }
}
