import Foundation
import Testing
import PushCore
@testable import APNsMock

extension MockTests {
    /// Broadcasts and the channel management API as Apple documents them (apns.md, "Broadcast
    /// push and channels"), sent with the scripted `h2` client, not with our own: each reason the
    /// mock can give, the statuses and headers of each answer, the registry's rules.
    @Suite(.timeLimit(.minutes(5))) struct BroadcastMockTests {
        let pki = TestPKI.shared
        static let bundle = "com.example.app"
        static let update = #"{"aps":{"timestamp":1700000000,"event":"update","content-state":{}}}"#

        /// Token auth, a management listener, at most 2 channels per app, one app without
        /// broadcast push.
        func startServer() throws -> MockServer {
            try pki.startServer {
                $0.channelManagementPort = 0
                $0.channels = ChannelRegistry(limit: 2, disabledBundleIds: ["com.example.disabled"])
            }
        }

        /// One request: method, path, headers (authorization added), body.
        struct Request {
            var method = "POST"
            var path: String
            var headers: [(String, String)]
            var body = ""
        }

        /// Sends `requests` one after another on one connection (one stream at a time: token
        /// connections start at one) and returns the answers in order.
        func exchange(port: Int, _ requests: [Request]) throws -> [H2Probe.Event] {
            let authorization = try pki.authorization()
            var steps: [H2Probe.Step] = []
            for (i, r) in requests.enumerated() {
                steps.append(.send(path: r.path, headers: [("authorization", authorization)] + r.headers, body: r.body, method: r.method))
                steps.append(.wait(answers: i + 1))
            }
            let result = try H2Probe.run(port: port, steps)
            #expect(result.responses.count == requests.count, "\(result)")
            return result.responses
        }

        /// A valid broadcast's headers for `channel`, with `replacing` applied (nil value: removed).
        static func broadcastHeaders(_ channel: String, expiration: String = "0",
                                     replacing: [String: String?] = [:]) -> [(String, String)] {
            var h: [(String, String?)] = [("apns-channel-id", channel), ("apns-push-type", "liveactivity"),
                                          ("apns-expiration", expiration), ("apns-priority", "10")]
            for (name, value) in replacing {
                if let i = h.firstIndex(where: { $0.0 == name }) { h[i].1 = value } else { h.append((name, value)) }
            }
            return h.compactMap { pair in pair.1.map { (pair.0, $0) } }
        }

        func created(_ server: MockServer, bundle: String = Self.bundle, _ policy: ChannelRegistry.StoragePolicy) throws -> String {
            guard case .created(let id) = server.channels.create(bundle: bundle, policy: policy) else {
                Issue.record("the registry refused a channel")
                return ""
            }
            return id
        }

        @Test("A broadcast is answered 200 with its apns-request-id and an apns-unique-id, and recorded with its channel")
        func broadcastAccepted() throws {
            let server = try startServer()
            defer { server.stop() }
            let channel = try created(server, .mostRecentMessageStored)
            let requestId = "0a9e1c52-2f86-4a36-9a31-42c5d8a3e4f1"
            let answers = try exchange(port: server.port, [
                Request(path: "/4/broadcasts/apps/\(Self.bundle)",
                        headers: Self.broadcastHeaders(channel, expiration: "1900000000") + [("apns-request-id", requestId)],
                        body: Self.update),
            ])
            let a = try #require(answers.first)
            #expect(a.status == 200, "\(a)")
            #expect(a.headers?["apns-request-id"] == requestId)
            #expect(a.headers?["apns-unique-id"]?.count == 36)
            #expect(a.headers?["apns-id"] == nil, "a broadcast's answer names the request, not a notification")
            let record = try #require(server.record().first)
            #expect(record.channelId == channel && record.topic == Self.bundle && record.apnsId == requestId)
            #expect(record.deviceToken == "" && record.expiration == 1_900_000_000 && record.pushType == .liveactivity)
        }

        /// Header rules of a broadcast: (header, value or nil for absent, the reason).
        static let headerRules: [(String, String?, String)] = [
            ("apns-channel-id", nil, "MissingChannelId"),
            ("apns-channel-id", "not base64!", "BadChannelId"),
            ("apns-push-type", nil, "MissingPushType"),
            ("apns-push-type", "alert", "InvalidPushType"),
            ("apns-push-type", "Liveactivity", "InvalidPushType"),
            ("apns-priority", nil, "BadPriority"),
            ("apns-priority", "7", "BadPriority"),
            ("apns-expiration", nil, "BadExpirationDate"),
            ("apns-expiration", "soon", "BadExpirationDate"),
            ("apns-request-id", "not-a-uuid", "BadMessageId"),
        ]

        @Test("Each broadcast rule has its reason", arguments: headerRules)
        func broadcastReasons(header: String, value: String?, reason: String) throws {
            let server = try startServer()
            defer { server.stop() }
            let channel = try created(server, .noMessageStored)
            let answers = try exchange(port: server.port, [
                Request(path: "/4/broadcasts/apps/\(Self.bundle)", headers: Self.broadcastHeaders(channel, replacing: [header: value]),
                        body: Self.update),
            ])
            #expect(answers.first?.status == 400 && answers.first?.body == #"{"reason":"\#(reason)"}"#, "\(answers)")
            #expect(answers.first?.headers?["apns-request-id"]?.count == 36, "errors name the request too")
        }

        @Test("Channels: unknown, another app's, no storage with an expiration, disabled app, payload size, method")
        func broadcastAgainstTheRegistry() throws {
            let server = try startServer()
            defer { server.stop() }
            let stored = try created(server, .mostRecentMessageStored)
            let unstored = try created(server, .noMessageStored)
            let path = "/4/broadcasts/apps/\(Self.bundle)"
            let answers = try exchange(port: server.port, [
                Request(path: path, headers: Self.broadcastHeaders("AAAAAAAAAAAAAAAAAAAAAA=="), body: Self.update),
                Request(path: "/4/broadcasts/apps/com.example.other", headers: Self.broadcastHeaders(stored), body: Self.update),
                Request(path: path, headers: Self.broadcastHeaders(unstored, expiration: "1900000000"), body: Self.update),
                Request(path: "/4/broadcasts/apps/com.example.disabled", headers: Self.broadcastHeaders(stored), body: Self.update),
                Request(path: path, headers: Self.broadcastHeaders(stored), body: "{" + String(repeating: " ", count: 5119) + "}"),
                Request(path: path, headers: Self.broadcastHeaders(stored), body: "{" + String(repeating: " ", count: 5118) + "}"),
                Request(path: path, headers: Self.broadcastHeaders(stored), body: ""),
                Request(method: "GET", path: path, headers: Self.broadcastHeaders(stored)),
                Request(path: path, headers: Self.broadcastHeaders(stored, expiration: "1900000000"), body: Self.update),
            ])
            #expect(answers.map { "\($0.status ?? 0) \($0.body ?? "")" } == Self.registryAnswers)
        }

        static let registryAnswers = [
            #"400 {"reason":"ChannelNotRegistered"}"#,
            #"403 {"reason":"TopicMismatch"}"#,
            #"400 {"reason":"BadExpirationDate"}"#,
            #"400 {"reason":"FeatureNotEnabled"}"#,
            #"413 {"reason":"PayloadTooLarge"}"#,
            "200 ",
            #"400 {"reason":"PayloadEmpty"}"#,
            #"405 {"reason":"MethodNotAllowed"}"#,
            "200 ",
        ]

        @Test("Channel management: create 201 with apns-channel-id, read 200, list, delete 204, then ChannelNotRegistered")
        func managementLifeCycle() throws {
            let server = try startServer()
            defer { server.stop() }
            let requestId = "5a1b0c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d"
            let create = Request(path: "/1/apps/\(Self.bundle)/channels", headers: [("apns-request-id", requestId)],
                                 body: #"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#)
            let first = try exchange(port: server.channelManagementPort, [create])
            #expect(first.first?.status == 201 && first.first?.headers?["apns-request-id"] == requestId, "\(first)")
            let id = try #require(first.first?.headers?["apns-channel-id"])
            #expect(Array(id.utf8).withUnsafeBytes { BroadcastRules.checkChannelId($0) } == nil, "base64: \(id)")
            let channels = "/1/apps/\(Self.bundle)/channels"
            let answers = try exchange(port: server.channelManagementPort, [
                Request(method: "GET", path: channels, headers: [("apns-channel-id", id)]),
                Request(method: "GET", path: "/1/apps/\(Self.bundle)/all-channels", headers: []),
                Request(method: "DELETE", path: channels, headers: [("apns-channel-id", id)]),
                Request(method: "GET", path: channels, headers: [("apns-channel-id", id)]),
                Request(method: "DELETE", path: channels, headers: [("apns-channel-id", id)]),
                Request(method: "GET", path: "/1/apps/\(Self.bundle)/all-channels", headers: []),
            ])
            let got = answers.map { "\($0.status ?? 0) \($0.body ?? "")" }
            #expect(got == [
                #"200 {"message-storage-policy":1,"push-type":"LiveActivity"}"#,
                #"200 {"channels":["\#(id)"]}"#,
                "204 ",
                #"400 {"reason":"ChannelNotRegistered"}"#,
                #"400 {"reason":"ChannelNotRegistered"}"#,
                #"200 {"channels":[]}"#,
            ])
            #expect(answers.allSatisfy { $0.headers?["apns-request-id"]?.count == 36 })
            #expect(server.record().isEmpty, "management requests are not notifications: not in the record")
        }

