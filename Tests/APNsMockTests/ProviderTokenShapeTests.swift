import Foundation
import Testing
import PushCore
import PushCrypto
import PushTransport
@testable import APNsMock

/// Provider tokens shaped as the APNs libraries people test against the mock sign them
/// (docs/mock.md, "Provider tokens"): APNs accepts each, so the mock must too, and it must
/// still refuse a bad signature or an old `iat` whatever the shape.
@Suite struct ProviderTokenShapeTests {
    let pki = TestPKI.shared

    /// One library's header and claims, `NOW` standing for the issue time in seconds.
    struct Shape: Sendable, CustomTestStringConvertible {
        var library: String
        var header: String
        var claims: String
        var testDescription: String { library }
    }

    /// The JSON each library writes (member order and spacing included), from its source.
    static let shapes: [Shape] = [
        // swiftpush's own ProviderToken.
        Shape(library: "swiftpush", header: #"{"alg":"ES256","kid":"TESTKEY001"}"#,
              claims: #"{"iss":"TEAM123456","iat":NOW}"#),
        // APNSwift 5 (APNSCore's token factory): pretty-printed, iat a string, a kid claim, typ.
        Shape(library: "APNSwift", header: "{\n    \"alg\": \"ES256\",\n    \"typ\": \"JWT\",\n    \"kid\": \"TESTKEY001\"\n}",
              claims: "{\n    \"iss\": \"TEAM123456\",\n    \"iat\": \"NOW\",\n    \"kid\": \"TESTKEY001\"\n}"),
        // pushy (Java, Gson): typ between alg and kid.
        Shape(library: "pushy", header: #"{"alg":"ES256","typ":"JWT","kid":"TESTKEY001"}"#,
              claims: #"{"iss":"TEAM123456","iat":NOW}"#),
        // node-apn (jsonwebtoken): iat first.
        Shape(library: "node-apn", header: #"{"alg":"ES256","typ":"JWT","kid":"TESTKEY001"}"#,
              claims: #"{"iat":NOW,"iss":"TEAM123456"}"#),
        // apns2 (Go, golang-jwt): members sorted, as encoding/json writes a map.
        Shape(library: "apns2", header: #"{"alg":"ES256","kid":"TESTKEY001","typ":"JWT"}"#,
              claims: #"{"iat":NOW,"iss":"TEAM123456"}"#),
        // PyAPNs2 (PyJWT): header sorted, iat time.time() with its fraction.
        Shape(library: "PyAPNs2", header: #"{"alg":"ES256","kid":"TESTKEY001","typ":"JWT"}"#,
              claims: #"{"iss":"TEAM123456","iat":NOW.4817293}"#),
    ]

    func verifier() throws -> JWTVerifier {
        let key = try MockServer.TokenKey(keyID: TestPKI.keyID, teamID: TestPKI.teamID, file: pki.authKey)
        return try JWTVerifier(keys: [key], maxAgeSeconds: 3600)
    }

    /// `bearer header.claims.signature`, signed with `keyFile` (the test key by default).
    func token(_ shape: Shape, issuedAt: Int64, keyFile: String? = nil) throws -> String {
        let claims = shape.claims.replacingOccurrences(of: "NOW", with: String(issuedAt))
        let key = try SigningKey(path: keyFile ?? pki.authKey)
        let input = Base64URL.encode(Array(shape.header.utf8)) + [UInt8(ascii: ".")] + Base64URL.encode(Array(claims.utf8))
        let signature = try #require(input.withUnsafeBytes { key.signES256($0) })
        return "bearer " + String(decoding: input + [UInt8(ascii: ".")] + Base64URL.encode(signature), as: UTF8.self)
    }

    func check(_ v: JWTVerifier, _ authorization: String, now: Int64) -> APNsReason {
        switch Array(authorization.utf8).withUnsafeBytes({ v.verify(authorization: $0, now: now) }) {
        case .verified: return .none
        case .rejected(let reason): return reason
        }
    }

    @Test("Each library's token verifies, its iat read as the seconds it says", arguments: shapes)
    func accepted(_ shape: Shape) throws {
        let now = SystemClock.shared.wallSeconds()
        let authorization = try token(shape, issuedAt: now - 60)
        guard case .verified(let issuedAt, let keyID, let teamID) = Array(authorization.utf8).withUnsafeBytes({
            try! verifier().verify(authorization: $0, now: now)
        }) else {
            Issue.record("\(shape.library)'s token refused")
            return
        }
        #expect(issuedAt == now - 60 && keyID == Array(TestPKI.keyID.utf8) && teamID == Array(TestPKI.teamID.utf8))
    }

    @Test("Each shape signed by another key is InvalidProviderToken, and an hour old ExpiredProviderToken", arguments: shapes)
    func refused(_ shape: Shape) throws {
        let now = SystemClock.shared.wallSeconds()
        let v = try verifier()
        #expect(check(v, try token(shape, issuedAt: now - 60, keyFile: pki.wrongAuthKey), now: now) == .invalidProviderToken)
        #expect(check(v, try token(shape, issuedAt: now - 3601), now: now) == .expiredProviderToken)
    }

    @Test("An iat that is no time is InvalidProviderToken: a signed string, an exponent, a boolean, an empty string")
    func badIssuedAt() throws {
        let now = SystemClock.shared.wallSeconds()
        let v = try verifier()
        for iat in [#""-\#(now)""#, "\(now)e0", "true", #""""#, #""\#(now).5""#, "\(now).", "null"] {
            let shape = Shape(library: "bad", header: #"{"alg":"ES256","kid":"TESTKEY001"}"#, claims: #"{"iss":"TEAM123456","iat":\#(iat)}"#)
            #expect(check(v, try token(shape, issuedAt: now), now: now) == .invalidProviderToken, "iat \(iat)")
        }
    }
}

extension MockTests {
    /// A shape that used to be refused, through a real server.
    @Suite struct ProviderTokenOverTheWireTests {
        let pki = TestPKI.shared

        @Test("The mock answers APNSwift's token (iat a string, typ header, kid claim) 200 on a real connection")
        func overTheWire() throws {
            let server = try pki.startServer()
            defer { server.stop() }
            let authorization = try ProviderTokenShapeTests().token(ProviderTokenShapeTests.shapes[1],
                                                                    issuedAt: SystemClock.shared.wallSeconds() - 60)
            let r = Tool.nghttp(port: server.port, path: "/3/device/\(TestPKI.token)",
                                headers: ["apns-topic: com.example.app", "authorization: " + authorization], payloadFile: pki.payloadFile)
            #expect(r.status == 200, "\(r.output)")
        }
    }
}
