import Testing
import PushCore
@testable import APNsMock

/// The request handlers one by one, and the chain's order, on requests recorded in memory
/// (no socket, no nghttp2). The wire-level behaviour is in RequestValidationTests and
/// FaultInjectionTests.
@Suite(.timeLimit(.minutes(1))) struct RequestHandlerTests {
    static let otherToken = String(repeating: "cd", count: 32)

    // MARK: ServerFaultHandler

    @Test("With no fault on requests, the server fault handler passes (a delay alone is not a request fault)")
    func noRequestFaults() throws {
        var faults = MockFaults()
        faults.responseDelayMillis = 20
        let f = try HandlerFixture(faults: faults)
        let handler = ServerFaultHandler(faults: f.faults)
        for _ in 0..<3 { #expect(handler.handle(f.request(), role: .apns) == .pass) }
    }

    @Test("Every Nth request stalls or fails, counted over every request of the server, whatever it is")
    func everyNth() throws {
        var faults = MockFaults()
        faults.stallEveryNth = 3
        faults.status500EveryNth = 2
        let f = try HandlerFixture(faults: faults)
        let handler = ServerFaultHandler(faults: f.faults)
        let verdicts = (0..<6).map { i in
            handler.handle(f.request(path: i % 2 == 0 ? "/3/device/" + TestPKI.token : "/nowhere"), role: .apns)
        }
        #expect(verdicts == [.pass, .answer(.internalServerError), .stall, .answer(.internalServerError), .pass, .stall])
    }

    @Test("A listed stall token stalls whatever its case; others pass")
    func stallTokens() throws {
        var faults = MockFaults()
        faults.stallTokens = [TestPKI.token.uppercased()]
        let f = try HandlerFixture(faults: faults)
        let handler = ServerFaultHandler(faults: f.faults)
        #expect(handler.handle(f.request(), role: .apns) == .stall)
        #expect(handler.handle(f.request(path: "/3/device/" + Self.otherToken), role: .apns) == .pass)
    }

    @Test("Random 500s and 503s repeat with their seed, and new faults restart the sequence")
    func seededRates() throws {
        var faults = MockFaults()
        faults.status500Rate = 0.3
        faults.status503Rate = 0.3
        faults.seed = 42
        let f = try HandlerFixture(faults: faults)
        let handler = ServerFaultHandler(faults: f.faults)
        let first = (0..<200).map { _ in handler.handle(f.request(), role: .apns) }
        #expect(first.contains(.answer(.internalServerError)) && first.contains(.answer(.serviceUnavailable)) && first.contains(.pass))
        f.mailbox.set(faults)
        f.faults.refresh()
        let again = (0..<200).map { _ in handler.handle(f.request(), role: .apns) }
        #expect(again == first)
    }

    // MARK: ValidationHandler

    @Test("A valid device notification passes validation, for the handlers after it")
    func validPasses() throws {
        let f = try HandlerFixture()
        let handler = ValidationHandler(authenticator: OpenAuthenticator(allowedTopics: []), channels: f.settings.channels)
        #expect(handler.handle(f.request(), role: .apns) == .pass)
        #expect(handler.handle(f.request(bodyBytes: 0), role: .apns) == .answer(.payloadEmpty))
    }

    @Test("Framing comes before authentication, authentication before the fields")
    func framingThenAuthentication() throws {
        let f = try HandlerFixture()
        let handler = ValidationHandler(authenticator: f.tokenAuthenticator(), channels: f.settings.channels)
        #expect(handler.handle(f.request(path: "/3/nowhere"), role: .apns) == .answer(.badPath))
        #expect(handler.handle(f.request(method: "GET"), role: .apns) == .answer(.methodNotAllowed))
        #expect(handler.handle(f.request(headers: [:]), role: .apns) == .answer(.missingProviderToken))
    }

    @Test("TopicDisallowed comes from the authenticator, after BadTopic and before BadPriority")
    func topicFromAuthenticator() throws {
        let f = try HandlerFixture()
        let handler = ValidationHandler(authenticator: OpenAuthenticator(allowedTopics: ["com.example.app"]), channels: f.settings.channels)
        #expect(handler.handle(f.request(headers: [.topic: "com.example.other", .priority: "7"]), role: .apns) == .answer(.topicDisallowed))
        #expect(handler.handle(f.request(headers: [.topic: "com.example.app", .priority: "7"]), role: .apns) == .answer(.badPriority))
        #expect(handler.handle(f.request(headers: [.topic: "com.example.app.voip", .pushType: "voip"]), role: .apns) == .pass)
    }

    @Test("A broadcast is settled by validation (an unknown channel: ChannelNotRegistered)")
    func broadcast() throws {
        let f = try HandlerFixture()
        let handler = ValidationHandler(authenticator: OpenAuthenticator(allowedTopics: []), channels: f.settings.channels)
        let r = f.request(path: "/4/broadcasts/apps/com.example.app",
                          headers: [.channelId: "dHN0LTEyMzQ1Njc4OTAxMjM0NTY=", .pushType: "liveactivity", .priority: "10", .expiration: "0"])
        #expect(handler.handle(r, role: .apns) == .answer(.channelNotRegistered))
    }

    @Test("On the management host a channel request is carried out on the registry and its answer written into the stream")
    func management() throws {
        let f = try HandlerFixture()
        let handler = ValidationHandler(authenticator: OpenAuthenticator(allowedTopics: []), channels: f.settings.channels)
        let r = f.request(path: "/1/apps/com.example.app/channels", headers: [:])
        r.keptBody = Array(#"{"message-storage-policy":1,"push-type":"LiveActivity"}"#.utf8)
        #expect(handler.handle(r, role: .channelManagement) == .answer(.none))
        #expect(f.settings.channels.ids(bundle: "com.example.app").count == 1)
        #expect(String(decoding: UnsafeRawBufferPointer(start: r.headers[0].value, count: 3), as: UTF8.self) == "201")
        #expect(handler.handle(f.request(), role: .channelManagement) == .answer(.badPath), "a device path on the management host")
    }

    // MARK: RegistrationHandler

    @Test("A token registered for another app is DeviceTokenNotForTopic; its own app's other push types are not")
    func tokenTopics() throws {
        let f = try HandlerFixture { $0.deviceTokenTopics = [Self.otherToken.uppercased(): "com.example.other"] }
        let handler = RegistrationHandler(settings: f.settings)
        #expect(handler.handle(f.request(path: "/3/device/" + Self.otherToken), role: .apns) == .answer(.deviceTokenNotForTopic))
        let voip = f.request(path: "/3/device/" + Self.otherToken, headers: [.topic: "com.example.other.voip", .pushType: "voip"])
        #expect(handler.handle(voip, role: .apns) == .pass)
        #expect(handler.handle(f.request(), role: .apns) == .pass, "an unlisted token")
    }

    @Test("A token configured as unregistered is 410 with its timestamp; other paths are not device notifications")
    func unregistered() throws {
        let f = try HandlerFixture { $0.unregisteredDeviceTokens = [TestPKI.token: 1_700_000_000_000] }
        let handler = RegistrationHandler(settings: f.settings)
        #expect(handler.handle(f.request(), role: .apns) == .answer(.unregistered, timestamp: 1_700_000_000_000))
        #expect(handler.handle(f.request(path: "/4/broadcasts/apps/com.example.app"), role: .apns) == .pass)
    }

    // MARK: TokenFaultHandler

    @Test("Tokens scripted as unregistered or too busy get 410 with the timestamp, or 429")
    func tokenFaults() throws {
        var faults = MockFaults()
        faults.unregisteredTokens = [TestPKI.token: 42]
        faults.tooManyRequestsTokens = [Self.otherToken]
        let f = try HandlerFixture(faults: faults)
        let handler = TokenFaultHandler(faults: f.faults)
        #expect(handler.handle(f.request(), role: .apns) == .answer(.unregistered, timestamp: 42))
        #expect(handler.handle(f.request(path: "/3/device/" + Self.otherToken), role: .apns) == .answer(.tooManyRequests))
        #expect(handler.handle(f.request(path: "/3/device/" + String(repeating: "ef", count: 32)), role: .apns) == .pass)
    }

    // MARK: The chain

    @Test("The chain asks the server's faults first: a scripted 500 wins over a malformed request")
    func faultsFirst() throws {
        var faults = MockFaults()
        faults.status500EveryNth = 1
        let f = try HandlerFixture(faults: faults)
        #expect(f.chain(OpenAuthenticator(allowedTopics: [])).decide(f.request(path: "/x"), role: .apns) == .answer(.internalServerError))
    }

    @Test("Validation, then registrations, then token faults; a request every handler passes is accepted")
    func chainOrder() throws {
        var faults = MockFaults()
        faults.unregisteredTokens = [Self.otherToken: 7, TestPKI.token: 8]
        let f = try HandlerFixture(faults: faults) {
            $0.deviceTokenTopics = [Self.otherToken: "com.example.other"]
            $0.unregisteredDeviceTokens = [TestPKI.token: 9]
        }
        let chain = f.chain(OpenAuthenticator(allowedTopics: []))
        #expect(chain.decide(f.request(path: "/3/device/" + Self.otherToken, bodyBytes: 0), role: .apns) == .answer(.payloadEmpty))
        #expect(chain.decide(f.request(path: "/3/device/" + Self.otherToken), role: .apns) == .answer(.deviceTokenNotForTopic))
        let forItsApp = f.request(path: "/3/device/" + Self.otherToken, headers: [.topic: "com.example.other"])
        #expect(chain.decide(forItsApp, role: .apns) == .answer(.unregistered, timestamp: 7), "the scripted 410")
        #expect(chain.decide(f.request(), role: .apns) == .answer(.unregistered, timestamp: 9), "the configured 410 first")
        #expect(chain.decide(f.request(path: "/3/device/" + String(repeating: "ef", count: 32)), role: .apns) == .answer(.none))
    }
}