        @Test("Channel management refusals: body, headers, limit, app, method, path, host")
        func managementReasons() throws {
            let server = try startServer()
            defer { server.stop() }
            let channels = "/1/apps/\(Self.bundle)/channels"
            let good = #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#
            let answers = try exchange(port: server.channelManagementPort, [
                Request(path: channels, headers: [], body: "not json"),
                Request(path: channels, headers: [], body: #"{"message-storage-policy":0}"#),
                Request(path: channels, headers: [], body: #"{"message-storage-policy":0,"push-type":"liveactivity"}"#),
                Request(path: channels, headers: [], body: #"{"message-storage-policy":2,"push-type":"LiveActivity"}"#),
                Request(path: channels, headers: [("apns-request-id", "nope")], body: good),
                Request(path: channels, headers: [], body: good),
                Request(path: channels, headers: [], body: good),
                Request(path: channels, headers: [], body: good),
                Request(path: "/1/apps/com.example.disabled/channels", headers: [], body: good),
                Request(method: "GET", path: channels, headers: []),
                Request(method: "GET", path: channels, headers: [("apns-channel-id", "%%%%")]),
                Request(method: "DELETE", path: "/1/apps/\(Self.bundle)/all-channels", headers: []),
                Request(path: "/3/device/\(TestPKI.token)", headers: [("apns-topic", Self.bundle)]),
                Request(path: "/4/broadcasts/apps/\(Self.bundle)", headers: Self.broadcastHeaders("AAAAAAAAAAAAAAAAAAAAAA=="),
                        body: Self.update),
            ])
            #expect(answers.map { "\($0.status ?? 0) \($0.body ?? "")" } == Self.managementAnswers)
            // And the APNs host does not serve the management API.
            let onAPNs = try exchange(port: server.port, [Request(path: channels, headers: [], body: good)])
            #expect(onAPNs.first?.status == 404, "\(onAPNs)")
        }

        static let managementAnswers = [
                #"400 {"reason":"BadRequestPayload"}"#,
                #"400 {"reason":"MissingPushType"}"#,
                #"400 {"reason":"InvalidPushType"}"#,
                #"400 {"reason":"BadRequestPayload"}"#,
                #"400 {"reason":"BadRequestParams"}"#,
                "201 ",
                "201 ",
                #"400 {"reason":"CannotCreateChannelConfig"}"#,
                #"400 {"reason":"FeatureNotEnabled"}"#,
                #"400 {"reason":"MissingChannelId"}"#,
                #"400 {"reason":"BadChannelId"}"#,
                #"405 {"reason":"MethodNotAllowed"}"#,
                #"404 {"reason":"BadPath"}"#,
                #"404 {"reason":"BadPath"}"#,
        ]

        /// The reasons only broadcasts and channel requests get (apns.md, "Broadcast push and
        /// channels"); RequestValidationTests covers the device notifications' ones.
        static let broadcastOnlyReasons: Set<APNsReason> = [.featureNotEnabled, .missingChannelId, .badChannelId,
            .channelNotRegistered, .badRequestParams, .badRequestPayload, .missingPushType, .cannotCreateChannelConfig,
            .topicMismatch]

        @Test("Every broadcast and channel reason is exercised by the cases above")
        func everyReasonCovered() {
            var covered = Set(Self.headerRules.map(\.2))
            for answer in Self.registryAnswers + Self.managementAnswers {
                if let m = answer.firstMatch(of: /"reason":"(\w+)"/) { covered.insert(String(m.1)) }
            }
            for r in Self.broadcastOnlyReasons { #expect(covered.contains(r.text), "no test for \(r.text)") }
        }

        @Test("Channel management needs the same authentication")
        func managementNeedsAToken() throws {
            let server = try startServer()
            defer { server.stop() }
            let result = try H2Probe.run(port: server.channelManagementPort, [
                .send(path: "/1/apps/\(Self.bundle)/all-channels", headers: [], body: "", method: "GET"),
                .wait(answers: 1),
            ])
            #expect(result.responses.first?.status == 403 && result.responses.first?.body == #"{"reason":"MissingProviderToken"}"#,
                    "\(result)")
        }

        @Test("The registry: ids are base64, distinct and never reused; the limit counts live channels per app")
        func registry() {
            let registry = ChannelRegistry(limit: 2)
            var ids: Set<String> = []
            for _ in 0..<2 {
                guard case .created(let id) = registry.create(bundle: "a", policy: .noMessageStored) else {
                    Issue.record("refused under the limit")
                    return
                }
                #expect(Array(id.utf8).withUnsafeBytes { BroadcastRules.checkChannelId($0) } == nil)
                ids.insert(id)
            }
            #expect(registry.create(bundle: "a", policy: .noMessageStored) == .refused(.cannotCreateChannelConfig))
            if case .created(let other) = registry.create(bundle: "b", policy: .noMessageStored) { ids.insert(other) }
            let first = registry.ids(bundle: "a")[0]
            #expect(registry.delete(bundle: "b", id: first) == .topicMismatch)
            #expect(registry.delete(bundle: "a", id: first) == .none)
            if case .created(let again) = registry.create(bundle: "a", policy: .noMessageStored) { ids.insert(again) }
            #expect(ids.count == 4, "a deleted channel's id is not issued again")
            #expect(registry.lookup(bundle: "a", id: first) == .failure(ChannelRegistry.APNsError(.channelNotRegistered)))
        }
    }
}
