import Foundation // Data(base64Encoded:), to damage a PEM's DER
import PushCore
import PushCrypto
import Testing

/// Inputs that broke a property of the `keys` fuzz harness (Tests/fuzz) before the fix. (The
/// encrypted-key test is in PushTransportTests/PasswordPromptFuzzRegressionTests.swift.)
@Suite("SigningKey fuzz regressions", .timeLimit(.minutes(1)))
struct SigningKeyFuzzRegressionTests {
    /// libFuzzer changed one byte of the private scalar of the test PKI's .p8: the key still
    /// loaded, signed tokens that its own public half (the one inside the file, which
    /// `publicKeyPEM` returns and the mock verifies with) does not verify, and APNs would answer
    /// InvalidProviderToken for every notification instead of the load saying the key is bad.
    /// Corpus: Tests/fuzz/corpus/keys/regression-p8-mismatched-halves.
    @Test("A .p8 whose private half no longer matches its public half is refused at load")
    func refusesMismatchedHalves() throws {
        let pem = try damagingPrivateScalar(TestKey.ec().privateKeyPEM())
        #expect(throws: SigningKey.LoadError.self) { try SigningKey(pem: pem) }
    }

    /// The PEM with the last byte of the private scalar changed (PKCS#8 → ECPrivateKey:
    /// `02 01 01 04 20` then the 32-byte scalar; the public key that follows is left alone).
    private func damagingPrivateScalar(_ pem: [UInt8]) throws -> [UInt8] {
        let lines = String(decoding: pem, as: UTF8.self).split(separator: "\n").map(String.init)
        var der = try #require(Data(base64Encoded: lines.filter { !$0.hasPrefix("-----") }.joined()))
        let marker = Data([0x02, 0x01, 0x01, 0x04, 0x20])
        let at = try #require(der.range(of: marker)).upperBound + 31
        der[at] ^= 0x01
        let body = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return Array("-----BEGIN PRIVATE KEY-----\n\(body)\n-----END PRIVATE KEY-----\n".utf8)
    }
}
