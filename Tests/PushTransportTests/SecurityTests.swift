import Foundation
import Testing
import TestProcessSupport
import COpenSSL
import CSwiftPushABI
@testable import PushCore
@testable import PushCrypto
@testable import APNsMock
@testable import PushClientCore
@testable import PushTransport

/// Security (issue #8, item 6):
/// - TLS verification cannot be turned off: there is no option for it (a test the type of the
///   configuration must pass), the client's context always verifies the peer, and without the
///   test CA the mock's certificate is refused. The tests trust a test CA instead of turning
///   verification off.
/// - Private keys and provider tokens (JWTs) never appear in errors, results, stats or the
///   printed configuration.
/// - Key material is cleared when freed: the key PEM, a .p12's bytes and password and the
///   proxy credentials (and the CONNECT request made of them) live in `SecretBytes` (cleared
///   on release), the client keeps only OpenSSL's key (which OpenSSL clears), and the provider
///   token's buffer is cleared too.
/// - The client connects to the configured host (or proxy) and nowhere else: every connection
///   it starts arrives at the mock (or the proxy), and a listener on another port sees none.
///   (Tests/c/run.sh also watches the README example's connect calls with strace.)
@Suite(.serialized, .timeLimit(.minutes(5)))
struct SecurityTests {
    let support = ClientTestSupport()

    // MARK: - Verification is always on

    @Test("No configuration option turns TLS verification off, and the client's context verifies the peer")
    func verificationCannotBeTurnedOff() throws {
        // The configuration's properties are in groups (endpoint, credentials, pool, ...): look
        // inside each group, not just at the groups' names.
        let groups = Mirror(reflecting: ClientConfiguration()).children
        let labels = groups.flatMap { group in
            [group.label] + Mirror(reflecting: group.value).children.map(\.label)
        }.compactMap { $0?.lowercased() }
        #expect(labels.contains("cafile") && labels.contains("maxattempts"), "the groups' properties are seen: \(labels)")
        let suspicious = labels.filter { l in ["verif", "insecure", "skip", "untrusted", "trustall", "nocheck"].contains { l.contains($0) } }
        #expect(suspicious.isEmpty, "an option that may weaken verification must be loudly named and reviewed: \(suspicious)")
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        #expect(SSL_CTX_get_verify_mode(client.tls.ctx) & SSL_VERIFY_PEER != 0)
    }

