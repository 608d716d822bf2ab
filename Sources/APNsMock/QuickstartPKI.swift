#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import PushCore
import PushCrypto

/// The throwaway keys and certificates `swiftpush mock --quickstart DIR` serves with, made
/// in-process with OpenSSL (no `openssl` command needed) and kept in DIR, so that a restarted
/// mock is trusted by whatever was set up against the first one:
///   `ca.pem`                      a test CA (its key is not kept: it signs nothing else)
///   `server.pem`, `server.key`    "localhost", 127.0.0.1 and ::1, issued by that CA
///   `AuthKey_TESTKEY001.p8`       an ES256 token key (PKCS#8 PEM, P-256), like Apple's `.p8`
/// Key id, team id and topic are the ones the README's examples use.
public struct QuickstartPKI: Sendable {
    /// The token key's id (`kid`), as in the README's examples.
    public static let keyID = "TESTKEY001"
    /// The team the token key belongs to (`iss`), as in the README's examples.
    public static let teamID = "TEAM123456"
    /// The topic the README's examples send to (any topic is accepted).
    public static let topic = "com.example.app"

    /// Why the PKI could not be made or read.
    public struct Failure: Error, CustomStringConvertible {
        /// One line naming the step and OpenSSL's or the system's reason.
        public let description: String
    }

    /// The directory, absolute (the exports name files in it from anywhere).
    public let directory: String
    /// True when this call made the CA and the server certificate; false when it found them.
    public let madeCertificates: Bool
    /// True when this call made the token key; false when it found it.
    public let madeTokenKey: Bool

    /// The CA file a client trusts the mock with (`APNS_CA_FILE`).
    public var caFile: String { directory + "/ca.pem" }
    /// The server's certificate (PEM).
    public var serverCertificateFile: String { directory + "/server.pem" }
    /// The server's private key (PEM).
    public var serverKeyFile: String { directory + "/server.key" }
    /// The token key (`APNS_KEY_FILE`); its file name is the one the README's examples open.
    public var tokenKeyFile: String { directory + "/AuthKey_\(Self.keyID).p8" }

    /// Makes `directory` (and its parents) if missing, then whatever of the PKI it lacks: the
    /// CA and the server certificate together (one without the other is remade), the token key
    /// on its own (a key a client already holds stays valid).
    public static func prepare(directory: String) throws(Failure) -> QuickstartPKI {
        try makeDirectories(directory)
        guard let resolved = realpath(directory, nil) else {
            throw Failure(description: "\(directory): \(String(cString: strerror(errno)))")
        }
        let absolute = String(cString: resolved)
        free(resolved)
        let shell = QuickstartPKI(directory: absolute, madeCertificates: false, madeTokenKey: false)
        let certificates = [shell.caFile, shell.serverCertificateFile, shell.serverKeyFile]
        let needCertificates = !certificates.allSatisfy { access($0, R_OK) == 0 }
        let needTokenKey = access(shell.tokenKeyFile, R_OK) != 0
        OpenSSLError.clear()
        if needCertificates { try shell.makeCertificates() }
        if needTokenKey {
            let key = try newKey()
            defer { EVP_PKEY_free(key) }
            try write(pem(key: key), to: shell.tokenKeyFile, mode: 0o600)
        }
        return QuickstartPKI(directory: absolute, madeCertificates: needCertificates, madeTokenKey: needTokenKey)
    }

    /// The CA, then the server certificate it issues; the server's files before the CA's, so
    /// that a half-written set (killed in between) lacks ca.pem and is remade whole next time.
    private func makeCertificates() throws(Failure) {
        let caKey = try Self.newKey()
        defer { EVP_PKEY_free(caKey) }
        let ca = try Self.certificate(commonName: "swiftpush quickstart CA", key: caKey, issuer: nil, extensions: [
            (NID_basic_constraints, "critical,CA:TRUE"),
            (NID_key_usage, "critical,keyCertSign,cRLSign"),
            (NID_subject_key_identifier, "hash"),
        ])
        defer { X509_free(ca) }
        let serverKey = try Self.newKey()
        defer { EVP_PKEY_free(serverKey) }
        let server = try Self.certificate(commonName: "localhost", key: serverKey, issuer: (ca, caKey), extensions: [
            (NID_basic_constraints, "CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth"),
            (NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1,IP:::1"),
            (NID_authority_key_identifier, "keyid:always"),
        ])
        defer { X509_free(server) }
        unlink(caFile)
        try Self.write(Self.pem(key: serverKey), to: serverKeyFile, mode: 0o600)
        try Self.write(Self.pem(certificate: server), to: serverCertificateFile, mode: 0o644)
        try Self.write(Self.pem(certificate: ca), to: caFile, mode: 0o644)
    }

    /// A new P-256 key (ES256's curve).
    private static func newKey() throws(Failure) -> OpaquePointer {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw Failure(description: "EVP_PKEY_CTX_new_from_name: \(OpenSSLError.drain())")
        }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1,
              EVP_PKEY_generate(ctx, &key) == 1, let key else {
            throw Failure(description: "making a P-256 key: \(OpenSSLError.drain())")
        }
        return key
    }

