import COpenSSL
import PushCore
import PushCrypto

/// A key pair made in memory with OpenSSL for one test (no subprocess, no files), with its PEM
/// encodings and an independent ES256 verifier.
final class TestKey {
    /// Why OpenSSL could not make or encode a key.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let pkey: OpaquePointer

    private init(pkey: OpaquePointer) { self.pkey = pkey }

    deinit { EVP_PKEY_free(pkey) }

    /// A new elliptic-curve key on `curve` ("P-256", "P-384", "secp256k1", ...).
    static func ec(curve: String = "P-256") throws -> TestKey {
        try generate(algorithm: "EC") { ctx in EVP_PKEY_CTX_set_group_name(ctx, curve) }
    }

    /// A new RSA key (small, to keep the test fast: only its type matters).
    static func rsa(bits: Int32 = 1024) throws -> TestKey {
        try generate(algorithm: "RSA") { ctx in EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, bits) }
    }

    private static func generate(algorithm: String, configure: (OpaquePointer) -> Int32) throws -> TestKey {
        OpenSSLError.clear()
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else {
            throw Failure(description: "EVP_PKEY_CTX_new_from_name: " + OpenSSLError.drain())
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1, configure(ctx) == 1 else {
            throw Failure(description: "keygen setup: " + OpenSSLError.drain())
        }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(ctx, &key) == 1, let key else {
            throw Failure(description: "EVP_PKEY_generate: " + OpenSSLError.drain())
        }
        return TestKey(pkey: key)
    }

    /// The private key as PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), like Apple's `.p8` files.
    func privateKeyPEM() throws -> [UInt8] {
        try writePEM { bio in PEM_write_bio_PrivateKey(bio, pkey, nil, nil, 0, nil, nil) }
    }

    /// The public key as SubjectPublicKeyInfo PEM.
    func publicKeyPEM() throws -> [UInt8] {
        try writePEM { bio in PEM_write_bio_PUBKEY(bio, pkey) }
    }

    private func writePEM(_ write: (OpaquePointer) -> Int32) throws -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw Failure(description: "BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) == 1 else { throw Failure(description: "PEM write: " + OpenSSLError.drain()) }
        var ptr: UnsafeMutablePointer<CChar>?
        let n = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &ptr)
        guard n > 0, let ptr else { throw Failure(description: "empty PEM") }
        return Array(UnsafeRawBufferPointer(start: ptr, count: n))
    }

    /// Whether `der` is a valid ECDSA-SHA256 signature of `message` under this key, checked by
    /// OpenSSL directly (not through the library).
    func verifyES256(message: [UInt8], derSignature der: [UInt8]) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
        let result = der.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { msg in
                EVP_DigestVerify(ctx, sig.baseAddress, sig.count, msg.baseAddress, msg.count)
            }
        }
        OpenSSLError.clear()
        return result == 1
    }
}
