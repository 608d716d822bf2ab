import COpenSSL
import PushCore
import PushCrypto

/// A TLS client certificate for certificate-based authentication: PEM files, or a PKCS#12
/// (`.p12`) bundle with its password. Apple issues one per app (apns.md, "Certificate
/// authentication"); with it, requests carry no `authorization` header.
public enum ClientCertificate: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A PEM certificate chain and its PEM private key (may be the same file).
    case pem(certificateFile: String, keyFile: String)
    /// A PKCS#12 bundle (its bytes) and the password that opens it: both secrets, held in
    /// memory that is cleared when freed (read a `.p12` with `FileBytes.readSecret`).
    case pkcs12(bytes: SecretBytes, password: SecretBytes)

    /// Equal when the files are the same, or the bundles and passwords hold the same bytes.
    public static func == (a: ClientCertificate, b: ClientCertificate) -> Bool {
        switch (a, b) {
        case let (.pem(c1, k1), .pem(c2, k2)): return c1 == c2 && k1 == k2
        case let (.pkcs12(b1, p1), .pkcs12(b2, p2)): return b1.sameBytes(as: b2) && p1.sameBytes(as: p2)
        default: return false
        }
    }

    /// Shown instead of the case's values: a .p12's bytes hold the private key and its
    /// password opens them, so neither may end up in a log line that prints a configuration.
    public var description: String {
        switch self {
        case .pem(let certificateFile, let keyFile): return "pem(certificateFile: \(certificateFile), keyFile: \(keyFile))"
        case .pkcs12(let bytes, _): return "pkcs12(\(bytes.count) bytes, password: <redacted>)"
        }
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["description": description]) }

    /// Checks that the certificate and key load and match, without keeping them.
    public func validate() throws(TransportError) {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw TransportError(.tls, OpenSSLError.drain()) }
        defer { SSL_CTX_free(ctx) }
        try install(in: ctx)
    }

    /// Loads the certificate and key into `ctx` and checks that they belong together.
    func install(in ctx: OpaquePointer) throws(TransportError) {
        OpenSSLError.clear()
        switch self {
        case .pem(let certificateFile, let keyFile):
            // No password to give: OpenSSL's default callback would prompt on the process's
            // terminal for an encrypted key, and wait (Tests/fuzz/corpus/keys/regression-pem-encrypted-key).
            SSL_CTX_set_default_passwd_cb(ctx) { _, _, _, _ in -1 }
            guard SSL_CTX_use_certificate_chain_file(ctx, certificateFile) == 1 else {
                throw TransportError(.tls, "cannot load client certificate \(certificateFile): " + OpenSSLError.drain())
            }
            guard SSL_CTX_use_PrivateKey_file(ctx, keyFile, SSL_FILETYPE_PEM) == 1 else {
                throw TransportError(.tls, "client key \(keyFile) cannot be loaded or does not match the certificate: " + OpenSSLError.drain())
            }
        case .pkcs12(let bytes, let password):
            let p12 = try Self.decodePKCS12(bytes)
            defer { PKCS12_free(p12) }
            var key: OpaquePointer?
            var cert: OpaquePointer?
            var chain: OpaquePointer?
            let opened = password.withCString { PKCS12_parse(p12, $0, &key, &cert, &chain) }
            guard opened == 1, let key, let cert else {
                OpenSSLError.clear()
                throw TransportError(.tls, "cannot open the .p12 file: wrong password, or no certificate and key in it")
            }
            defer {
                EVP_PKEY_free(key)
                X509_free(cert)
                if let chain { OPENSSL_sk_pop_free(chain, { X509_free(OpaquePointer($0)) }) }
            }
            guard SSL_CTX_use_certificate(ctx, cert) == 1, SSL_CTX_use_PrivateKey(ctx, key) == 1 else {
                throw TransportError(.tls, "cannot use the .p12 certificate: " + OpenSSLError.drain())
            }
            if let chain {
                for i in 0..<OPENSSL_sk_num(chain) {
                    guard let extra = OPENSSL_sk_value(chain, i) else { continue }
                    X509_up_ref(OpaquePointer(extra))
                    if swiftpush_ssl_ctx_add0_chain_cert(ctx, OpaquePointer(extra)) != 1 { X509_free(OpaquePointer(extra)) }
                }
            }
        }
        guard SSL_CTX_check_private_key(ctx) == 1 else {
            throw TransportError(.tls, "the client certificate does not match its private key")
        }
    }

    /// Decodes a PKCS#12 structure without opening it (no password needed); the caller frees
    /// it with PKCS12_free. d2i_PKCS12 copies what it needs; the key inside is still encrypted
    /// there (the decrypted one is cleared by EVP_PKEY_free).
    package static func decodePKCS12(_ bytes: SecretBytes) throws(TransportError) -> OpaquePointer {
        OpenSSLError.clear()
        let p12: OpaquePointer? = bytes.withUnsafeBytes { raw in
            var p = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) as UnsafePointer<UInt8>?
            return d2i_PKCS12(nil, &p, raw.count)
        }
        guard let p12 else { throw TransportError(.tls, "not a PKCS#12 (.p12) file: " + OpenSSLError.drain()) }
        return p12
    }
}
