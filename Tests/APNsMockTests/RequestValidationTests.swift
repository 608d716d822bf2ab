import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// Requests as APNs judges them (apns.md, "Request" and "Response"), sent with `nghttp`.
    @Suite(.timeLimit(.minutes(5))) struct RequestValidationTests {
        static let token = TestPKI.token
        /// A token registered for another app (DeviceTokenNotForTopic).
        static let otherAppsToken = String(repeating: "cd", count: 32)
        let pki = TestPKI.shared

        /// Token auth, one allowed topic, and `otherAppsToken` registered to another app.
        func startServer(_ adjust: (inout MockServer.Configuration) -> Void = { _ in }) throws -> MockServer {
            try pki.startServer {
                $0.allowedTopics = ["com.example.app"]
                $0.deviceTokenTopics = [Self.otherAppsToken: "com.example.other"]
                adjust(&$0)
            }
        }

        @Test("A valid request is answered 200 with a lowercase UUID apns-id and no body")
        func accepted() throws {
            let server = try startServer()
            defer { server.stop() }
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)", headers: try pki.validHeaders(),
                                payloadFile: pki.payloadFile)
            #expect(r.status == 200, "\(r.output)")
            let id = try #require(r.apnsId)
            #expect(Array(id.utf8).withUnsafeBytes { NotificationRules.checkApnsId($0) } == nil)
            #expect(id == id.lowercased())
            #expect(r.reason == nil)
            #expect(r.uniqueId == nil, "apns-unique-id belongs to the development environment only")
            #expect(server.stats().accepted == 1)
        }

        @Test("The request's own apns-id is echoed")
        func echoesApnsId() throws {
            let server = try startServer()
            defer { server.stop() }
            let id = "123e4567-e89b-42d3-a456-426614174000"
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)",
                                headers: try pki.validHeaders() + ["apns-id: \(id)"], payloadFile: pki.payloadFile)
            #expect(r.status == 200)
            #expect(r.apnsId == id)
        }

        @Test("In development mode every answer carries a fresh lowercase apns-unique-id")
        func developmentUniqueId() throws {
            let server = try startServer { $0.developmentMode = true }
            defer { server.stop() }
            var seen: Set<String> = []
            for path in ["/3/device/\(Self.token)", "/3/device/xyz"] {
                let r = Tool.nghttp(port: server.port, path: path, headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
                let unique = try #require(r.uniqueId, "\(r.output)")
                #expect(Array(unique.utf8).withUnsafeBytes { NotificationRules.checkApnsId($0) } == nil)
                #expect(unique == unique.lowercased())
                #expect(unique != r.apnsId)
                seen.insert(unique)
            }
            #expect(seen.count == 2)
        }

        /// One malformed request and the answer APNs gives it.
        struct RejectionCase: Sendable, CustomTestStringConvertible {
            enum Auth: Sendable { case valid, none, wrongKey, expired, garbage }
            enum Body: Sendable { case normal, empty, oversized, oversizedVoip }
            var name: String
            var path = "/3/device/" + RequestValidationTests.token
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
            RejectionCase(name: "2-byte token → 400 BadDeviceToken", path: "/3/device/abcd", status: 400, reason: "BadDeviceToken"),
            RejectionCase(name: "1026-digit token → 400 BadDeviceToken", path: "/3/device/" + String(repeating: "ab", count: 513),
                          status: 400, reason: "BadDeviceToken"),
            RejectionCase(name: "empty token → 400 MissingDeviceToken", path: "/3/device/", status: 400, reason: "MissingDeviceToken"),
            RejectionCase(name: "no token segment → 400 MissingDeviceToken", path: "/3/device", status: 400, reason: "MissingDeviceToken"),
            RejectionCase(name: "no apns-topic → 400 MissingTopic", headers: [], status: 400, reason: "MissingTopic"),
            RejectionCase(name: "other path → 404 BadPath", path: "/2/device/" + RequestValidationTests.token, status: 404, reason: "BadPath"),
            RejectionCase(name: "GET → 405 MethodNotAllowed", headers: ["apns-topic: com.example.app", ":method: GET"],
                          status: 405, reason: "MethodNotAllowed"),
            RejectionCase(name: "4097-byte payload → 413 PayloadTooLarge", body: .oversized, status: 413, reason: "PayloadTooLarge"),
            RejectionCase(name: "5121-byte voip payload → 413 PayloadTooLarge",
                          headers: ["apns-topic: com.example.app.voip", "apns-push-type: voip"], body: .oversizedVoip,
                          status: 413, reason: "PayloadTooLarge"),
            RejectionCase(name: "empty payload → 400 PayloadEmpty", body: .empty, status: 400, reason: "PayloadEmpty"),
            RejectionCase(name: "unknown push type → 400 InvalidPushType",
                          headers: ["apns-topic: com.example.app", "apns-push-type: banana"], status: 400, reason: "InvalidPushType"),
            RejectionCase(name: "voip without .voip topic → 400 BadTopic",
                          headers: ["apns-topic: com.example.app", "apns-push-type: voip"], status: 400, reason: "BadTopic"),
            RejectionCase(name: "liveactivity without its suffix → 400 BadTopic",
                          headers: ["apns-topic: com.example.app.voip", "apns-push-type: liveactivity"], status: 400, reason: "BadTopic"),
            RejectionCase(name: "topic with a space → 400 BadTopic", headers: ["apns-topic: com.example app"], status: 400, reason: "BadTopic"),
            RejectionCase(name: "topic not allowed → 400 TopicDisallowed", headers: ["apns-topic: com.forbidden.app"],
                          status: 400, reason: "TopicDisallowed"),
            RejectionCase(name: "token of another app → 400 DeviceTokenNotForTopic",
                          path: "/3/device/" + RequestValidationTests.otherAppsToken, status: 400, reason: "DeviceTokenNotForTopic"),
            RejectionCase(name: "background at priority 10 → 400 BadPriority",
                          headers: ["apns-topic: com.example.app", "apns-push-type: background", "apns-priority: 10"],
                          status: 400, reason: "BadPriority"),
            RejectionCase(name: "priority 7 → 400 BadPriority", headers: ["apns-topic: com.example.app", "apns-priority: 7"],
                          status: 400, reason: "BadPriority"),
            RejectionCase(name: "malformed apns-id → 400 BadMessageId",
                          headers: ["apns-topic: com.example.app", "apns-id: not-a-uuid"], status: 400, reason: "BadMessageId"),
            RejectionCase(name: "65-byte collapse id → 400 BadCollapseId",
                          headers: ["apns-topic: com.example.app", "apns-collapse-id: " + String(repeating: "c", count: 65)],
                          status: 400, reason: "BadCollapseId"),
            RejectionCase(name: "non-numeric expiration → 400 BadExpirationDate",
                          headers: ["apns-topic: com.example.app", "apns-expiration: tomorrow"], status: 400, reason: "BadExpirationDate"),
            RejectionCase(name: "negative expiration → 400 BadExpirationDate",
                          headers: ["apns-topic: com.example.app", "apns-expiration: -5"], status: 400, reason: "BadExpirationDate"),
            RejectionCase(name: "repeated apns-topic → 400 DuplicateHeaders",
                          headers: ["apns-topic: com.example.app", "apns-topic: com.example.other"], status: 400, reason: "DuplicateHeaders"),
            RejectionCase(name: "no authorization → 403 MissingProviderToken", auth: .none, status: 403, reason: "MissingProviderToken"),
            RejectionCase(name: "JWT from the wrong key → 403 InvalidProviderToken", auth: .wrongKey, status: 403, reason: "InvalidProviderToken"),
            RejectionCase(name: "not a JWT → 403 InvalidProviderToken", auth: .garbage, status: 403, reason: "InvalidProviderToken"),
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
            case .garbage: headers.append("authorization: bearer not.a.jwt")
            }
            let file: String
            switch c.body {
            case .normal: file = pki.payloadFile
            case .empty: file = pki.file(named: "empty.json", bytes: [])
            case .oversized: file = pki.file(named: "big.json", bytes: Array(repeating: UInt8(ascii: "x"), count: 4097))
            case .oversizedVoip: file = pki.file(named: "bigvoip.json", bytes: Array(repeating: UInt8(ascii: "x"), count: 5121))
            }
            let r = Tool.nghttp(port: server.port, path: c.path, headers: headers, payloadFile: file)
            #expect(r.status == c.status, "\(r.output)")
            #expect(r.reason == c.reason, "\(r.output)")
            #expect(r.apnsId != nil)
            #expect(server.stats().rejectedByReason == [c.reason: 1])
            #expect(server.record().map(\.reason) == [c.reason])
        }

        @Test("Every 400 reason APNs can give for a request is among the cases above")
        func everyReasonCovered() {
            let covered = Set(Self.rejections.map(\.reason))
            let requestReasons = APNsReason.allCases.filter {
                [400, 404, 405, 413].contains($0.httpStatus) && $0 != .idleTimeout // IdleTimeout ends connections, not requests
                    && !BroadcastMockTests.broadcastOnlyReasons.contains($0) // covered there
            }
            for r in requestReasons { #expect(covered.contains(r.text), "no test for \(r.text)") }
        }

        @Test("Device tokens of 16 to 200 bytes are accepted, in either case", arguments: [32, 64, 160, 400])
        func tokenLengths(_ digits: Int) throws {
            let server = try startServer()
            defer { server.stop() }
            let token = String(repeating: "0f", count: digits / 2).uppercased()
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(token)", headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(r.status == 200, "\(r.output)")
            #expect(server.record().first?.deviceToken == token)
        }

        @Test("A device token shorter than 16 bytes or longer than 200 is malformed: 400 BadDeviceToken",
              arguments: [4, 8, 30, 402, 512])
        func malformedTokenLengths(_ digits: Int) throws {
            let server = try startServer()
            defer { server.stop() }
            let token = String(repeating: "0f", count: digits / 2)
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(token)", headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(r.status == 400, "\(r.output)")
            #expect(r.reason == "BadDeviceToken", "\(r.output)")
        }

        @Test("lenientDeviceTokens (--lenient-device-tokens) accepts any length, but still not odd lengths or non-hex",
              arguments: [4, 8, 512])
        func lenientTokenLengths(_ digits: Int) throws {
            let server = try startServer { $0.lenientDeviceTokens = true }
            defer { server.stop() }
            let token = String(repeating: "0f", count: digits / 2)
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(token)", headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
            #expect(r.status == 200, "\(r.output)")
            for bad in ["abc", "xyzw"] {
                let b = Tool.nghttp(port: server.port, path: "/3/device/\(bad)", headers: try pki.validHeaders(), payloadFile: pki.payloadFile)
                #expect(b.reason == "BadDeviceToken", "\(bad): \(b.output)")
            }
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

        @Test("Each push type is accepted with its topic suffix", arguments: PushType.allCases)
        func pushTypeSuffixes(_ type: PushType) throws {
            let server = try startServer()
            defer { server.stop() }
            var headers = ["apns-topic: com.example.app" + type.topicSuffix, "apns-push-type: \(type.headerValue)",
                           "authorization: " + (try pki.authorization())]
            if type == .background { headers.append("apns-priority: 5") }
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)", headers: headers, payloadFile: pki.payloadFile)
            #expect(r.status == 200, "\(type.headerValue): \(r.output)")
        }

        @Test("A background push without apns-priority gets its default, 5")
        func backgroundDefaultPriority() throws {
            let server = try startServer()
            defer { server.stop() }
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)",
                                headers: ["apns-topic: com.example.app", "apns-push-type: background",
                                          "authorization: " + (try pki.authorization())],
                                payloadFile: pki.payloadFile)
            #expect(r.status == 200, "\(r.output)")
        }

        @Test("A token configured as unregistered gets 410 Unregistered with its timestamp")
        func unregistered() throws {
            let server = try startServer { $0.unregisteredDeviceTokens = [Self.token: 1_700_000_000_123] }
            defer { server.stop() }
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(Self.token)", headers: try pki.validHeaders(),
                                payloadFile: pki.payloadFile)
            #expect(r.status == 410)
            #expect(r.output.contains(#"{"reason":"Unregistered","timestamp":1700000000123}"#), "\(r.output)")
        }
    }
}
