import COpenSSL
import PushCore
import PushCrypto

/// Checks provider tokens (the JWT in `authorization: bearer <jwt>`) the way APNs does.
///
/// apns.md, "Token authentication": header `{"alg":"ES256","kid":"<key id>"}`, claims
/// `{"iss":"<team id>","iat":<unix seconds>}`, base64url without padding, signed with the P-256
/// key whose public half the server knows; the signature is raw 64-byte r||s (RFC 7518 §3.4),
/// so it is converted to DER before OpenSSL verifies it. An `iat` older than an hour gets
/// ExpiredProviderToken.
///
/// Token shapes APNs accepts and so the mock too (docs/mock.md, "Provider tokens"): members in
/// any order, other members ignored (a `typ` header, a `kid` claim), and `iat` as a JSON
/// integer, a number with a fraction (PyAPNs2 signs `time.time()`) or a string of digits
/// (APNSwift signs `"iat": "1764201600"`).
///
/// Immutable after init; OpenSSL 3 verifies with a shared `EVP_PKEY` from several threads
/// safely, so one verifier may serve every connection.
final class JWTVerifier: @unchecked Sendable {
    /// A key the server trusts: its team and its public key.
    private struct Entry {
        let teamID: [UInt8]
        let publicKey: OpaquePointer
    }

    private let keys: [[UInt8]: Entry]
    /// Tokens whose `iat` is older than this many seconds are expired.
    let maxAgeSeconds: Int64

    /// What a check found.
    enum Outcome {
        /// The token is genuine and fresh. A connection keeps its `iat` to notice when the
        /// cached token expires, and its key and team to bind itself to the team and to tell
        /// a token update from a repeat.
        case verified(issuedAt: Int64, keyID: [UInt8], teamID: [UInt8])
        /// The 403 reason APNs would give.
        case rejected(APNsReason)
    }

    /// Loads every key's public PEM. Throws a message naming the key id on a bad key.
    init(keys: [MockServer.TokenKey], maxAgeSeconds: Int64) throws(MockServer.StartError) {
        var table: [[UInt8]: Entry] = [:]
        for k in keys {
            OpenSSLError.clear()
            let pkey: OpaquePointer? = k.publicKeyPEM.withUnsafeBytes { raw in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
                defer { BIO_free(bio) }
                return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
            }
            guard let pkey else {
                throw MockServer.StartError("key \(k.keyID): not a PEM public key: " + OpenSSLError.drain())
            }
            guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_EC, EVP_PKEY_get_bits(pkey) == 256 else {
                EVP_PKEY_free(pkey)
                throw MockServer.StartError("key \(k.keyID): not a P-256 key (ES256 needs one)")
            }
            if let old = table[Array(k.keyID.utf8)] { EVP_PKEY_free(old.publicKey) }
            table[Array(k.keyID.utf8)] = Entry(teamID: Array(k.teamID.utf8), publicKey: pkey)
        }
        self.keys = table
        self.maxAgeSeconds = maxAgeSeconds
    }

    deinit {
        for e in keys.values { EVP_PKEY_free(e.publicKey) }
    }

    /// True when no keys are configured: token authentication is off.
    var isEmpty: Bool { keys.isEmpty }

    /// Checks the value of an `authorization` header at time `now` (UNIX seconds). Returns the
    /// verified token, or the 403 reason APNs would give.
    func verify(authorization value: UnsafeRawBufferPointer, now: Int64) -> Outcome {
        // "bearer <jwt>"; the scheme is case-insensitive (RFC 9110 §11.1).
        let scheme = "bearer "
        guard value.count > scheme.utf8.count,
              zip(value.prefix(scheme.utf8.count), scheme.utf8).allSatisfy({ $0 | 0x20 == $1 | 0x20 }) else {
            return .rejected(.invalidProviderToken)
        }
        let jwt = UnsafeRawBufferPointer(rebasing: value[scheme.utf8.count...])
        guard let dot1 = jwt.firstIndex(of: UInt8(ascii: ".")),
              let dot2 = jwt[(dot1 + 1)...].firstIndex(of: UInt8(ascii: ".")),
              jwt[(dot2 + 1)...].firstIndex(of: UInt8(ascii: ".")) == nil else {
            return .rejected(.invalidProviderToken)
        }
        guard let header = Base64URL.decode(jwt[..<dot1]),
              let claims = Base64URL.decode(jwt[(dot1 + 1)..<dot2]),
              let signature = Base64URL.decode(jwt[(dot2 + 1)...]) else {
            return .rejected(.invalidProviderToken)
        }

        // Header: alg must be ES256 (anything else, "none" above all, is refused) and kid known.
        guard case .success(let headerMembers) = JSON.topLevelMembers(header),
              stringMember("alg", in: headerMembers, of: header) == Array("ES256".utf8),
              let kid = stringMember("kid", in: headerMembers, of: header),
              let entry = keys[kid] else {
            return .rejected(.invalidProviderToken)
        }
        // Claims: iss must be the team that owns the key; iat UNIX seconds in one of the
        // shapes providers sign it in.
        guard case .success(let claimMembers) = JSON.topLevelMembers(claims),
              stringMember("iss", in: claimMembers, of: claims) == entry.teamID,
              let iat = issuedAt(in: claimMembers, of: claims) else {
            return .rejected(.invalidProviderToken)
        }
        guard let der = ECDSASignature.rawToDER(signature),
              verifySignature(der, over: UnsafeRawBufferPointer(rebasing: jwt[..<dot2]), key: entry.publicKey) else {
            return .rejected(.invalidProviderToken)
        }
        // Only a genuine token can be expired: the age is checked after the signature.
        if now - iat > maxAgeSeconds { return .rejected(.expiredProviderToken) }
        return .verified(issuedAt: iat, keyID: kid, teamID: entry.teamID)
    }

    private func verifySignature(_ der: [UInt8], over message: UnsafeRawBufferPointer, key: OpaquePointer) -> Bool {
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        OpenSSLError.clear()
        guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, key) == 1 else { return false }
        let ok = EVP_DigestVerify(ctx, der, der.count,
                                  message.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count) == 1
        OpenSSLError.clear()
        return ok
    }

    private func stringMember(_ key: String, in members: [JSON.Member], of doc: [UInt8]) -> [UInt8]? {
        guard let m = members.first(where: { $0.key == key }) else { return nil }
        return doc.withUnsafeBytes { raw in
            JSON.decodeString(UnsafeRawBufferPointer(rebasing: raw[m.value])).map { Array($0.utf8) }
        }
    }

    /// The `iat` claim in whole seconds: a JSON integer (`1764201600`), a number with a
    /// fraction (`1764201600.25`, truncated) or a string of digits (`"1764201600"`). Anything
    /// else (an exponent, a sign in a string, an empty string, a boolean) is no time.
    private func issuedAt(in members: [JSON.Member], of doc: [UInt8]) -> Int64? {
        guard let m = members.first(where: { $0.key == "iat" }) else { return nil }
        return doc.withUnsafeBytes { raw -> Int64? in
            let value = UnsafeRawBufferPointer(rebasing: raw[m.value])
            guard let first = value.first else { return nil }
            if first == UInt8(ascii: "\"") {
                guard let text = JSON.decodeString(value), !text.isEmpty,
                      text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
                return Int64(text)
            }
            guard let dot = value.firstIndex(of: UInt8(ascii: ".")) else { return JSON.decodeInt64(value) }
            let fraction = value[(dot + 1)...]
            guard !fraction.isEmpty, fraction.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return JSON.decodeInt64(UnsafeRawBufferPointer(rebasing: value[..<dot]))
        }
    }
}
