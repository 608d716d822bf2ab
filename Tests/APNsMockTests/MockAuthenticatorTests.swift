import Testing
import PushCore
@testable import APNsMock

/// The three authenticators in memory, on the server's manual clock: provider tokens (apns.md,
/// "Token authentication"), client certificates and none. AuthenticationTests checks the same
/// through a real TLS connection.
@Suite(.timeLimit(.minutes(1))) struct MockAuthenticatorTests {
    /// `authenticator`'s verdict on a device request carrying `authorization` (none: nil).
    func authorize(_ authenticator: any MockAuthenticator, _ f: HandlerFixture, _ authorization: String?) -> (APNsReason, MockStream.Authorization) {
        let r = f.request(authorization: authorization, authenticator: authenticator)
        let noted = r.authorization
        return (authenticator.authorize(r), noted)
    }

    @Test("A token request without authorization is MissingProviderToken; a malformed one InvalidProviderToken")
    func missingAndMalformed() throws {
        let f = try HandlerFixture()
        let auth = f.tokenAuthenticator()
        #expect(authorize(auth, f, nil).0 == .missingProviderToken)
        #expect(authorize(auth, f, "bearer not.a.token").0 == .invalidProviderToken)
    }

    @Test("A genuine token is verified once; the same bytes on later requests are recognised as their header arrives")
    func verifiedOnce() throws {
        let f = try HandlerFixture()
        let auth = f.tokenAuthenticator()
        let token = try f.authorization()
        #expect(authorize(auth, f, token) == (.none, .pending))
        #expect(authorize(auth, f, token) == (.none, .sameAsVerified))
        #expect(authorize(auth, f, token) == (.none, .sameAsVerified))
    }

    @Test("A verified token still ages by the server's clock, read once per input: an hour after its iat it is expired")
    func tokenAges() throws {
        let f = try HandlerFixture()
        let auth = f.tokenAuthenticator()
        let token = try f.authorization()
        #expect(authorize(auth, f, token).0 == .none)
        f.clock.advance(seconds: 3601)
        #expect(authorize(auth, f, token).0 == .none, "the same input: the clock was read for it already")
        f.mockClock.newInput()
        #expect(authorize(auth, f, token).0 == .expiredProviderToken)
    }

    @Test("A connection is bound to its first token's team: another team's genuine token is InvalidProviderToken")
    func boundToTeam() throws {
        let f = try HandlerFixture()
        let other = f.tokenAuthenticator()
        #expect(authorize(other, f, try f.authorization(otherTeam: true)).0 == .none, "the other team's key is known")
        let auth = f.tokenAuthenticator()
        #expect(authorize(auth, f, try f.authorization()).0 == .none)
        #expect(authorize(auth, f, try f.authorization(otherTeam: true)).0 == .invalidProviderToken)
    }

    @Test("A new token sooner than the update interval is TooManyProviderTokenUpdates; the same token signed again is not an update")
    func tokenUpdates() throws {
        let f = try HandlerFixture()
        let auth = f.tokenAuthenticator()
        let first = try f.authorization(age: 10)
        #expect(authorize(auth, f, first).0 == .none)
        #expect(authorize(auth, f, try f.authorization()).0 == .tooManyProviderTokenUpdates, "a newer iat: an update")
        f.clock.advance(seconds: 20 * 60)
        f.mockClock.newInput()
        let later = try f.authorization()
        #expect(authorize(auth, f, later).0 == .none)
        #expect(authorize(auth, f, later).0 == .none)
    }

    @Test("The expire-tokens fault expires every token until its time on the server's clock")
    func expireTokensFault() throws {
        let f = try HandlerFixture()
        var faults = MockFaults()
        faults.expireTokensUntil = f.clock.monotonicNanos() + 2_000_000_000
        f.mailbox.set(faults)
        f.faults.refresh()
        let auth = f.tokenAuthenticator()
        let token = try f.authorization()
        #expect(authorize(auth, f, token).0 == .expiredProviderToken)
        f.clock.advance(seconds: 2)
        f.mockClock.newInput()
        #expect(authorize(auth, f, token).0 == .none)
    }

    @Test("Token connections may push to the configured topics (empty: any)")
    func tokenTopics() throws {
        let f = try HandlerFixture { $0.allowedTopics = ["com.example.app"] }
        let auth = f.tokenAuthenticator()
        let topic = Array("com.example.other".utf8), app = Array("com.example.app".utf8)
        #expect(topic.withUnsafeBytes { t in app.withUnsafeBytes { auth.checkTopic(t, base: $0) } } == .none, "its base topic is allowed")
        #expect(topic.withUnsafeBytes { auth.checkTopic($0, base: $0) } == .topicDisallowed)
    }

    @Test("A certificate authenticates every request, allows its topics, and gives requests without apns-topic its default")
    func certificate() throws {
        let f = try HandlerFixture()
        let auth = CertificateAuthenticator(CertificateTopics(subjectTopic: "com.example.cert", listedTopics: []))
        let r = f.request(headers: [.pushType: "alert"], authorization: "bearer whatever", authenticator: auth)
        #expect(r.authorization == .pending, "the record shows the header was sent")
        #expect(auth.authorize(r) == .none)
        auth.fillDefaults(r)
        #expect(Array(r.topicBytes) == Array("com.example.cert".utf8))
        let given = f.request(headers: [.topic: "com.example.given"])
        auth.fillDefaults(given)
        #expect(Array(given.topicBytes) == Array("com.example.given".utf8), "a topic sent is kept")
        for (topic, reason) in [("com.example.cert.voip", APNsReason.none), ("com.example.app", .topicDisallowed)] {
            #expect(Array(topic.utf8).withUnsafeBytes { auth.checkTopic($0, base: $0) } == reason, "\(topic)")
        }
    }

    @Test("Without keys or a CA every request is authenticated; the configured topics still apply")
    func open() throws {
        let f = try HandlerFixture()
        let auth = OpenAuthenticator(allowedTopics: ["com.example.app"])
        #expect(authorize(auth, f, nil).0 == .none)
        #expect(Array("com.example.x".utf8).withUnsafeBytes { auth.checkTopic($0, base: $0) } == .topicDisallowed)
    }
}
