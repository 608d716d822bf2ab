import Foundation
import PushCore
import PushCrypto
import Testing

@Suite("SigningKey", .timeLimit(.minutes(1)))
struct SigningKeyTests {
    @Test("A P-256 private key in PKCS#8 PEM, like an Apple .p8 file, loads")
    func loadsP256PKCS8() throws {
        let pem = try TestKey.ec().privateKeyPEM()
        #expect(String(decoding: pem, as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        _ = try SigningKey(pem: pem)
    }

    @Test("The public half of a loaded key is the public half of the key it was made from")
    func publicKeyMatches() throws {
        let key = try TestKey.ec()
        let signing = try SigningKey(pem: key.privateKeyPEM())
        #expect(signing.publicKeyPEM() == (try key.publicKeyPEM()))
    }

    @Test("An RSA key is refused with a LoadError")
    func rejectsRSA() throws {
        let pem = try TestKey.rsa().privateKeyPEM()
        #expect(throws: SigningKey.LoadError.self) { try SigningKey(pem: pem) }
    }

    @Test("Elliptic-curve keys on curves other than P-256 are refused", arguments: ["P-384", "secp256k1"])
    func rejectsOtherCurves(curve: String) throws {
        let pem = try TestKey.ec(curve: curve).privateKeyPEM()
        #expect(throws: SigningKey.LoadError.self) { try SigningKey(pem: pem) }
    }

    @Test("Garbage, empty input, a public key and a truncated PEM are refused with a LoadError")
    func rejectsGarbage() throws {
        let pem = try TestKey.ec().privateKeyPEM()
        let inputs: [[UInt8]] = [
            [], utf8("not a key"), randomBytes(300),
            Array(pem.prefix(pem.count / 2)),
            try TestKey.ec().publicKeyPEM(),
        ]
        for input in inputs {
            #expect(throws: SigningKey.LoadError.self) { try SigningKey(pem: input) }
        }
    }

    @Test("A load error never repeats the rejected input")
    func errorDoesNotEchoInput() throws {
        let secret = "-----BEGIN PRIVATE KEY-----\nU0VDUkVUU0VDUkVUU0VDUkVU\n-----END PRIVATE KEY-----\n"
        do {
            _ = try SigningKey(pem: utf8(secret))
            Issue.record("garbage PEM accepted")
        } catch {
            #expect(!error.description.contains("U0VDUkVU"))
            #expect(!error.description.isEmpty)
        }
    }

    @Test("ES256 signatures are 64 bytes and verify with OpenSSL against the public key")
    func signaturesVerify() throws {
        let key = try TestKey.ec()
        let signing = try SigningKey(pem: key.privateKeyPEM())
        let message = utf8("header.claims")
        let raw = try #require(message.withUnsafeBytes { signing.signES256($0) })
        #expect(raw.count == 64)
        let der = try #require(ECDSASignature.rawToDER(raw))
        #expect(key.verifyES256(message: message, derSignature: der))
        #expect(!key.verifyES256(message: utf8("header.claimz"), derSignature: der))
    }

    @Test("Signing the same message twice gives different signatures that both verify")
    func signaturesAreRandomized() throws {
        let key = try TestKey.ec()
        let signing = try SigningKey(pem: key.privateKeyPEM())
        let message = utf8("same message")
        let a = try #require(message.withUnsafeBytes { signing.signES256($0) })
        let b = try #require(message.withUnsafeBytes { signing.signES256($0) })
        #expect(a != b)
        #expect(key.verifyES256(message: message, derSignature: try #require(ECDSASignature.rawToDER(a))))
        #expect(key.verifyES256(message: message, derSignature: try #require(ECDSASignature.rawToDER(b))))
    }

    @Test("A signature does not verify under a different key")
    func otherKeyDoesNotVerify() throws {
        let signing = try SigningKey(pem: TestKey.ec().privateKeyPEM())
        let other = try TestKey.ec()
        let message = utf8("m")
        let raw = try #require(message.withUnsafeBytes { signing.signES256($0) })
        #expect(!other.verifyES256(message: message, derSignature: try #require(ECDSASignature.rawToDER(raw))))
    }
}
