import COpenSSL
import Foundation // dlsym
import PushCore
import PushCrypto
import PushTransport
import Synchronization
import Testing

/// Inputs that broke a property of the `keys` fuzz harness (Tests/fuzz) before the fix: OpenSSL
/// must never ask the terminal for a password. Both loaders are here, in one serialized suite,
/// because the check replaces OpenSSL's process-wide default UI method for its duration.
@Suite("Password prompt fuzz regressions", .serialized, .timeLimit(.minutes(5)))
struct PasswordPromptFuzzRegressionTests {
    let support = ClientTestSupport()

    /// Found reading the loader for the `keys` harness, confirmed under a terminal
    /// (`script -qc "FuzzTesting/.build/debug/FuzzKeys Tests/fuzz/corpus/keys/regression-p8-encrypted"`):
    /// SigningKey passed no password callback, so OpenSSL's default one printed "Enter PEM pass
    /// phrase:" on the host process's terminal and waited for someone to type.
    @Test("An encrypted .p8 is refused with a LoadError, without asking the terminal for a password")
    func encryptedTokenKeyNeverPrompts() throws {
        let pem = try encryptedPEM(keyFile: support.pki + "/AuthKey_TESTKEY001.p8")
        let prompts = try OpenSSLPasswordPrompts.counting {
            #expect(throws: SigningKey.LoadError.self) { try SigningKey(pem: pem) }
        }
        #expect(prompts == 0)
    }

    /// The same for ClientCertificate (`script -qc "FuzzTesting/.build/debug/FuzzKeys
    /// Tests/fuzz/corpus/keys/regression-pem-encrypted-key"`): SSL_CTX_use_PrivateKey_file used
    /// the context's default password callback, OpenSSL's.
    @Test("A PEM certificate with an encrypted key is refused without asking the terminal for a password")
    func encryptedCertificateKeyNeverPrompts() throws {
        let dir = NSTemporaryDirectory() + "swiftpush-encrypted-key-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let keyFile = dir + "/client-encrypted.key"
        try Data(encryptedPEM(keyFile: support.pki + "/client.key")).write(to: URL(fileURLWithPath: keyFile))
        let certificate = ClientCertificate.pem(certificateFile: support.pki + "/client.pem", keyFile: keyFile)
        let prompts = try OpenSSLPasswordPrompts.counting {
            #expect(throws: TransportError.self) { try certificate.validate() }
        }
        #expect(prompts == 0)
    }

    /// Noticed with the two above: the mock's server context loaded its key the same way.
    @Test("A server (mock) key that is encrypted is refused without asking the terminal for a password")
    func encryptedServerKeyNeverPrompts() throws {
        let dir = NSTemporaryDirectory() + "swiftpush-encrypted-server-key-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let keyFile = dir + "/server-encrypted.key"
        try Data(encryptedPEM(keyFile: support.pki + "/server.key")).write(to: URL(fileURLWithPath: keyFile))
        let prompts = try OpenSSLPasswordPrompts.counting {
            #expect(throws: TransportError.self) {
                _ = try TLSContext.server(certificateChainFile: support.pki + "/server.pem", keyFile: keyFile)
            }
        }
        #expect(prompts == 0)
    }

    /// The PEM key in `keyFile`, encrypted (PKCS#8, AES-256, password "pw").
    private func encryptedPEM(keyFile: String) throws -> [UInt8] {
        let pem = try FileBytes.read(path: keyFile, limit: 1 << 16)
        let key = try #require(pem.withUnsafeBytes { raw -> OpaquePointer? in
            let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count))
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        })
        defer { EVP_PKEY_free(key) }
        let out = try #require(BIO_new(BIO_s_mem()))
        defer { BIO_free(out) }
        #expect(PEM_write_bio_PKCS8PrivateKey(out, key, EVP_aes_256_cbc(), "pw", 2, nil, nil) == 1)
        var ptr: UnsafeMutablePointer<CChar>?
        let n = BIO_ctrl(out, BIO_CTRL_INFO, 0, &ptr)
        return Array(UnsafeRawBufferPointer(start: try #require(ptr), count: n))
    }
}

/// Counts OpenSSL's attempts to read a password from the user: its default UI method (the one
/// PEM_def_callback uses, reading the terminal) is replaced for the duration by one that counts
/// and cancels. The UI functions are not in the COpenSSL module map, so they are looked up.
/// The method is process-wide: only the serialized suite above may use this (the test process
/// holds every test target).
enum OpenSSLPasswordPrompts {
    private static let attempts = Atomic<Int>(0)

    private typealias Reader = @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32
    private typealias CreateMethod = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
    private typealias SetReader = @convention(c) (OpaquePointer?, Reader?) -> Int32
    private typealias GetDefault = @convention(c) () -> OpaquePointer?
    private typealias SetDefault = @convention(c) (OpaquePointer?) -> Void
    private typealias DestroyMethod = @convention(c) (OpaquePointer?) -> Void

    static func counting(_ body: () throws -> Void) throws -> Int {
        let process = dlopen(nil, RTLD_NOW)
        func symbol<T>(_ name: String, _ type: T.Type) throws -> T {
            unsafeBitCast(try #require(dlsym(process, name), "\(name) not found"), to: type)
        }
        let create = try symbol("UI_create_method", CreateMethod.self)
        let setReader = try symbol("UI_method_set_reader", SetReader.self)
        let getDefault = try symbol("UI_get_default_method", GetDefault.self)
        let setDefault = try symbol("UI_set_default_method", SetDefault.self)
        let destroy = try symbol("UI_destroy_method", DestroyMethod.self)
        let method = try #require(create("counting"))
        _ = setReader(method) { _, _ in
            OpenSSLPasswordPrompts.attempts.add(1, ordering: .relaxed)
            return -1 // cancel
        }
        let previous = getDefault()
        let before = attempts.load(ordering: .relaxed)
        setDefault(method)
        defer {
            setDefault(previous)
            destroy(method)
        }
        try body()
        return attempts.load(ordering: .relaxed) - before
    }
}
