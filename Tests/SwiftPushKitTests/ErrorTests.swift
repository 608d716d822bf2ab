import Testing
@testable import APNsMock
@testable import SwiftPushKit

/// Bad input gets a clear `PushError` with a code and a message naming what was wrong: at
/// open for the configuration, at send for a notification (which then gets no result).
@Suite("Errors", .timeLimit(.minutes(5)))
struct ErrorTests {
    @Test("A configuration value out of its range names the Swift property, with the table's range")
    func configurationRanges() throws {
        var c = KitTestSupport.configuration(port: 2197)
        c.pool.connections = 0
        #expect(throws: PushError(.badOption, "pool.connections must be in 1...64, got 0")) { try APNsClient(configuration: c) }
        c = KitTestSupport.configuration(port: 2197)
        c.timing.deadline = .microseconds(10)
        let e = try #require(throws: PushError.self) { try APNsEngine(configuration: c) }
        #expect(e.code == .badOption && e.message.hasPrefix("timing.deadline must be in 1...86400000 ms"), "\(e)")
        c = KitTestSupport.configuration(port: 0)
        #expect(throws: PushError(.badOption, "environment.port must be in 1...65535, got 0")) { try APNsClient(configuration: c) }
    }

    @Test("Unreadable or wrong credentials are .key errors that name the file and never quote the key")
    func credentials() throws {
        var c = KitTestSupport.configuration(port: 2197)
        c.credentials = .tokenKey(file: "/nonexistent/AuthKey.p8", keyID: "TESTKEY001", teamID: "TEAM123456")
        var e = try #require(throws: PushError.self) { try APNsClient(configuration: c) }
        #expect(e.code == .key && e.message.contains("/nonexistent/AuthKey.p8"), "\(e)")
        c.credentials = .tokenKey(pem: Array("-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n".utf8),
                                  keyID: "TESTKEY001", teamID: "TEAM123456")
        e = try #require(throws: PushError.self) { try APNsClient(configuration: c) }
        #expect(e.code == .key && !e.message.contains("c2VjcmV0"), "\(e)")
        c.credentials = .tokenKey(file: KitTestSupport.pki + "/AuthKey_TESTKEY001.p8", keyID: "", teamID: "TEAM123456")
        e = try #require(throws: PushError.self) { try APNsClient(configuration: c) }
        #expect(e.code == .badOption && e.message == "key id is empty", "\(e)")
        c.credentials = .p12(file: KitTestSupport.pki + "/AuthKey_TESTKEY001.p8", password: "secret")
        e = try #require(throws: PushError.self) { try APNsClient(configuration: c) }
        #expect(e.code == .key && !e.message.contains("secret"), "\(e)")
        #expect(!"\(c.credentials)".contains("secret"))
    }

    @Test("An untrusted server fails waitUntilConnected with .tls at once")
    func untrustedServer() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server) { $0.caFile = nil } // the system's trust store
        await #expect(throws: PushError.self) { try await client.waitUntilConnected(timeout: .seconds(20)) }
        do {
            try await client.waitUntilConnected(timeout: .seconds(20))
        } catch {
            #expect((error as? PushError)?.code == .tls, "\(error)")
        }
        await client.shutdown(drain: .zero)
    }

    /// A notification with one thing wrong, the code it gets, and words its message must hold.
    static let invalid: [(String, @Sendable (inout PushNotification) -> Void, PushError.Code, String)] = [
        ("odd token", { $0.destination = .device(token: "abc") }, .badDeviceToken, "odd number of hex digits"),
        ("not hex", { $0.destination = .device(token: "zz") }, .badDeviceToken, "non-hex character"),
        ("empty token", { $0.destination = .device(token: "") }, .badDeviceToken, "device token is empty"),
        ("voip without .voip", { $0.pushType = .voip }, .badTopic, "\".voip\""),
        ("background at 10", { $0.pushType = .background; $0.priority = .immediately }, .badPriority, "priority 5"),
        ("priority 7", { $0.priority = PushPriority(rawValue: 7) }, .badPriority, "10, 5 or 1"),
        ("not JSON", { $0.payload = PushPayload(json: "{\"aps\":") }, .badPayload, "not valid JSON"),
        ("not an object", { $0.payload = PushPayload(json: "[1]") }, .badPayload, "JSON object"),
        ("empty payload", { $0.payload = PushPayload(json: [UInt8]()) }, .badPayload, "empty"),
        ("too large", { $0.payload = PushPayload(json: "{\"a\":\"" + String(repeating: "x", count: 5000) + "\"}") }, .payloadTooLarge, "allows 4096"),
        ("collapse id", { $0.collapseID = String(repeating: "c", count: 65) }, .badCollapseId, "at most 64"),
        ("expiration", { $0.expiration = PushExpiration(unixSeconds: -1) }, .badExpiration, "expiration"),
        ("deadline", { $0.deadline = .zero }, .invalidArgument, "deadline must be positive"),
        ("broadcast type", { $0.destination = .channel(id: "dHN0LTEyMzQ1Njc4OTAxMg=="); $0.expiration = .immediately }, .badPushType, "LIVEACTIVITY"),
        ("broadcast expiration", { $0 = .broadcast(channel: "dHN0LTEyMzQ1Njc4OTAxMg==", payload: $0.payload, expiration: .immediately); $0.expiration = nil },
         .badExpiration, "apns-expiration"),
        ("broadcast channel", { $0 = .broadcast(channel: "not base64!", payload: $0.payload, expiration: .immediately) }, .badChannelId, "channel"),
    ]

    @Test("An invalid notification is refused at send with the rule it broke, and nothing is sent",
          arguments: 0..<invalid.count)
    func invalidNotifications(case index: Int) async throws {
        let (name, change, code, words) = Self.invalid[index]
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        var note = PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload)
        change(&note)
        do {
            let r = try await client.send(note)
            Issue.record("\(name): sent, \(r)")
        } catch let error as PushError {
            #expect(error.code == code && error.message.contains(words), "\(name): \(error.code): \(error.message)")
        }
        await client.shutdown()
        #expect(server.record().isEmpty)
    }

    @Test("Sending after shutdown throws .closed")
    func closed() async throws {
        let server = try KitTestSupport.startMock()
        defer { server.stop() }
        let client = try KitTestSupport.client(for: server)
        await client.shutdown()
        await client.shutdown() // twice is fine
        await #expect(throws: PushError(.closed, "the client is closed")) {
            try await client.send(PushNotification(deviceToken: KitTestSupport.token, payload: KitTestSupport.payload))
        }
        let batch = await KitTestSupport.collect(client.send(contentsOf: KitTestSupport.notifications(3)))
        #expect(batch.count == 3 && batch.allSatisfy { $0.error?.code == .closed })
    }

    @Test("Codes compare and match as values; a code added later is a value like the others")
    func codes() {
        let e = PushError(.queueFull, "full")
        switch e.code {
        case .queueFull: break
        default: Issue.record("no match")
        }
        #expect(PushError.Code(rawValue: -999) != .queueFull)
        #expect(PushError.Code.badDeviceToken.description == "invalid device token")
        #expect(e.description == "full")
    }
}
