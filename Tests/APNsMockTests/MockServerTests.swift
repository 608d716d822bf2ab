import Foundation
import Testing
import PushCore
@testable import APNsMock

/// The mock driven by independent HTTP/2 clients (`nghttp`, `h2load`), checking the APNs
/// behaviour of apns.md. Serialized: each test runs client processes against its own server.
@Suite(.serialized)
struct MockServerTests {
    static let token = String(repeating: "ab", count: 32)
    let pki = TestPKI.shared

    /// A running server with token auth; stopped by the caller.
    func startServer(_ adjust: (inout MockServer.Configuration) -> Void = { _ in }) throws -> MockServer {
        var config = try pki.mockConfiguration()
        adjust(&config)
        let server = MockServer(configuration: config)
        try server.start()
        return server
    }

    var payload: String { pki.file(named: "payload.json", bytes: Array(#"{"aps":{"alert":"hello"}}"#.utf8)) }

    @Test("A valid request is answered 200 with a lowercase UUID apns-id and no body")
    func accepted() throws {
        let server = try startServer()
        defer { server.stop() }
        let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)",
                            headers: ["apns-topic: com.example.app", "apns-push-type: alert",
                                      "authorization: " + (try pki.authorization())],
                            payloadFile: payload)
        #expect(r.status == 200, "\(r.output)")
        let id = try #require(r.apnsId)
        #expect(Array(id.utf8).withUnsafeBytes { NotificationRules.checkApnsId($0) } == nil)
        #expect(id == id.lowercased())
        #expect(r.reason == nil)
        #expect(server.stats().accepted == 1)
    }

    @Test("The request's own apns-id is echoed")
    func echoesApnsId() throws {
        let server = try startServer()
        defer { server.stop() }
        let id = "123e4567-e89b-42d3-a456-426614174000"
        let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)",
                            headers: ["apns-topic: com.example.app", "apns-id: \(id)",
                                      "authorization: " + (try pki.authorization())],
                            payloadFile: payload)
        #expect(r.status == 200)
        #expect(r.apnsId == id)
    }

    /// One malformed request and the answer APNs gives it.
    struct RejectionCase: Sendable, CustomTestStringConvertible {
        enum Auth: Sendable { case valid, none, wrongKey, expired }
        enum Body: Sendable { case normal, empty, oversized }
        var name: String
        var path = "/3/device/" + MockServerTests.token
        var headers = ["apns-topic: com.example.app"]
        var auth = Auth.valid
        var body = Body.normal
        var status: Int
        var reason: String
        var testDescription: String { name }
    }

    static let rejections: [RejectionCase] = [
        RejectionCase(name: "non-hex token → 400 BadDeviceToken", path: "/3/device/xyz", status: 400, reason: "BadDeviceToken"),
        RejectionCase(name: "odd-length token → 400 BadDeviceToken", path: "/3/device/abc", status: 400, reason: "BadDeviceToken"),
        RejectionCase(name: "empty token → 400 MissingDeviceToken", path: "/3/device/", status: 400, reason: "MissingDeviceToken"),
        RejectionCase(name: "no apns-topic → 400 MissingTopic", headers: [], status: 400, reason: "MissingTopic"),
        RejectionCase(name: "other path → 404 BadPath", path: "/2/device/" + MockServerTests.token, status: 404, reason: "BadPath"),
        RejectionCase(name: "GET → 405 MethodNotAllowed", headers: ["apns-topic: com.example.app", ":method: GET"],
                      status: 405, reason: "MethodNotAllowed"),
        RejectionCase(name: "4097-byte payload → 413 PayloadTooLarge", body: .oversized, status: 413, reason: "PayloadTooLarge"),
        RejectionCase(name: "empty payload → 400 PayloadEmpty", body: .empty, status: 400, reason: "PayloadEmpty"),
        RejectionCase(name: "unknown push type → 400 InvalidPushType",
                      headers: ["apns-topic: com.example.app", "apns-push-type: banana"], status: 400, reason: "InvalidPushType"),
        RejectionCase(name: "voip without .voip topic → 400 BadTopic",
                      headers: ["apns-topic: com.example.app", "apns-push-type: voip"], status: 400, reason: "BadTopic"),
        RejectionCase(name: "background at priority 10 → 400 BadPriority",
                      headers: ["apns-topic: com.example.app", "apns-push-type: background", "apns-priority: 10"],
                      status: 400, reason: "BadPriority"),
        RejectionCase(name: "malformed apns-id → 400 BadMessageId",
                      headers: ["apns-topic: com.example.app", "apns-id: not-a-uuid"], status: 400, reason: "BadMessageId"),
        RejectionCase(name: "65-byte collapse id → 400 BadCollapseId",
                      headers: ["apns-topic: com.example.app", "apns-collapse-id: " + String(repeating: "c", count: 65)],
                      status: 400, reason: "BadCollapseId"),
        RejectionCase(name: "non-numeric expiration → 400 BadExpirationDate",
                      headers: ["apns-topic: com.example.app", "apns-expiration: tomorrow"], status: 400, reason: "BadExpirationDate"),
        RejectionCase(name: "repeated apns-topic → 400 DuplicateHeaders",
                      headers: ["apns-topic: com.example.app", "apns-topic: com.example.other"], status: 400, reason: "DuplicateHeaders"),
        RejectionCase(name: "no authorization → 403 MissingProviderToken", auth: .none, status: 403, reason: "MissingProviderToken"),
        RejectionCase(name: "JWT from the wrong key → 403 InvalidProviderToken", auth: .wrongKey, status: 403, reason: "InvalidProviderToken"),
        RejectionCase(name: "JWT issued two hours ago → 403 ExpiredProviderToken", auth: .expired, status: 403, reason: "ExpiredProviderToken"),
    ]

    @Test("Malformed requests get APNs's status and reason", arguments: rejections)
    func rejected(_ c: RejectionCase) throws {
        let server = try startServer()
        defer { server.stop() }
        var headers = c.headers
        switch c.auth {
        case .valid: headers.append("authorization: " + (try pki.authorization()))
        case .none: break
        case .wrongKey: headers.append("authorization: " + (try pki.authorization(keyFile: pki.wrongAuthKey)))
        case .expired: headers.append("authorization: " + (try pki.authorization(age: 7200)))
        }
        let file: String
        switch c.body {
        case .normal: file = payload
        case .empty: file = pki.file(named: "empty.json", bytes: [])
        case .oversized: file = pki.file(named: "big.json", bytes: Array(repeating: UInt8(ascii: "x"), count: 4097))
        }
        let r = Tool.nghttp(port: server.port, path: c.path, headers: headers, payloadFile: file)
        #expect(r.status == c.status, "\(r.output)")
        #expect(r.reason == c.reason, "\(r.output)")
        #expect(r.apnsId != nil)
        #expect(server.stats().rejectedByReason == [c.reason: 1])
    }

    @Test("A voip payload may be 5120 bytes")
    func voipLimit() throws {
        let server = try startServer()
        defer { server.stop() }
        let big = pki.file(named: "voip.json", bytes: Array(repeating: UInt8(ascii: "x"), count: 5120))
        let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)",
                            headers: ["apns-topic: com.example.app.voip", "apns-push-type: voip",
                                      "authorization: " + (try pki.authorization())],
                            payloadFile: big)
        #expect(r.status == 200, "\(r.output)")
    }

    @Test("A token marked unregistered gets 410 Unregistered with its timestamp")
    func unregistered() throws {
        let server = try startServer { $0.unregisteredDeviceTokens = [Self.token: 1_700_000_000_123] }
        defer { server.stop() }
        let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)",
                            headers: ["apns-topic: com.example.app", "authorization: " + (try pki.authorization())],
                            payloadFile: payload)
        #expect(r.status == 410)
        #expect(r.output.contains(#"{"reason":"Unregistered","timestamp":1700000000123}"#), "\(r.output)")
    }

    @Test("Connections start at one stream; after the first 200 h2load gets 100 concurrent streams")
    func streamLimitRaised() throws {
        let server = try startServer()
        defer { server.stop() }
        let first = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)",
                                headers: ["apns-topic: com.example.app", "authorization: " + (try pki.authorization())],
                                payloadFile: payload)
        #expect(first.output.contains("recv SETTINGS"))
        #expect(first.output.contains("[SETTINGS_MAX_CONCURRENT_STREAMS(0x03):1]"), "\(first.output)")

        let result = Tool.h2load(["-n", "2000", "-c", "1", "-m", "100", "-t", "1",
                                  "-H", "apns-topic: com.example.app", "-H", "apns-push-type: alert",
                                  "-H", "authorization: " + (try pki.authorization()), "-d", payload,
                                  "https://127.0.0.1:\(server.port)/3/device/\(Self.token)"])
        #expect(result.succeeded == 2000, "\(result.output)")
        #expect(result.failed == 0)
        let stats = server.stats()
        #expect(stats.peakConcurrentStreams > 1, "the limit was never raised: \(stats)")
        #expect(stats.peakConcurrentStreams <= 100)
        #expect(stats.accepted == 2001)
        #expect(stats.connections == 2)
    }

    @Test("stop() closes the port and keeps the counters")
    func stop() throws {
        let server = try startServer()
        let port = server.port
        server.stop()
        let r = Tool.nghttp(port: port, path: "/3/device/\(Self.token)", headers: [], payloadFile: payload)
        #expect(r.status == nil)
        #expect(server.stats().requests == 0)
        server.stop() // a second stop does nothing
    }

    @Test("A certificate file that does not exist fails start() with its name")
    func badCertificate() throws {
        var config = try pki.mockConfiguration()
        config.certificateChainFile = "/nonexistent/server.pem"
        let server = MockServer(configuration: config)
        #expect(throws: MockServer.StartError.self) { try server.start() }
    }
}
