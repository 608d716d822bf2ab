import COpenSSL
#if canImport(Glibc)
import Glibc
#endif

/// An Apple token-signing key: a P-256 private key from a `.p8` file (PKCS#8 PEM).
///
/// Signs ES256 JWTs (RFC 7518 §3.4): SHA-256, ECDSA on P-256, and the signature as the raw
/// 64-byte r||s (JWS), not the DER that OpenSSL produces.
public final class SigningKey: @unchecked Sendable {
    /// The OpenSSL key; owned, freed on deinit (which also wipes it).
    let pkey: OpaquePointer

    /// Why a key could not be loaded. The message never contains key material.
    public struct LoadError: Error, CustomStringConvertible, Sendable {
        public let description: String
        public init(description: String) { self.description = description }
    }

    /// Loads a `.p8` key from PEM text (copied into `SecretBytes` first, cleared after).
    public convenience init(pem: [UInt8]) throws(LoadError) {
        try self.init(pem: SecretBytes(copying: pem))
    }

    /// Loads a `.p8` key from PEM text held in `SecretBytes`; OpenSSL reads it in place (a
    /// read-only memory BIO), so no other copy of the text is made.
    public init(pem: SecretBytes) throws(LoadError) {
        pkey = try pem.withUnsafeBytes { (raw) throws(LoadError) in try Self.load(raw) }
    }

    private static func load(_ raw: UnsafeRawBufferPointer) throws(LoadError) -> OpaquePointer {
        OpenSSLError.clear()
        guard raw.count <= Int(Int32.max) else { throw LoadError(description: "not a PEM private key (too large)") }
        let key: OpaquePointer? = {
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            // No password to give: without a callback OpenSSL would prompt on the process's
            // terminal for an encrypted key, and wait (Tests/fuzz/corpus/keys/regression-p8-encrypted).
            return PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in -1 }, nil)
        }()
        guard let key else {
            OpenSSLError.clear()
            throw LoadError(description: "not a PEM private key, or an encrypted one (expected an Apple .p8 file: unencrypted PKCS#8 PEM)")
        }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC, EVP_PKEY_get_bits(key) == 256 else {
            EVP_PKEY_free(key)
            throw LoadError(description: "the key is not a P-256 elliptic-curve key (Apple .p8 keys are)")
        }
        var name = [CChar](repeating: 0, count: 64)
        var len = 0
        if EVP_PKEY_get_group_name(key, &name, name.count, &len) == 1 {
            let group = String(decoding: name.prefix(len).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if group != "prime256v1" && group != "P-256" {
                EVP_PKEY_free(key)
                throw LoadError(description: "the key's curve is \(group), not P-256")
            }
        }
        // A .p8 carries its public half beside the private one, and OpenSSL loads the pair
        // without comparing them: a damaged file would sign tokens that APNs refuses (and that
        // `publicKeyPEM` does not verify). Found by fuzzing: Tests/fuzz/corpus/keys/regression-p8-mismatched-halves.
        let ctx = EVP_PKEY_CTX_new_from_pkey(nil, key, nil)
        defer { EVP_PKEY_CTX_free(ctx) }
        guard let ctx, EVP_PKEY_pairwise_check(ctx) == 1 else {
            EVP_PKEY_free(key)
            OpenSSLError.clear()
            throw LoadError(description: "the key is damaged: its private and public halves do not match")
        }
        return key
    }

    deinit { EVP_PKEY_free(pkey) } // EVP_PKEY_free clears private key memory (OPENSSL_clear_free)

    /// Signs `message` with ES256 and returns the 64-byte r||s signature.
    public func signES256(_ message: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let ctx = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { return nil }
        var derLen = 0
        guard EVP_DigestSign(ctx, nil, &derLen, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1 else { return nil }
        var der = [UInt8](repeating: 0, count: derLen)
        guard EVP_DigestSign(ctx, &der, &derLen, message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1 else { return nil }
        return ECDSASignature.derToRaw(Array(der.prefix(derLen)))
    }

    /// The public half as PEM (SubjectPublicKeyInfo), for servers that verify our tokens.
    public func publicKeyPEM() -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { return [] }
        defer { BIO_free(bio) }
        PEM_write_bio_PUBKEY(bio, pkey)
        var ptr: UnsafeMutablePointer<CChar>?
        let n = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &ptr)
        guard n > 0, let ptr else { return [] }
        return Array(UnsafeRawBufferPointer(start: ptr, count: n))
    }
}

/// Conversions between DER ECDSA signatures (OpenSSL) and raw r||s (JWS).
public enum ECDSASignature {
    /// DER `ECDSA-Sig-Value` to 64-byte r||s for P-256; nil if malformed.
    public static func derToRaw(_ der: [UInt8]) -> [UInt8]? {
        der.withUnsafeBytes { raw -> [UInt8]? in
            var p: UnsafePointer<UInt8>? = raw.baseAddress?.assumingMemoryBound(to: UInt8.self)
            guard let sig = d2i_ECDSA_SIG(nil, &p, raw.count) else { return nil }
            defer { ECDSA_SIG_free(sig) }
            var out = [UInt8](repeating: 0, count: 64)
            let ok = out.withUnsafeMutableBufferPointer { o -> Bool in
                BN_bn2binpad(ECDSA_SIG_get0_r(sig), o.baseAddress, 32) == 32
                    && BN_bn2binpad(ECDSA_SIG_get0_s(sig), o.baseAddress! + 32, 32) == 32
            }
            return ok ? out : nil
        }
    }

    /// 64-byte r||s to DER; nil if not 64 bytes.
    public static func rawToDER(_ raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let sig = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(sig) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(sig, r, s) == 1 else { return nil }
        let n = i2d_ECDSA_SIG(sig, nil)
        guard n > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(n))
        _ = out.withUnsafeMutableBufferPointer { b -> Int32 in
            var p: UnsafeMutablePointer<UInt8>? = b.baseAddress
            return i2d_ECDSA_SIG(sig, &p)
        }
        return out
    }
}
