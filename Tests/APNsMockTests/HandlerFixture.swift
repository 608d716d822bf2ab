import Testing
import PushCore
@testable import APNsMock

/// What the request handlers and authenticators need, made in memory: the settings of a mock
/// configuration, its faults, and a manual clock; and requests recorded on a `MockStream` the way
/// a connection records them (`RequestValidation.record` per header), without a socket.
struct HandlerFixture {
    let pki = TestPKI.shared
    /// The server's clock, moved by the test.
    let clock: ManualClock
    let mockClock: MockClock
    let settings: MockSettings
    let mailbox: FaultMailbox
    let faults: FaultState

    /// Token keys TESTKEY001 (team TEAM123456) and WRONGKEY01 (team TEAM654321); `adjust` changes
    /// the rest of the configuration.
    init(faults initialFaults: MockFaults = MockFaults(), _ adjust: (inout MockServer.Configuration) -> Void = { _ in }) throws {
        var c = try pki.mockConfiguration()
        c.tokenKeys.append(try MockServer.TokenKey(keyID: TestPKI.otherKeyID, teamID: TestPKI.otherTeamID, file: pki.wrongAuthKey))
        adjust(&c)
        clock = ManualClock(wallSeconds: SystemClock.shared.wallSeconds())
        mockClock = MockClock(clock)
        settings = MockSettings(c, verifier: try JWTVerifier(keys: c.tokenKeys, maxAgeSeconds: c.tokenMaxAgeSeconds))
        mailbox = FaultMailbox(initialFaults)
        faults = FaultState(mailbox: mailbox)
    }

    /// A token connection's authenticator.
    func tokenAuthenticator() -> TokenAuthenticator {
        TokenAuthenticator(settings: settings, clock: mockClock, faults: faults)
    }

    /// The chain of a connection authenticated by `authenticator`.
    func chain(_ authenticator: any MockAuthenticator) -> MockRequestChain {
        MockRequestChain(authenticator: authenticator, settings: settings, faults: faults)
    }

    /// `bearer <jwt>` issued `age` seconds before the manual clock's now (another key and team
    /// when `otherTeam`).
    func authorization(age: Int64 = 0, otherTeam: Bool = false) throws -> String {
        otherTeam
            ? try pki.authorization(keyFile: pki.wrongAuthKey, keyID: TestPKI.otherKeyID, teamID: TestPKI.otherTeamID,
                                    age: age, now: clock.wallSeconds())
            : try pki.authorization(age: age, now: clock.wallSeconds())
    }

    /// The headers of a valid alert for `com.example.app`.
    static let alertHeaders: [RequestHeader: String] = [.topic: "com.example.app", .pushType: "alert"]

    /// A complete request as its stream records it: `method` and `path`, then `headers` (in
    /// `RequestHeader` order), `authorization` as `authenticator` notes it, and a payload of
    /// `bodyBytes`.
    func request(path: String = "/3/device/" + TestPKI.token, method: String = "POST",
                 headers: [RequestHeader: String] = Self.alertHeaders, authorization: String? = nil,
                 authenticator: (any MockAuthenticator)? = nil, bodyBytes: Int = 25) -> MockStream {
        let s = MockStream()
        s.reset(streamID: 1, serial: 1)
        func record(_ h: RequestHeader, _ value: String) {
            Array(value.utf8).withUnsafeBytes { RequestValidation.record(h, $0, on: s) }
        }
        record(.method, method)
        record(.path, path)
        for (h, v) in headers.sorted(by: { $0.key.rawValue < $1.key.rawValue }) { record(h, v) }
        if let authorization, let authenticator {
            Array(authorization.utf8).withUnsafeBytes { authenticator.noteAuthorization($0, on: s) }
        }
        s.bodyBytes = bodyBytes
        return s
    }
}
