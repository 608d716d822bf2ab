import Foundation
import PushCore
import PushCrypto
import Synchronization
import Testing

@Suite("ProviderToken", .timeLimit(.minutes(1)))
struct ProviderTokenTests {
    static let start: Int64 = 1_700_000_000

    /// The parts of a `bearer <jwt>` header value.
    struct JWT {
        let header: [String: Any]
        let claims: [String: Any]
        let signingInput: [UInt8]
        let signature: [UInt8]
        let partCount: Int
    }

    private func parse(_ headerValue: [UInt8]) throws -> JWT {
        let text = String(decoding: headerValue, as: UTF8.self)
        #expect(text.hasPrefix("bearer "))
        let jwt = text.dropFirst("bearer ".count)
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        for p in parts {
            #expect(p.utf8.allSatisfy { c in
                (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) || c == 0x2D || c == 0x5F
            }, "base64url without padding")
        }
        let header = try #require(Base64URL.decode(utf8(String(parts[0]))))
        let claims = try #require(Base64URL.decode(utf8(String(parts[1]))))
        let signature = try #require(Base64URL.decode(utf8(String(parts[2]))))
        return JWT(
            header: try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any]),
            claims: try #require(try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any]),
            signingInput: utf8(String(parts[0]) + "." + String(parts[1])),
            signature: signature,
            partCount: parts.count)
    }

    private func makeToken(clock: ManualClock) throws -> (ProviderToken, TestKey) {
        let key = try TestKey.ec()
        let token = try ProviderToken(key: SigningKey(pem: key.privateKeyPEM()), keyID: "ABC123DEFG", teamID: "DEF123GHIJ", clock: clock)
        return (token, key)
    }

    @Test("The first token is signed at once: generation 1, issued at the clock's time")
    func signsAtInit() throws {
        let clock = ManualClock(wallSeconds: Self.start)
        let (token, _) = try makeToken(clock: clock)
        #expect(token.generation == 1)
        #expect(token.issuedAt == Self.start)
        #expect(token.headerValue == token.current())
    }

    @Test("The token is a three-part ES256 JWT with kid, iss and iat that verifies against the public key")
    func tokenIsValidES256JWT() throws {
        let clock = ManualClock(wallSeconds: Self.start)
        let (token, key) = try makeToken(clock: clock)
        let jwt = try parse(token.current())
        #expect(jwt.header.count == 2)
        #expect(jwt.header["alg"] as? String == "ES256")
        #expect(jwt.header["kid"] as? String == "ABC123DEFG")
        #expect(jwt.claims.count == 2)
        #expect(jwt.claims["iss"] as? String == "DEF123GHIJ")
        #expect((jwt.claims["iat"] as? NSNumber)?.int64Value == Self.start)
        #expect(jwt.signature.count == 64)
        let der = try #require(ECDSASignature.rawToDER(jwt.signature))
        #expect(key.verifyES256(message: jwt.signingInput, derSignature: der))
    }

    @Test("current() returns the same token until it is 50 minutes old")
    func reusesTokenBeforeRefreshAge() throws {
        let clock = ManualClock(wallSeconds: Self.start)
        let (token, _) = try makeToken(clock: clock)
        let first = token.current()
        clock.advance(seconds: ProviderToken.refreshAge - 1)
        #expect(token.current() == first)
        #expect(token.generation == 1)
        #expect(token.issuedAt == Self.start)
    }

    @Test("current() signs a new token with a new iat once the old one is 50 minutes old")
    func refreshesAtRefreshAge() throws {
        #expect(ProviderToken.refreshAge == 50 * 60)
        let clock = ManualClock(wallSeconds: Self.start)
        let (token, key) = try makeToken(clock: clock)
        let first = token.current()
        clock.advance(seconds: ProviderToken.refreshAge)
        let second = token.current()
        #expect(second != first)
        #expect(token.generation == 2)
        #expect(token.issuedAt == Self.start + 50 * 60)
        let jwt = try parse(second)
        #expect((jwt.claims["iat"] as? NSNumber)?.int64Value == Self.start + 50 * 60)
        #expect(key.verifyES256(message: jwt.signingInput, derSignature: try #require(ECDSASignature.rawToDER(jwt.signature))))
        // And the new token is kept until it in turn ages.
        clock.advance(seconds: 60)
        #expect(token.current() == second)
        #expect(token.generation == 2)
    }

    @Test("An ExpiredProviderToken answer re-signs a token however young (the 20-minute rule is for routine refreshes)")
    func expiryResignsYoungToken() throws {
        #expect(ProviderToken.minimumAge == 20 * 60)
        let clock = ManualClock(wallSeconds: Self.start)
        let (token, key) = try makeToken(clock: clock)
        let first = token.current()
        clock.advance(seconds: 5)
        #expect(token.expiredRejection(generation: 1) == .resigned)
        #expect(token.generation == 2)
        #expect(token.issuedAt == Self.start + 5)
        let jwt = try parse(token.current())
        #expect(key.verifyES256(message: jwt.signingInput, derSignature: try #require(ECDSASignature.rawToDER(jwt.signature))))
        #expect(token.current() != first)
        // A late report about the replaced token changes nothing.
        #expect(token.expiredRejection(generation: 1) == .alreadyReplaced)
        #expect(token.generation == 2)
    }

    @Test("A token signed after an expiry and refused as expired too is not re-signed: the verdict names the clock")
    func freshTokenRefusedSuspectsClock() throws {
        let clock = ManualClock(wallSeconds: Self.start)
        let (token, _) = try makeToken(clock: clock)
        #expect(token.expiredRejection(generation: 1) == .resigned)
        clock.advance(seconds: 2)
        #expect(token.expiredRejection(generation: 2) == .clockSuspect(iat: Self.start, localTime: Self.start + 2))
        #expect(token.expiredRejection(generation: 2) == .clockSuspect(iat: Self.start, localTime: Self.start + 2))
        #expect(token.generation == 2, "no churn while the clock is suspect")
        let text = ProviderToken.clockSuspectText(iat: Self.start, localTime: Self.start + 2)
        #expect(text.contains("check this host's clock"))
        #expect(text.contains("iat=\(Self.start)"))
        // Once a request with it is accepted, a later expiry may re-sign again.
        token.accepted(generation: 2)
        #expect(token.expiredRejection(generation: 2) == .resigned)
        #expect(token.generation == 3)
    }

    @Test("Threads sharing a token (a client's I/O threads) re-sign it once for one rejection, and read value and generation together")
    func sharedByThreads() throws {
        let clock = ManualClock(wallSeconds: Self.start)
        let (token, _) = try makeToken(clock: clock)
        let refreshed = Atomic<Int>(0)
        // Counted on the threads, checked here: an expectation made on a Dispatch thread has no
        // test to belong to (Swift Testing records it for «unknown» test; this one passes).
        let torn = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if token.expiredRejection(generation: 1) == .resigned { refreshed.wrappingAdd(1, ordering: .relaxed) }
            for _ in 0..<100 {
                let (value, generation) = token.currentWithGeneration()
                if !(generation == 2 ? value == token.headerValue : generation == 1) { torn.wrappingAdd(1, ordering: .relaxed) }
            }
        }
        #expect(torn.load(ordering: .relaxed) == 0, "reads whose value and generation did not go together")
        #expect(refreshed.load(ordering: .relaxed) == 1, "one re-sign, not one per thread")
        #expect(token.generation == 2)
    }

    @Test("After an expiry re-sign, the next scheduled refresh is 50 minutes after the new iat")
    func scheduleRestartsAfterRejection() throws {
        let clock = ManualClock(wallSeconds: Self.start)
        let (token, _) = try makeToken(clock: clock)
        clock.advance(seconds: 30 * 60)
        #expect(token.expiredRejection(generation: 1) == .resigned)
        let renewed = token.current()
        clock.advance(seconds: 50 * 60 - 1)
        #expect(token.current() == renewed)
        clock.advance(seconds: 1)
        #expect(token.current() != renewed)
        #expect(token.generation == 3)
    }

    @Test("Key and team ids must be non-empty printable ASCII without quotes or backslashes", arguments: [
        ("", "DEF123GHIJ"), ("ABC123DEFG", ""), ("ABC 123", "DEF123GHIJ"), ("ABC\"123", "DEF123GHIJ"),
        ("ABC123DEFG", "DEF\\123"), ("ABC123DEFG", "D\u{e9}F"),
    ])
    func rejectsBadIDs(keyID: String, teamID: String) throws {
        let key = try SigningKey(pem: TestKey.ec().privateKeyPEM())
        #expect(throws: ProviderToken.SignError.self) {
            try ProviderToken(key: key, keyID: keyID, teamID: teamID, clock: ManualClock(wallSeconds: Self.start))
        }
    }
}
