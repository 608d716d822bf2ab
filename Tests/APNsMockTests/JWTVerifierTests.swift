import Testing
import PushCore
import PushCrypto
import PushTransport
@testable import APNsMock

/// The token checks without a network: apns.md, "Token authentication".
@Suite(.timeLimit(.minutes(5))) struct JWTVerifierTests {
    let pki = TestPKI.shared

    func verifier(maxAge: Int64 = 3600) throws -> JWTVerifier {
        let key = try MockServer.TokenKey(keyID: TestPKI.keyID, teamID: TestPKI.teamID, file: pki.authKey)
        return try JWTVerifier(keys: [key], maxAgeSeconds: maxAge)
    }

    func check(_ v: JWTVerifier, _ header: String, now: Int64 = SystemClock.shared.wallSeconds()) -> APNsReason {
        switch Array(header.utf8).withUnsafeBytes({ v.verify(authorization: $0, now: now) }) {
        case .verified: return .none
        case .rejected(let r): return r
        }
    }

    /// `bearer header.claims.signature` from raw JSON parts, signed with the test key.
    func token(header: String, claims: String, keyFile: String? = nil) throws -> String {
        let key = try SigningKey(path: keyFile ?? pki.authKey)
        let input = Base64URL.encode(Array(header.utf8)) + [UInt8(ascii: ".")] + Base64URL.encode(Array(claims.utf8))
        let sig = try #require(input.withUnsafeBytes { key.signES256($0) })
        return "bearer " + String(decoding: input + [UInt8(ascii: ".")] + Base64URL.encode(sig), as: UTF8.self)
    }

    @Test("A token from ProviderToken verifies")
    func genuine() throws {
        #expect(check(try verifier(), try pki.authorization()) == .none)
    }

    @Test("The verifier also takes the .p8's public PEM")
    func publicPEM() throws {
        let key = try MockServer.TokenKey(keyID: TestPKI.keyID, teamID: TestPKI.teamID, file: pki.authPublicKey)
        let v = try JWTVerifier(keys: [key], maxAgeSeconds: 3600)
        #expect(check(v, try pki.authorization()) == .none)
    }

    @Test("Signed by another key, wrong team, unknown kid, alg none, garbage: InvalidProviderToken")
    func invalid() throws {
        let v = try verifier()
        let now = SystemClock.shared.wallSeconds()
        let header = #"{"alg":"ES256","kid":"TESTKEY001"}"#
        #expect(check(v, try pki.authorization(keyFile: pki.wrongAuthKey)) == .invalidProviderToken)
        #expect(check(v, try token(header: header, claims: #"{"iss":"OTHERTEAM1","iat":\#(now)}"#)) == .invalidProviderToken)
        #expect(check(v, try token(header: #"{"alg":"ES256","kid":"NOSUCHKEY1"}"#, claims: #"{"iss":"TEAM123456","iat":\#(now)}"#)) == .invalidProviderToken)
        #expect(check(v, try token(header: #"{"alg":"none","kid":"TESTKEY001"}"#, claims: #"{"iss":"TEAM123456","iat":\#(now)}"#)) == .invalidProviderToken)
        #expect(check(v, try token(header: header, claims: #"{"iss":"TEAM123456"}"#)) == .invalidProviderToken)
        #expect(check(v, "bearer not.a.jwt") == .invalidProviderToken)
        #expect(check(v, "basic abc") == .invalidProviderToken)
        var tampered = Array(try pki.authorization().utf8)
        tampered[tampered.count - 3] = tampered[tampered.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(check(v, String(decoding: tampered, as: UTF8.self)) == .invalidProviderToken)
    }

    @Test("An iat older than the maximum age: ExpiredProviderToken")
    func expired() throws {
        let v = try verifier(maxAge: 3600)
        #expect(check(v, try pki.authorization(age: 3601)) == .expiredProviderToken)
        #expect(check(v, try pki.authorization(age: 3500)) == .none)
    }
}