    /// An X.509 v3 certificate for `key`, valid from an hour ago for ten years, signed by
    /// `issuer` (self-signed when nil), with `extensions` as OpenSSL's configuration syntax.
    private static func certificate(commonName: String, key: OpaquePointer, issuer: (certificate: OpaquePointer, key: OpaquePointer)?,
                                    extensions: [(nid: Int32, value: String)]) throws(Failure) -> OpaquePointer {
        guard let x509 = X509_new() else { throw Failure(description: "X509_new: \(OpenSSLError.drain())") }
        var serial: UInt64 = 0
        let name = X509_get_subject_name(x509)
        var ok = X509_set_version(x509, 2) == 1 // X.509 v3
            && withUnsafeMutableBytes(of: &serial, { RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), 8) }) == 1
            && ASN1_INTEGER_set_uint64(X509_get_serialNumber(x509), serial >> 1) == 1 // positive, unique enough
            && X509_gmtime_adj(X509_getm_notBefore(x509), -3600) != nil
            && X509_gmtime_adj(X509_getm_notAfter(x509), 10 * 365 * 86400) != nil
            && X509_set_pubkey(x509, key) == 1
            // The length is given: a Swift array is not NUL-terminated, and -1 (strlen) read past
            // its end (AddressSanitizer, make test-asan).
            && X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, Array(commonName.utf8), Int32(commonName.utf8.count), -1, 0) == 1
            && X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.certificate) } ?? name) == 1
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.certificate ?? x509, x509, nil, nil, 0)
        for (nid, value) in extensions where ok {
            guard let ext = X509V3_EXT_nconf_nid(nil, &context, nid, value) else { ok = false; break }
            ok = X509_add_ext(x509, ext, -1) == 1
            X509_EXTENSION_free(ext)
        }
        guard ok, X509_sign(x509, issuer?.key ?? key, EVP_sha256()) > 0 else {
            X509_free(x509)
            throw Failure(description: "making the certificate for \(commonName): \(OpenSSLError.drain())")
        }
        return x509
    }

    private static func pem(key: OpaquePointer) throws(Failure) -> [UInt8] {
        try pem { bio in PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) } // PKCS#8
    }

    private static func pem(certificate: OpaquePointer) throws(Failure) -> [UInt8] {
        try pem { bio in PEM_write_bio_X509(bio, certificate) }
    }

    private static func pem(_ write: (OpaquePointer) -> Int32) throws(Failure) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { throw Failure(description: "BIO_new: \(OpenSSLError.drain())") }
        defer { BIO_free(bio) }
        var start: UnsafeMutablePointer<CChar>?
        guard write(bio) == 1 else { throw Failure(description: "PEM encoding: \(OpenSSLError.drain())") }
        let count = BIO_ctrl(bio, BIO_CTRL_INFO, 0, &start)
        guard count > 0, let start else { throw Failure(description: "PEM encoding: empty") }
        return start.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
    }

    /// Writes `bytes` to a temporary name and renames it over `path`: a reader never sees half
    /// a file, and a key is never readable by others, even briefly.
    private static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws(Failure) {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "\(temporary): \(String(cString: strerror(errno)))") }
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let failure = written == bytes.count ? 0 : (written < 0 ? errno : EIO)
        close(fd)
        guard failure == 0, rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(failure != 0 ? failure : errno))
            unlink(temporary)
            throw Failure(description: "\(path): \(reason)")
        }
    }

    /// `mkdir -p`: each missing component, private to its owner.
    private static func makeDirectories(_ path: String) throws(Failure) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw Failure(description: "\(prefix): \(String(cString: strerror(errno)))")
            }
            prefix += "/"
        }
    }
}
