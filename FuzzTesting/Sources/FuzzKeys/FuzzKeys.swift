#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import FuzzSupport
import PushCore
import PushCrypto
import PushTransport

// The credential loaders over arbitrary bytes: `.p8` token keys (SigningKey(pem:)), `.p12`
// bundles with a fuzzed password and PEM certificate + key files (ClientCertificate.validate).
// The first byte picks the loader. Properties:
// - a refusal carries a message (and, for certificates, is a TLS error);
// - a key that loads signs: its ES256 signature is 64 bytes and verifies under the public key
//   it reports.

func fuzzKeys(_ bytes: UnsafeRawBufferPointer) {
    var input = FuzzInput(bytes)
    switch input.choose(3) {
    case 0: checkSigningKey(input.rest())
    case 1:
        let password = SecretBytes(copying: String(decoding: input.bytes(max: 128), as: UTF8.self))
        checkCertificate(.pkcs12(bytes: SecretBytes(copying: input.rest()), password: password))
    default:
        let sameFile = input.bool()
        let certificate = input.bytes(max: 16384)
        let key = input.rest()
        write(certificate, to: FuzzFiles.certificate)
        if !sameFile { write(key, to: FuzzFiles.key) }
        checkCertificate(.pem(certificateFile: FuzzFiles.certificate, keyFile: sameFile ? FuzzFiles.certificate : FuzzFiles.key))
    }
}

private func checkSigningKey(_ pem: [UInt8]) {
    let key: SigningKey
    do throws(SigningKey.LoadError) {
        key = try SigningKey(pem: pem)
    } catch {
        return fuzzRequire(!error.description.isEmpty, "key refused without a message")
    }
    let message = Array("fuzz.signing.input".utf8)
    guard let signature = message.withUnsafeBytes({ key.signES256($0) }) else { return fuzzRequire(false, "a loaded key cannot sign") }
    fuzzRequire(signature.count == 64, "signature is \(signature.count) bytes")
    fuzzRequire(verify(signature, of: message, publicKeyPEM: key.publicKeyPEM()), "signature does not verify under the key's public half")
}

private func checkCertificate(_ certificate: ClientCertificate) {
    do throws(TransportError) {
        try certificate.validate()
    } catch {
        fuzzRequire(error.kind == .tls && !error.description.isEmpty, "certificate refused with \(error.kind) \(error.description)")
    }
}

/// ES256 verification with OpenSSL directly (the library only signs).
private func verify(_ raw: [UInt8], of message: [UInt8], publicKeyPEM: [UInt8]) -> Bool {
    guard let der = ECDSASignature.rawToDER(raw) else { return false }
    let pkey: OpaquePointer? = publicKeyPEM.withUnsafeBytes { pem in
        guard let bio = BIO_new_mem_buf(pem.baseAddress, Int32(pem.count)) else { return nil }
        defer { BIO_free(bio) }
        return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
    }
    guard let pkey else { return false }
    defer { EVP_PKEY_free(pkey) }
    guard let ctx = EVP_MD_CTX_new() else { return false }
    defer { EVP_MD_CTX_free(ctx) }
    guard EVP_DigestVerifyInit(ctx, nil, EVP_sha256(), nil, pkey) == 1 else { return false }
    return EVP_DigestVerify(ctx, der, der.count, message, message.count) == 1
}

/// Files in a private temporary directory for the PEM loader, which reads paths.
private enum FuzzFiles {
    static let directory: String = {
        var template = Array(((getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/swiftpush-fuzz-keys-XXXXXX").utf8CString)
        guard let dir = mkdtemp(&template) else { fatalError("mkdtemp: \(String(cString: strerror(errno)))") }
        let path = String(cString: dir)
        atexit { _ = unlink(FuzzFiles.certificate); _ = unlink(FuzzFiles.key); _ = rmdir(FuzzFiles.directory) }
        return path
    }()
    static let certificate = directory + "/cert.pem"
    static let key = directory + "/key.pem"
}

private func write(_ bytes: [UInt8], to path: String) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    guard fd >= 0 else { fatalError("open \(path): \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var done = 0
    while done < bytes.count {
        let n = bytes[done...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { fatalError("write \(path): \(String(cString: strerror(errno)))") }
        done += n
    }
}

@main enum FuzzKeysMain {
    static func main() {
        PasswordPrompts.forbid()
        FuzzMain.run(fuzzKeys)
    }
}