    @Test("Without the test CA (the system trust store) the mock's certificate is refused")
    func systemTrustStoreRefusesTheTestCA() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port, connections: 1) { $0.endpoint.caFile = nil }
        defer { client.close(drainMillis: 0) }
        let error = client.waitUntilConnected(timeoutMillis: 3000)
        #expect(error?.status == .tls, "\(error?.description ?? "connected")")
        #expect(error?.description.contains("certificate verify failed") == true, "\(error?.description ?? "")")
        #expect(server.stats().requests == 0)
    }

    // MARK: - No secrets in messages

    /// The strings a key or token must never appear in, and the secrets themselves.
    struct SecretScan {
        var forbidden: [String]

        init(keyFile: String, token: String?) throws {
            let pem = try String(contentsOfFile: keyFile, encoding: .utf8)
            forbidden = ["BEGIN", "PRIVATE KEY", "bearer"]
            // Every line of the key's base64 body (its first 16 characters are plenty).
            for line in pem.split(separator: "\n") where !line.hasPrefix("-----") && line.count >= 16 {
                forbidden.append(String(line.prefix(16)))
            }
            if let token {
                let jwt = token.hasPrefix("bearer ") ? String(token.dropFirst(7)) : token
                forbidden.append(jwt)
                if let signature = jwt.split(separator: ".").last { forbidden.append(String(signature.prefix(24))) }
            }
            // The key as a printed [UInt8] ("45, 45, 45, 45, 45, 66, 69, 71, 73, 78" is "-----BEGIN").
            forbidden.append(Array("-----BEGIN".utf8).map(String.init).joined(separator: ", "))
        }

        func leaks(in text: String) -> [String] { forbidden.filter { text.contains($0) } }
    }

    func string<T>(_ field: T) -> String {
        var copy = field
        return withUnsafeBytes(of: &copy) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    @Test("Errors, results, stats and the printed configuration never contain the key PEM or the JWT")
    func noSecretsInMessages() throws {
        let pki = support.pki
        let keyFile = pki + "/AuthKey_TESTKEY001.p8"
        var texts: [String] = []

        // A key id the server does not know: every notification is rejected.
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port) { $0.credentials.keyID = "WRONGKEY01" }
        let jwt = client.token.map { String(decoding: $0.headerValue, as: UTF8.self) }
        #expect(jwt?.hasPrefix("bearer ") == true)
        let results = support.sendAll(client, count: 20)
        #expect(results.count == 20 && results.allSatisfy { $0.outcome == 2 && $0.status == 403 }, "all rejected")
        texts += results.map(\.reasonText)
        var s = client.stats()
        texts += [string(s.last_connection_error), string(s.last_goaway_reason)]
        texts.append(String(describing: client.configuration))
        client.close(drainMillis: 0)
        s = client.stats()
        texts += [string(s.last_connection_error), string(s.last_goaway_reason)]

        // Keys that cannot be used, and a configuration printed whole.
        let pem = try FileBytes.read(path: keyFile, limit: 65536)
        var corrupt = pem
        corrupt[40] = UInt8(ascii: "*")
        var configuration = ClientConfiguration()
        configuration.credentials.tokenKeyPEM = pem
        configuration.credentials.keyID = "TESTKEY001"
        configuration.credentials.teamID = "TEAM123456"
        configuration.credentials.clientCertificate = .pkcs12(bytes: try FileBytes.readSecret(path: pki + "/client.p12", limit: 1 << 20), password: SecretBytes(copying: "secret"))
        configuration.endpoint.proxy = ("127.0.0.1", 3128)
        configuration.endpoint.proxyCredentials = SecretBytes(copying: "alice:pr0xyPassw0rd")
        texts.append(String(describing: configuration))
        texts.append(String(reflecting: configuration))
        var dump = ""
        Swift.dump(configuration, to: &dump)
        texts.append(dump)
        for (change, what) in [({ (c: inout ClientConfiguration) in c.credentials.tokenKeyPEM = corrupt; c.credentials.clientCertificate = nil }, "corrupt key"),
                               ({ c in c.credentials.tokenKeyPEM = Array(pem.prefix(pem.count / 2)); c.credentials.clientCertificate = nil }, "truncated key"),
                               ({ c in c.credentials.tokenKeyPEM = try? FileBytes.read(path: pki + "/rsa.key", limit: 65536); c.credentials.clientCertificate = nil }, "RSA key"),
                               ({ c in c.credentials.keyID = "BAD \"ID\""; c.credentials.clientCertificate = nil }, "bad key id"),
                               ({ _ in }, "key and certificate")] as [((inout ClientConfiguration) -> Void, String)] {
            var c = configuration
            change(&c)
            do {
                let opened = try PushClient(configuration: c)
                opened.close(drainMillis: 0)
                Issue.record("\(what): opened")
            } catch {
                texts.append(error.description)
            }
        }
        do {
            _ = try SigningKey(pem: corrupt)
            Issue.record("corrupt key loaded")
        } catch {
            texts.append(error.description)
        }

        // A TLS failure (a server the client must not trust).
        let untrusted = try support.startMock { $0.certificateChainFile = pki + "/untrusted-server.pem"; $0.privateKeyFile = pki + "/untrusted-server.key" }
        defer { untrusted.stop() }
        let refused = try support.makeClient(port: untrusted.port, connections: 1)
        if let e = refused.waitUntilConnected(timeoutMillis: 3000) { texts.append(e.description) }
        _ = support.send(refused, count: 1)
        texts += support.collect(refused, count: 1, idleMillis: 3000).map(\.reasonText)
        texts.append(string(refused.stats().last_connection_error))
        refused.close(drainMillis: 0)

        let scan = try SecretScan(keyFile: keyFile, token: jwt)
        #expect(texts.count > 30)
        for text in texts {
            #expect(scan.leaks(in: text).isEmpty, "\(scan.leaks(in: text)) in: \(text)")
        }
        #expect(!dump.contains("secret"), "the .p12 password is not printed: \(dump)")
        #expect(!dump.contains("pr0xyPassw0rd"), "the proxy password is not printed: \(dump)")
    }

    // MARK: - Key material is cleared

    @Test("SecretBytes overwrites its bytes with zeros when released")
    func secretBytesAreClearedOnRelease() {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 300, alignment: 16)
        defer { buffer.deallocate() }
        for i in 0..<buffer.count { buffer[i] = UInt8(truncatingIfNeeded: i | 0x80) }
        do {
            let secret = SecretBytes(adopting: buffer, count: 250, deallocate: false)
            #expect(secret.count == 250)
            #expect(secret.withUnsafeBytes { $0.allSatisfy { $0 != 0 } })
            #expect(secret.description == "SecretBytes(250 bytes)")
        }
        #expect(buffer.allSatisfy { $0 == 0 }, "every byte of the buffer was cleared")
    }

    @Test("Secrets are made in place, compared, and lent as C strings from cleared memory")
    func secretBytesHelpers() {
        let password = SecretBytes(copying: "pässword")
        #expect(password.count == 9 && password.isValidUTF8)
        #expect(password.sameBytes(as: SecretBytes(copying: Array("pässword".utf8))))
        #expect(!password.sameBytes(as: SecretBytes(copying: "password")))
        #expect(password.withCString { String(cString: $0) } == "pässword")
        #expect(SecretBytes(copying: [0xC3, 0x28]).isValidUTF8 == false)
        #expect(SecretBytes(copying: "").withCString { $0.pointee } == 0)
        let written = SecretBytes.writing(capacity: 8) { out in
            out[0] = 0x41; out[1] = 0x42
            return 2
        }
        #expect(written.arrayCopy == [0x41, 0x42])
    }

    @Test("The proxy's CONNECT request carries the credentials as standard base64, and only with credentials")
    func connectRequestBytes() {
        let plain = PushClient.connectRequest(host: "api.push.apple.com", port: 443, credentials: nil)
        #expect(String(decoding: plain.arrayCopy, as: UTF8.self)
                == "CONNECT api.push.apple.com:443 HTTP/1.1\r\nHost: api.push.apple.com:443\r\n\r\n")
        for credentials in ["alice:s3cret", "a:", "bob:pw1", "üser:pässwörd with spaces"] {
            let request = PushClient.connectRequest(host: "::1", port: 8443, credentials: SecretBytes(copying: credentials))
            #expect(String(decoding: request.arrayCopy, as: UTF8.self)
                    == "CONNECT [::1]:8443 HTTP/1.1\r\nHost: [::1]:8443\r\nProxy-Authorization: Basic "
                    + Data(credentials.utf8).base64EncodedString() + "\r\n\r\n", "\(credentials)")
        }
    }

    @Test("A key read with FileBytes.readSecret signs tokens; a file over the limit is refused")
    func readSecretLoadsKeys() throws {
        let pki = support.pki
        let secret = try FileBytes.readSecret(path: pki + "/AuthKey_TESTKEY001.p8", limit: 65536)
        #expect(secret.arrayCopy == (try FileBytes.read(path: pki + "/AuthKey_TESTKEY001.p8", limit: 65536)))
        let key = try SigningKey(pem: secret)
        #expect(Array("header.claims".utf8).withUnsafeBytes { key.signES256($0) }?.count == 64)
        #expect(throws: FileBytes.ReadError.self) { try FileBytes.readSecret(path: pki + "/rsa.key", limit: 100) }
        #expect(throws: FileBytes.ReadError.self) { try FileBytes.readSecret(path: pki + "/nonexistent.p8", limit: 100) }
        #expect(throws: FileBytes.ReadError.self) { try FileBytes.readSecret(path: pki, limit: 100) }
    }

    @Test("An open client keeps neither the key PEM nor the client certificate, and still works")
    func clientDropsCredentialsAfterOpening() throws {
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port)
        defer { client.close(drainMillis: 0) }
        #expect(client.configuration.credentials.tokenKey == nil)
        #expect(client.configuration.credentials.clientCertificate == nil)
        #expect(support.sendAll(client, count: 10).allSatisfy { $0.outcome == 1 }, "and it still works")

        let pki = support.pki
        let certificateServer = try support.startMock { $0.clientCAFile = pki + "/ca.pem"; $0.tokenKeys = [] }
        defer { certificateServer.stop() }
        let p12 = try support.makeClient(port: certificateServer.port) {
            $0.credentials.tokenKeyPEM = nil
            $0.credentials.clientCertificate = .pkcs12(bytes: try! FileBytes.readSecret(path: pki + "/client.p12", limit: 1 << 20), password: SecretBytes(copying: "secret"))
        }
        defer { p12.close(drainMillis: 0) }
        #expect(p12.configuration.credentials.clientCertificate == nil)
        #expect(support.sendAll(p12, count: 10).allSatisfy { $0.outcome == 1 }, "the certificate lives on in OpenSSL's context")
    }

    // MARK: - Connections only to the configured host

    /// A listening socket on loopback that nothing should connect to.
    final class Decoy {
        let fd: Int32
        let port: Int

        init() throws {
            let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &a) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(s, $0, length) == 0 && listen(s, 16) == 0 && getsockname(s, $0, &length) == 0
                }
            }
            guard s >= 0, ok else { throw ScriptServerError(description: "decoy listener: \(String(cString: strerror(errno)))") }
            fd = s
            port = Int(UInt16(bigEndian: a.sin_port))
        }

        /// Connections that arrived (accepted and closed here).
        func arrivals() -> Int {
            var n = 0
            while true {
                let c = accept(fd, nil, nil)
                if c < 0 { return n }
                close(c)
                n += 1
            }
        }

        deinit { close(fd) }
    }

    @Test("Every connection the client starts arrives at the configured host; a listener on another port sees none")
    func connectsOnlyToTheConfiguredHost() throws {
        let decoy = try Decoy()
        let server = try support.startMock()
        defer { server.stop() }
        let client = try support.makeClient(port: server.port, connections: 3)
        let results = support.sendAll(client, count: 500)
        client.close(drainMillis: 1000)
        #expect(results.count == 500 && results.allSatisfy { $0.outcome == 1 })
        let started = client.stats().connections_started
        #expect(started == 3)
        #expect(UInt64(server.stats().connections) == started, "mock accepted \(server.stats().connections), client started \(started)")
        #expect(decoy.arrivals() == 0)
    }

    @Test("With a proxy, every connection goes to the proxy, and through it to the configured host only")
    func connectsOnlyThroughTheProxy() throws {
        let decoy = try Decoy()
        let server = try support.startMock()
        defer { server.stop() }
        let dir = NSTemporaryDirectory() + "swiftpush-security-proxy-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let proxy = try ChildProcess("/usr/bin/env", ["python3", ClientTestSupport.root.appendingPathComponent("Tests/support/connect_proxy.py").path,
                                                       dir + "/port", "--log", dir + "/log"], stderr: .inherited)
        defer { proxy.kill() }
        waitUntil(seconds: 10) { FileManager.default.fileExists(atPath: dir + "/port") }
        let proxyPort = try #require(TestFiles.readText(dir + "/port").flatMap { Int($0) })

        let client = try support.makeClient(port: server.port, connections: 2) { $0.endpoint.proxy = ("127.0.0.1", proxyPort) }
        let results = support.sendAll(client, count: 200)
        client.close(drainMillis: 1000)
        #expect(results.count == 200 && results.allSatisfy { $0.outcome == 1 })
        let started = client.stats().connections_started
        let tunnels = (TestFiles.readText(dir + "/log") ?? "").split(separator: "\n")
        #expect(started == 2)
        #expect(UInt64(tunnels.count) == started, "one tunnel per connection: \(tunnels)")
        #expect(tunnels.allSatisfy { $0 == "localhost:\(server.port)" }, "tunnels only to the configured host: \(tunnels)")
        #expect(UInt64(server.stats().connections) == started)
        #expect(decoy.arrivals() == 0)
    }
}
